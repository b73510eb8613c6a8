"""The TikTok adapter's token upkeep, error classes, metrics, delete and health."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.tiktok import TikTokAdapter

from .support import CredentialsLog
from .support import MediaShelf
from .support import RecordedSleep
from .support import channel
from .support import fixed_clock
from .tiktok_support import APP
from .tiktok_support import CHANNEL
from .tiktok_support import CREDENTIALS
from .tiktok_support import DAY
from .tiktok_support import NOW
from .tiktok_support import QUERY_URL
from .tiktok_support import REFRESH
from .tiktok_support import TOKEN
from .tiktok_support import TOKEN_URL
from .tiktok_support import USER_URL
from .tiktok_support import VIDEO_ID
from .tiktok_support import adapter_fixture  # noqa: F401
from .tiktok_support import body
from .tiktok_support import build_adapter
from .tiktok_support import failed
from .tiktok_support import form
from .tiktok_support import log_fixture  # noqa: F401
from .tiktok_support import ok
from .tiktok_support import shelf_fixture  # noqa: F401
from .tiktok_support import sleep_fixture  # noqa: F401

NEW_TOKENS = {
    "open_id": "723f24d7-e717-40f8-a2b6-cb8464cd23b4",
    "scope": "user.info.basic,video.publish,video.list",
    "access_token": "act.renewed",
    "expires_in": 86400,
    "refresh_token": "rft.renewed",
    "refresh_expires_in": 31536000,
    "token_type": "Bearer",
}


def expiring(**changes: Any) -> Any:
    return channel("tiktok", {**CREDENTIALS, "expiresAt": NOW + 60, **changes})


def mock_counts(network: respx.MockRouter) -> respx.Route:
    return network.post(QUERY_URL).mock(
        return_value=ok(
            {
                "videos": [
                    {
                        "id": VIDEO_ID,
                        "view_count": 1520,
                        "like_count": 88,
                        "comment_count": 7,
                        "share_count": 3,
                    }
                ],
                "cursor": 0,
                "has_more": False,
            }
        )
    )


async def test_metrics_map_the_video_counts(
    network: respx.MockRouter, adapter: TikTokAdapter
) -> None:
    query = mock_counts(network)

    metrics = await adapter.fetch_metrics(CHANNEL, VIDEO_ID, fixed_clock())

    request = query.calls[0].request
    assert dict(request.url.params) == {
        "fields": "id,view_count,like_count,comment_count,share_count"
    }
    assert body(request) == {"filters": {"video_ids": [VIDEO_ID]}}
    assert metrics == {"views": 1520, "likes": 88, "comments": 7, "shares": 3}


async def test_a_post_without_a_public_id_has_no_metrics(adapter: TikTokAdapter) -> None:
    with pytest.raises(ProviderError) as caught:
        await adapter.fetch_metrics(CHANNEL, "v_pub_file~v2-1.7343513837296895754", fixed_clock())
    assert caught.value.code == "not_found"


async def test_a_token_about_to_expire_is_refreshed_first_and_reported(
    network: respx.MockRouter, adapter: TikTokAdapter, log: CredentialsLog
) -> None:
    token = network.post(TOKEN_URL).mock(return_value=httpx.Response(200, json=NEW_TOKENS))
    query = mock_counts(network)

    await adapter.fetch_metrics(expiring(), VIDEO_ID, fixed_clock())

    assert form(token.calls[0].request) == {
        "client_key": APP.client_id,
        "client_secret": APP.client_secret,
        "grant_type": "refresh_token",
        "refresh_token": REFRESH,
    }
    assert query.calls[0].request.headers["authorization"] == "Bearer act.renewed"
    assert log.reports == [
        {
            **CREDENTIALS,
            "accessToken": "act.renewed",
            "expiresAt": NOW + 86400,
            "refreshToken": "rft.renewed",
            "refreshExpiresAt": NOW + 31536000,
            "scope": "user.info.basic,video.publish,video.list",
        }
    ]


async def test_a_token_refused_as_invalid_is_refreshed_once_and_the_call_sent_again(
    network: respx.MockRouter, adapter: TikTokAdapter, log: CredentialsLog
) -> None:
    network.post(TOKEN_URL).mock(return_value=httpx.Response(200, json=NEW_TOKENS))
    query = network.post(QUERY_URL).mock(
        side_effect=[
            failed("access_token_invalid", "The access token is invalid or not found.", 401),
            ok({"videos": [{"id": VIDEO_ID, "view_count": 1}]}),
        ]
    )

    metrics = await adapter.fetch_metrics(CHANNEL, VIDEO_ID, fixed_clock())

    assert [c.request.headers["authorization"] for c in query.calls] == [
        f"Bearer {TOKEN}",
        "Bearer act.renewed",
    ]
    assert metrics["views"] == 1
    assert len(log.reports) == 1


async def test_a_refresh_tiktok_refuses_asks_for_a_reconnect(
    network: respx.MockRouter, adapter: TikTokAdapter
) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            400,
            json={
                "error": "invalid_grant",
                "error_description": "Refresh token is invalid or expired.",
                "log_id": "20241122",
            },
        )
    )

    with pytest.raises(ProviderError) as caught:
        await adapter.fetch_metrics(expiring(), VIDEO_ID, fixed_clock())

    assert caught.value.code == "auth_expired"
    assert "Refresh token is invalid or expired." in caught.value.message
    assert REFRESH not in caught.value.message


async def test_rate_limits_wait_for_the_minute_window(
    network: respx.MockRouter, adapter: TikTokAdapter
) -> None:
    network.post(QUERY_URL).mock(
        return_value=failed("rate_limit_exceeded", "API rate limit was exceeded.", 429)
    )

    with pytest.raises(ProviderError) as caught:
        await adapter.fetch_metrics(CHANNEL, VIDEO_ID, fixed_clock())

    assert (caught.value.code, caught.value.retry_after) == ("rate_limited", 60.0)
    assert "API rate limit was exceeded." in caught.value.message


async def test_a_missing_scope_is_a_permission_error(
    network: respx.MockRouter, adapter: TikTokAdapter
) -> None:
    network.post(QUERY_URL).mock(
        return_value=failed("scope_not_authorized", "The user did not authorize the scope.", 401)
    )

    with pytest.raises(ProviderError) as caught:
        await adapter.fetch_metrics(CHANNEL, VIDEO_ID, fixed_clock())

    assert caught.value.code == "permission_denied"


async def test_delete_is_refused_because_the_api_has_none(adapter: TikTokAdapter) -> None:
    with pytest.raises(ProviderError) as caught:
        await adapter.delete(CHANNEL, VIDEO_ID)
    assert caught.value.code == "invalid_request"
    assert not caught.value.retryable


async def test_health_is_healthy_when_the_token_works(
    network: respx.MockRouter, adapter: TikTokAdapter
) -> None:
    user = network.get(USER_URL).mock(return_value=ok({"user": {"open_id": "x"}}))

    health = await adapter.check_health(CHANNEL)

    assert health.state == "healthy"
    assert dict(user.calls[0].request.url.params) == {"fields": "open_id"}


async def test_health_asks_for_a_reconnect_before_an_unrenewable_token_expires(
    shelf: MediaShelf, log: CredentialsLog, sleep: RecordedSleep
) -> None:
    adapter = build_adapter(shelf, log, sleep)

    health = await adapter.check_health(expiring(refreshExpiresAt=NOW - DAY))

    assert health.state == "reconnect_required"
    assert health.reason is not None and "refresh token has expired" in health.reason


async def test_health_without_the_app_cannot_renew_an_expiring_token(
    shelf: MediaShelf, log: CredentialsLog, sleep: RecordedSleep
) -> None:
    adapter = build_adapter(shelf, log, sleep, app=None)

    health = await adapter.check_health(expiring())

    assert health.state == "reconnect_required"
    assert health.reason is not None and "PRESSROOM_TIKTOK_CLIENT_ID" in health.reason


async def test_health_warns_before_the_refresh_token_runs_out(
    network: respx.MockRouter, adapter: TikTokAdapter
) -> None:
    network.get(USER_URL).mock(return_value=ok({"user": {"open_id": "x"}}))

    health = await adapter.check_health(
        channel("tiktok", {**CREDENTIALS, "refreshExpiresAt": NOW + 2 * DAY})
    )

    assert health.state == "degraded"
    assert health.reason is not None and "reconnect the channel" in health.reason
