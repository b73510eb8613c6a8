"""The Threads adapter around its posts: the long-lived token kept fresh, Graph errors
classified, deletion, insights and health.

Shapes: get-started/long-lived-tokens (GET /refresh_access_token?grant_type=th_refresh_token ->
`{"access_token", "token_type", "expires_in"}`), graph-api/guides/error-handling, posts/
delete-posts (`{"success": true, "deleted_id"}`), insights (`{"data": [{"name", "period",
"values": [{"value"}], "title", "description", "id"}]}`)."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any

import httpx
import pytest
import respx

from pressroom.providers.adapter import ERROR_CODES
from pressroom.providers.adapter import ProviderError
from pressroom.providers.threads import ThreadsAdapter

from .support import CredentialsLog
from .support import channel
from .threads_support import API
from .threads_support import CREDENTIALS
from .threads_support import DAY
from .threads_support import GRAPH
from .threads_support import NOW
from .threads_support import POST_ID
from .threads_support import TOKEN
from .threads_support import USER_ID
from .threads_support import adapter_fixture  # noqa: F401
from .threads_support import answer
from .threads_support import graph_error
from .threads_support import log_fixture  # noqa: F401
from .threads_support import progress_fixture  # noqa: F401
from .threads_support import query
from .threads_support import sleep_fixture  # noqa: F401

PUBLISHED_AT = datetime(2026, 11, 20, tzinfo=UTC)


def threads_channel(**credentials: Any) -> Any:
    return channel("threads", {**CREDENTIALS, **credentials}, handle="@pressroom")


def insight(name: str, value: int) -> dict[str, Any]:
    return {
        "name": name,
        "period": "lifetime",
        "values": [{"value": value}],
        "title": name.title(),
        "description": f"The number of {name} on your post.",
        "id": f"{POST_ID}/insights/{name}/lifetime",
    }


def refreshed(token: str = "THAAG-long-lived-2") -> httpx.Response:
    return answer({"access_token": token, "token_type": "bearer", "expires_in": 5183944})


async def test_a_token_due_for_refresh_is_refreshed_first_and_reported(
    network: respx.MockRouter, adapter: ThreadsAdapter, log: CredentialsLog
) -> None:
    refresh = network.get(f"{GRAPH}/refresh_access_token").mock(return_value=refreshed())
    delete = network.delete(f"{API}/{POST_ID}").mock(
        return_value=answer({"success": True, "deleted_id": POST_ID})
    )
    await adapter.delete(threads_channel(expiresAt=NOW + 20 * DAY), POST_ID)

    assert query(refresh.calls[0].request) == {
        "grant_type": "th_refresh_token",
        "access_token": TOKEN,
    }
    assert query(delete.calls[0].request) == {"access_token": "THAAG-long-lived-2"}
    assert log.reports == [
        {**CREDENTIALS, "accessToken": "THAAG-long-lived-2", "expiresAt": NOW + 5183944}
    ]


async def test_a_stale_copy_uses_the_refreshed_token_without_refreshing_again(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    refresh = network.get(f"{GRAPH}/refresh_access_token").mock(return_value=refreshed())
    delete = network.delete(f"{API}/{POST_ID}").mock(return_value=answer({"success": True}))
    stale = threads_channel(expiresAt=NOW + 20 * DAY)
    await adapter.delete(stale, POST_ID)
    await adapter.delete(stale, POST_ID)
    assert refresh.call_count == 1
    assert [query(c.request)["access_token"] for c in delete.calls] == ["THAAG-long-lived-2"] * 2


async def test_a_refused_refresh_does_not_fail_a_call_while_the_token_works(
    network: respx.MockRouter, adapter: ThreadsAdapter, log: CredentialsLog
) -> None:
    network.get(f"{GRAPH}/refresh_access_token").mock(
        return_value=graph_error(1, "An unknown error occurred", status=500)
    )
    delete = network.delete(f"{API}/{POST_ID}").mock(return_value=answer({"success": True}))
    await adapter.delete(threads_channel(expiresAt=NOW + 20 * DAY), POST_ID)
    assert query(delete.calls[0].request)["access_token"] == TOKEN
    assert log.reports == []


async def test_an_expired_token_is_auth_expired_without_calling_threads(
    adapter: ThreadsAdapter,
) -> None:
    with pytest.raises(ProviderError) as caught:
        await adapter.delete(threads_channel(expiresAt=NOW - 60), POST_ID)
    assert caught.value.code == "auth_expired"
    assert "cannot be refreshed" in caught.value.message


CLASSIFIED = [
    (graph_error(190, "Error validating access token", subcode=460, status=401), "auth_expired"),
    (graph_error(102, "Session key invalid"), "auth_expired"),
    (graph_error(10, "Application does not have permission", status=403), "permission_denied"),
    (graph_error(200, "Requires threads_delete permission", status=403), "permission_denied"),
    (graph_error(4, "Application request limit reached"), "rate_limited"),
    (graph_error(2, "Service temporarily unavailable", status=503), "provider_unavailable"),
    (graph_error(100, "Invalid parameter", user_msg="Something is wrong"), "invalid_request"),
]


@pytest.mark.parametrize(("response", "code"), CLASSIFIED)
async def test_graph_errors_are_classified_in_threads_own_words(
    network: respx.MockRouter,
    adapter: ThreadsAdapter,
    response: httpx.Response,
    code: str,
) -> None:
    network.delete(f"{API}/{POST_ID}").mock(return_value=response)
    with pytest.raises(ProviderError) as caught:
        await adapter.delete(threads_channel(), POST_ID)
    assert (caught.value.code, caught.value.retryable) == (code, ERROR_CODES[code])
    said = response.json()["error"]["message"]
    assert said in caught.value.message
    assert TOKEN not in caught.value.message


async def test_a_rate_limit_waits_for_retry_after(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    network.delete(f"{API}/{POST_ID}").mock(
        return_value=graph_error(
            4, "Application request limit reached", headers={"Retry-After": "90"}
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.delete(threads_channel(), POST_ID)
    assert caught.value.retry_after == 90


async def test_a_token_echoed_in_an_error_is_scrubbed(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    network.delete(f"{API}/{POST_ID}").mock(
        return_value=graph_error(190, f"Malformed access token {TOKEN}", status=401)
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.delete(threads_channel(), POST_ID)
    assert TOKEN not in caught.value.message
    assert "[redacted]" in caught.value.message


async def test_delete_of_a_post_already_gone_counts_as_deleted(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    delete = network.delete(f"{API}/{POST_ID}").mock(
        return_value=graph_error(
            100,
            f"Unsupported delete request. Object with ID '{POST_ID}' does not exist",
            subcode=33,
        )
    )
    await adapter.delete(threads_channel(), POST_ID)
    assert delete.called


async def test_insights_are_mapped_to_canonical_keys(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    insights = network.get(f"{API}/{POST_ID}/insights").mock(
        return_value=answer(
            {
                "data": [
                    insight("views", 4523),
                    insight("likes", 187),
                    insight("replies", 42),
                    insight("reposts", 23),
                    insight("quotes", 8),
                    insight("shares", 5),
                ]
            }
        )
    )
    metrics = await adapter.fetch_metrics(threads_channel(), POST_ID, PUBLISHED_AT)
    assert metrics == {"views": 4523, "likes": 187, "comments": 42, "shares": 36}
    assert query(insights.calls[0].request) == {
        "metric": "views,likes,replies,reposts,quotes,shares",
        "access_token": TOKEN,
    }


async def test_insights_of_a_deleted_post_are_not_found(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    network.get(f"{API}/{POST_ID}/insights").mock(
        return_value=graph_error(100, "Object does not exist", subcode=33)
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.fetch_metrics(threads_channel(), POST_ID, PUBLISHED_AT)
    assert caught.value.code == "not_found"


async def test_health_is_healthy_when_the_account_can_be_read(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    me = network.get(f"{API}/me").mock(return_value=answer({"id": USER_ID}))
    health = await adapter.check_health(threads_channel())
    assert (health.state, health.reason) == ("healthy", None)
    assert query(me.calls[0].request) == {"fields": "id", "access_token": TOKEN}


async def test_health_refreshes_a_token_due_for_it(
    network: respx.MockRouter, adapter: ThreadsAdapter, log: CredentialsLog
) -> None:
    network.get(f"{GRAPH}/refresh_access_token").mock(return_value=refreshed())
    network.get(f"{API}/me").mock(return_value=answer({"id": USER_ID}))
    health = await adapter.check_health(threads_channel(expiresAt=NOW + 3 * DAY))
    assert health.state == "healthy"
    assert log.reports[0]["expiresAt"] == NOW + 5183944


async def test_health_requires_reconnect_when_an_expiring_token_cannot_be_refreshed(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    network.get(f"{GRAPH}/refresh_access_token").mock(
        return_value=graph_error(100, "The token cannot be refreshed")
    )
    network.get(f"{API}/me").mock(return_value=answer({"id": USER_ID}))
    health = await adapter.check_health(threads_channel(expiresAt=NOW + 3 * DAY))
    assert health.state == "reconnect_required"
    assert health.reason is not None
    assert "2026-11-25" in health.reason
    assert "The token cannot be refreshed" in health.reason


async def test_health_is_degraded_while_an_unrefreshable_token_has_weeks_left(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    network.get(f"{GRAPH}/refresh_access_token").mock(
        return_value=graph_error(2, "Service temporarily unavailable", status=503)
    )
    network.get(f"{API}/me").mock(return_value=answer({"id": USER_ID}))
    health = await adapter.check_health(threads_channel(expiresAt=NOW + 20 * DAY))
    assert health.state == "degraded"


async def test_health_requires_reconnect_when_the_token_expired(adapter: ThreadsAdapter) -> None:
    health = await adapter.check_health(threads_channel(expiresAt=NOW - DAY))
    assert health.state == "reconnect_required"


async def test_health_requires_reconnect_when_the_grant_is_revoked(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    network.get(f"{API}/me").mock(
        return_value=graph_error(
            190,
            "Error validating access token: The user has not authorized application 123.",
            subcode=458,
            status=401,
        )
    )
    health = await adapter.check_health(threads_channel())
    assert health.state == "reconnect_required"
    assert health.reason is not None
    assert "has not authorized application" in health.reason
