"""LinkedIn: error classes, token refresh, a retired LinkedIn-Version, deletion, metrics and
the channel's health."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from urllib.parse import parse_qsl
from urllib.parse import quote

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.linkedin.errors import RETIRED_VERSIONS

from .linkedin_support import API
from .linkedin_support import NOW
from .linkedin_support import ORGANIZATION
from .linkedin_support import REFRESH
from .linkedin_support import SHARE
from .linkedin_support import TOKEN
from .linkedin_support import created
from .linkedin_support import linkedin_adapter
from .linkedin_support import linkedin_error
from .linkedin_support import member_channel
from .linkedin_support import page_channel
from .linkedin_support import sent_headers
from .support import CredentialsLog
from .support import publish_request

TOKEN_URL = "https://www.linkedin.com/oauth/v2/accessToken"
POST_PATH = f"{API}/rest/posts/{quote(SHARE, safe='')}"


@pytest.fixture(autouse=True)
def no_retired_versions() -> Iterator[None]:
    RETIRED_VERSIONS.clear()
    yield
    RETIRED_VERSIONS.clear()


@pytest.mark.parametrize(
    ("status", "code", "message", "expected"),
    [
        (401, "EXPIRED_ACCESS_TOKEN", "The token used in the request has expired", "auth_expired"),
        (
            403,
            "ACCESS_DENIED",
            "Not enough permissions to access: posts.CREATE",
            "permission_denied",
        ),
        (422, "", "/commentary :: length exceeds 3000", "text_rejected"),
        (400, "", "Image urn:li:image:C0 is not available", "media_rejected"),
        (500, "", "Internal Server Error", "provider_unavailable"),
    ],
)
async def test_linkedin_errors_are_classified_in_its_own_words(
    network: respx.MockRouter, status: int, code: str, message: str, expected: str
) -> None:
    network.post(f"{API}/rest/posts").mock(return_value=linkedin_error(status, code, message))
    async with linkedin_adapter(app=None) as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(publish_request(member_channel(), "Hi"))
    assert raised.value.code == expected
    assert message in raised.value.message
    assert TOKEN not in raised.value.message


async def test_rate_limit_is_retryable_at_the_next_utc_midnight(network: respx.MockRouter) -> None:
    network.post(f"{API}/rest/posts").mock(
        return_value=linkedin_error(429, "TOO_MANY_REQUESTS", "Resource level throttle limit")
    )
    async with linkedin_adapter() as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(publish_request(member_channel(), "Hi"))
    now = datetime.fromtimestamp(NOW, UTC)
    midnight = datetime(now.year, now.month, now.day, tzinfo=UTC).timestamp() + 86400
    assert raised.value.code == "rate_limited" and raised.value.retryable
    assert raised.value.retry_after == int(midnight - NOW)


async def test_a_retired_version_is_permanent_names_the_setting_and_degrades_health(
    network: respx.MockRouter,
) -> None:
    route = network.post(f"{API}/rest/posts").mock(
        return_value=linkedin_error(
            426, "NONEXISTENT_VERSION", "Requested version 202401 is not active"
        )
    )
    async with linkedin_adapter(version="202401") as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(publish_request(member_channel(), "Hi"))
        health = await adapter.check_health(member_channel())
    assert raised.value.code == "invalid_request" and not raised.value.retryable
    assert "PRESSROOM_LINKEDIN_VERSION" in raised.value.message
    assert "202401 is not active" in raised.value.message
    assert health.state == "degraded" and "PRESSROOM_LINKEDIN_VERSION" in (health.reason or "")
    assert route.call_count == 1


async def test_a_page_health_check_reports_a_retired_version(network: respx.MockRouter) -> None:
    network.get(f"{API}/rest/organizations/2414183").mock(
        return_value=linkedin_error(
            426, "NONEXISTENT_VERSION", "Requested version 202401 is not active"
        )
    )
    async with linkedin_adapter(version="202401") as adapter:
        health = await adapter.check_health(page_channel())
    assert health.state == "degraded" and "PRESSROOM_LINKEDIN_VERSION" in (health.reason or "")


async def test_a_token_about_to_expire_is_refreshed_first_and_reported(
    network: respx.MockRouter,
) -> None:
    refresh = network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            200,
            json={
                "access_token": "AQV-new",
                "expires_in": 5184000,
                "refresh_token": REFRESH,
                "refresh_token_expires_in": 20000000,
            },
        )
    )
    route = network.post(f"{API}/rest/posts").mock(return_value=created())
    log = CredentialsLog()
    channel = member_channel(expiresAt=int(NOW) + 60, refreshToken=REFRESH)
    async with linkedin_adapter(credentials=log) as adapter:
        await adapter.publish(publish_request(channel, "Hi"))
    assert dict(parse_qsl(refresh.calls[0].request.content.decode())) == {
        "grant_type": "refresh_token",
        "refresh_token": REFRESH,
        "client_id": "li-client",
        "client_secret": "li-secret",
    }
    assert sent_headers(route)["Authorization"] == "Bearer AQV-new"
    assert log.reports[0]["accessToken"] == "AQV-new"
    assert log.reports[0]["expiresAt"] == int(NOW) + 5184000
    assert log.reports[0]["refreshExpiresAt"] == int(NOW) + 20000000


async def test_a_refused_token_is_refreshed_once_and_the_call_sent_again(
    network: respx.MockRouter,
) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(200, json={"access_token": "AQV-new", "expires_in": 5184000})
    )
    route = network.post(f"{API}/rest/posts").mock(
        side_effect=[linkedin_error(401, "REVOKED_ACCESS_TOKEN", "revoked"), created()]
    )
    async with linkedin_adapter() as adapter:
        await adapter.publish(publish_request(member_channel(refreshToken=REFRESH), "Hi"))
    assert [c.request.headers["Authorization"] for c in route.calls] == [
        f"Bearer {TOKEN}",
        "Bearer AQV-new",
    ]


async def test_health_needs_a_reconnect_when_the_token_expires_without_refresh(
    network: respx.MockRouter,
) -> None:
    async with linkedin_adapter() as adapter:
        health = await adapter.check_health(member_channel(expiresAt=int(NOW) + 3 * 86400))
    assert health.state == "reconnect_required"
    assert "cannot be refreshed" in (health.reason or "")


async def test_health_reads_the_member(network: respx.MockRouter) -> None:
    network.get(f"{API}/v2/userinfo").mock(return_value=httpx.Response(200, json={"sub": "abc"}))
    async with linkedin_adapter() as adapter:
        assert (await adapter.check_health(member_channel())).state == "healthy"


async def test_delete_removes_the_post_and_a_gone_post_counts_as_deleted(
    network: respx.MockRouter,
) -> None:
    route = network.delete(POST_PATH).mock(
        side_effect=[httpx.Response(204), linkedin_error(404, "NOT_FOUND", "gone")]
    )
    async with linkedin_adapter() as adapter:
        await adapter.delete(member_channel(), SHARE)
        await adapter.delete(member_channel(), SHARE)
    assert sent_headers(route)["X-Restli-Protocol-Version"] == "2.0.0"


async def test_page_post_metrics_come_from_share_statistics(network: respx.MockRouter) -> None:
    totals = {
        "impressionCount": 900,
        "uniqueImpressionsCount": 700,
        "likeCount": 12,
        "commentCount": 3,
        "shareCount": 2,
        "clickCount": 40,
        "engagement": 0.05,
    }
    route = network.get(f"{API}/rest/organizationalEntityShareStatistics").mock(
        return_value=httpx.Response(200, json={"elements": [{"totalShareStatistics": totals}]})
    )
    async with linkedin_adapter() as adapter:
        metrics = await adapter.fetch_metrics(page_channel(), SHARE, datetime.now(UTC))
    assert metrics == {
        "impressions": 900,
        "reach": 700,
        "likes": 12,
        "comments": 3,
        "shares": 2,
        "clicks": 40,
    }
    assert route.calls[0].request.url.query.decode() == (
        f"q=organizationalEntity&organizationalEntity={quote(ORGANIZATION, safe='')}"
        f"&shares=List({quote(SHARE, safe='')})"
    )


async def test_member_post_metrics_come_from_social_actions(network: respx.MockRouter) -> None:
    network.get(f"{API}/rest/socialActions/{quote(SHARE, safe='')}").mock(
        return_value=httpx.Response(
            200,
            json={
                "likesSummary": {"totalLikes": 8},
                "commentsSummary": {"aggregatedTotalComments": 5, "totalFirstLevelComments": 4},
            },
        )
    )
    async with linkedin_adapter() as adapter:
        metrics = await adapter.fetch_metrics(member_channel(), SHARE, datetime.now(UTC))
    assert metrics == {"likes": 8, "comments": 5}
