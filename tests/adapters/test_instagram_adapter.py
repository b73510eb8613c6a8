"""The Instagram adapter's long-lived token, Graph error classes, metrics, health and delete."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC
from datetime import datetime
from typing import Any

import httpx
import pytest
import respx

from pressroom.channels.adapters import adapter_services
from pressroom.config import Settings
from pressroom.providers.adapter import ProviderError
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.instagram import InstagramAdapter
from pressroom.providers.registry import adapter_for
from pressroom.runtime import Runtime

from .instagram_support import CREDENTIALS
from .instagram_support import DAY
from .instagram_support import GRAPH
from .instagram_support import IG_USER
from .instagram_support import MEDIA_ID
from .instagram_support import NOW
from .instagram_support import graph_error
from .instagram_support import query
from .instagram_support import signed_url
from .support import CredentialsLog
from .support import RecordedSleep
from .support import channel
from .support import fixed_clock

REFRESH_URL = "https://graph.instagram.com/refresh_access_token"
ME = f"{GRAPH}/me"
PUBLISHED_AT = datetime(2026, 11, 22, 9, 30, tzinfo=UTC)


@pytest.fixture
def log() -> CredentialsLog:
    return CredentialsLog()


@pytest.fixture
async def adapter(log: CredentialsLog) -> AsyncIterator[InstagramAdapter]:
    adapter = InstagramAdapter(
        media_url=signed_url,
        on_credentials_changed=log,
        graph_version="v24.0",
        credential_cache=CredentialCache(),
        sleep=RecordedSleep(),
        clock=fixed_clock,
    )
    yield adapter
    await adapter.aclose()


def ig(**changes: Any) -> Any:
    return channel("instagram", {**CREDENTIALS, **changes}, "@pressroom")


def me_answer() -> httpx.Response:
    return httpx.Response(200, json={"user_id": IG_USER, "username": "pressroom"})


def refreshed(token: str = "IGAA-long-2") -> httpx.Response:
    return httpx.Response(
        200, json={"access_token": token, "token_type": "bearer", "expires_in": 5184000}
    )


# --- the long-lived token ---------------------------------------------------------------------


async def test_a_token_in_the_second_half_of_its_life_is_refreshed_and_reported(
    network: respx.MockRouter, adapter: InstagramAdapter, log: CredentialsLog
) -> None:
    refresh = network.get(REFRESH_URL).mock(return_value=refreshed())
    me = network.get(ME).mock(return_value=me_answer())
    health = await adapter.check_health(ig(expiresAt=NOW + 20 * DAY))

    assert query(refresh.calls[0].request) == {
        "grant_type": "ig_refresh_token",
        "access_token": "IGAA-long-1",
    }
    assert me.calls[0].request.headers["Authorization"] == "Bearer IGAA-long-2"
    assert log.reports == [
        {
            **CREDENTIALS,
            "accessToken": "IGAA-long-2",
            "expiresAt": NOW + 5184000,
            "refreshableAt": NOW + DAY,
        }
    ]
    assert health.state == "healthy"


async def test_a_token_not_yet_a_day_old_is_not_refreshed(
    network: respx.MockRouter, adapter: InstagramAdapter, log: CredentialsLog
) -> None:
    network.get(ME).mock(return_value=me_answer())
    health = await adapter.check_health(ig(expiresAt=None, refreshableAt=NOW + 3600))
    assert (health.state, log.reports) == ("healthy", [])


async def test_a_token_of_unknown_age_is_refreshed_once_it_may_be(
    network: respx.MockRouter, adapter: InstagramAdapter, log: CredentialsLog
) -> None:
    network.get(REFRESH_URL).mock(return_value=refreshed())
    network.get(ME).mock(return_value=me_answer())
    await adapter.check_health(ig(expiresAt=None, refreshableAt=NOW - 60))
    assert log.reports[0]["expiresAt"] == NOW + 5184000


async def test_an_expired_token_asks_for_a_reconnect_without_calling_instagram(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    health = await adapter.check_health(ig(expiresAt=NOW - 60))
    assert health.state == "reconnect_required"
    assert "expired on 2026-11-22 09:29 UTC" in (health.reason or "")


async def test_a_token_expiring_soon_that_instagram_would_not_refresh_asks_for_a_reconnect(
    network: respx.MockRouter, adapter: InstagramAdapter, log: CredentialsLog
) -> None:
    network.get(REFRESH_URL).mock(
        return_value=graph_error(500, 1, "An unknown error has occurred.", is_transient=True)
    )
    me = network.get(ME).mock(return_value=me_answer())
    health = await adapter.check_health(ig(expiresAt=NOW + 3 * DAY))
    # The token still works: it was used.
    assert me.calls[0].request.headers["Authorization"] == "Bearer IGAA-long-1"
    assert health.state == "reconnect_required"
    assert "expires on 2026-11-25" in (health.reason or "")
    assert "An unknown error has occurred" in (health.reason or "")
    assert log.reports == []


async def test_a_revoked_token_asks_for_a_reconnect(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    network.get(ME).mock(
        return_value=graph_error(
            400,
            190,
            "Error validating access token: The user has not authorized application 9906.",
            458,
        )
    )
    health = await adapter.check_health(ig())
    assert health.state == "reconnect_required"
    assert "has not authorized application" in (health.reason or "")


async def test_health_of_a_working_account_reads_me(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    me = network.get(ME).mock(return_value=me_answer())
    assert (await adapter.check_health(ig())).state == "healthy"
    assert query(me.calls[0].request) == {"fields": "user_id,username"}


# --- Graph error classes ----------------------------------------------------------------------


def insights_error(response: httpx.Response, network: respx.MockRouter) -> None:
    network.get(f"{GRAPH}/{MEDIA_ID}").mock(
        return_value=httpx.Response(200, json={"media_product_type": "FEED", "id": MEDIA_ID})
    )
    network.get(f"{GRAPH}/{MEDIA_ID}/insights").mock(return_value=response)


@pytest.mark.parametrize(
    ("response", "code", "retryable"),
    [
        (graph_error(400, 190, "Error validating access token", 463), "auth_expired", False),
        (graph_error(403, 10, "Application does not have permission"), "permission_denied", False),
        (graph_error(403, 200, "Permissions error"), "permission_denied", False),
        (graph_error(400, 4, "We restrict certain activity", 2207051), "permission_denied", False),
        (graph_error(400, 25, "The account is restricted", 2207050), "permission_denied", False),
        (graph_error(400, 17, "User request limit reached"), "rate_limited", True),
        (graph_error(500, 2, "Service temporarily unavailable"), "provider_unavailable", True),
        (graph_error(400, -1, "Instagram server error", 2207001), "provider_unavailable", True),
        (graph_error(400, 100, "Oops", is_transient=True), "provider_unavailable", True),
        (graph_error(400, 36000, "The image size is too large.", 2207004), "media_rejected", False),
        (graph_error(400, 100, "The caption is too long"), "text_rejected", False),
        (graph_error(400, 100, "Object does not exist", 33), "not_found", False),
        (graph_error(400, 100, "Invalid parameter"), "invalid_request", False),
    ],
)
async def test_graph_errors_are_classified_from_code_and_subcode(
    network: respx.MockRouter,
    adapter: InstagramAdapter,
    response: httpx.Response,
    code: str,
    retryable: bool,
) -> None:
    insights_error(response, network)
    with pytest.raises(ProviderError) as caught:
        await adapter.fetch_metrics(ig(), MEDIA_ID, PUBLISHED_AT)
    assert (caught.value.code, caught.value.retryable) == (code, retryable)
    message = json.loads(response.content)["error"]["message"]
    assert message in caught.value.message


async def test_a_rate_limit_waits_as_long_as_the_usage_header_says(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    usage = {
        IG_USER: [{"type": "instagram", "call_count": 100, "estimated_time_to_regain_access": 7}]
    }
    response = graph_error(400, 80002, "There have been too many calls to this Instagram account")
    response.headers["X-Business-Use-Case-Usage"] = json.dumps(usage)
    insights_error(response, network)
    with pytest.raises(ProviderError) as caught:
        await adapter.fetch_metrics(ig(), MEDIA_ID, PUBLISHED_AT)
    assert (caught.value.code, caught.value.retry_after) == ("rate_limited", 420)


async def test_the_token_never_appears_in_an_error_message(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    insights_error(graph_error(400, 100, "Bad token IGAA-long-1 in request"), network)
    with pytest.raises(ProviderError) as caught:
        await adapter.fetch_metrics(ig(), MEDIA_ID, PUBLISHED_AT)
    assert "IGAA-long-1" not in caught.value.message


# --- metrics ----------------------------------------------------------------------------------


def insights(values: dict[str, int]) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "data": [
                {
                    "name": name,
                    "period": "lifetime",
                    "values": [{"value": value}],
                    "title": name.title(),
                    "id": f"{MEDIA_ID}/insights/{name}/lifetime",
                }
                for name, value in values.items()
            ]
        },
    )


async def test_feed_insights_map_to_the_canonical_metrics(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    kind = network.get(f"{GRAPH}/{MEDIA_ID}").mock(
        return_value=httpx.Response(200, json={"media_product_type": "FEED", "id": MEDIA_ID})
    )
    read = network.get(f"{GRAPH}/{MEDIA_ID}/insights").mock(
        return_value=insights(
            {"reach": 120, "views": 300, "likes": 14, "comments": 3, "saved": 5, "shares": 2}
        )
    )
    metrics = await adapter.fetch_metrics(ig(), MEDIA_ID, PUBLISHED_AT)
    assert query(kind.calls[0].request) == {"fields": "media_product_type"}
    assert query(read.calls[0].request) == {"metric": "reach,views,likes,comments,saved,shares"}
    assert metrics == {
        "reach": 120,
        "views": 300,
        "likes": 14,
        "comments": 3,
        "saves": 5,
        "shares": 2,
    }


async def test_a_story_is_asked_only_the_metrics_stories_have(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    network.get(f"{GRAPH}/{MEDIA_ID}").mock(
        return_value=httpx.Response(200, json={"media_product_type": "STORY", "id": MEDIA_ID})
    )
    read = network.get(f"{GRAPH}/{MEDIA_ID}/insights").mock(
        return_value=httpx.Response(
            200, json={"data": [{"name": "reach", "total_value": {"value": 40}}]}
        )
    )
    assert await adapter.fetch_metrics(ig(), MEDIA_ID, PUBLISHED_AT) == {"reach": 40}
    assert query(read.calls[0].request) == {"metric": "reach,views,shares"}


async def test_a_story_with_too_few_viewers_has_no_metrics_yet(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    insights_error(
        graph_error(400, 10, "(#10) Not enough viewers for the media to show insights"), network
    )
    assert await adapter.fetch_metrics(ig(), MEDIA_ID, PUBLISHED_AT) == {}


# --- delete and registration ------------------------------------------------------------------


async def test_delete_is_refused_for_good_because_the_api_cannot_delete_media(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    with pytest.raises(ProviderError) as caught:
        await adapter.delete(ig(), MEDIA_ID)
    assert (caught.value.code, caught.value.retryable) == ("invalid_request", False)
    assert "does not delete published media" in caught.value.message


async def test_the_registry_builds_the_instagram_adapter_on_the_runtimes_client(
    settings: Settings,
) -> None:
    runtime = Runtime.build(settings.model_copy(update={"meta_graph_version": "v25.0"}))
    context = ig()
    adapter = adapter_for(context, adapter_services(runtime, context.organization_id))
    assert isinstance(adapter, InstagramAdapter)
    assert adapter._http is runtime.provider_http
    assert adapter._graph_version == "v25.0"
    await runtime.close()
