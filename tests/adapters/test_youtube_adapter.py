"""The YouTube adapter around uploads: token refresh, error classes (docs/errors; quotas reset
at midnight Pacific Time, getting-started#quota), videos.delete, videos.list statistics, health
and revocation."""

from __future__ import annotations

from urllib.parse import parse_qsl

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError

from .support import CredentialsLog
from .support import MediaShelf
from .support import fixed_clock
from .support import publish_request
from .youtube_support import ACCESS_TOKEN
from .youtube_support import API
from .youtube_support import APP
from .youtube_support import NOW
from .youtube_support import REFRESH_TOKEN
from .youtube_support import TOKEN_URL
from .youtube_support import UPLOAD
from .youtube_support import VIDEO_ID
from .youtube_support import google_error
from .youtube_support import youtube_adapter
from .youtube_support import youtube_channel

OPTIONS = {"title": "Launch day"}


def form(route: respx.Route, call: int = 0) -> dict[str, str]:
    return dict(parse_qsl(route.calls[call].request.content.decode()))


async def publish_failure(network: respx.MockRouter, answer: httpx.Response) -> ProviderError:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", b"v" * 100)
    network.post(UPLOAD).mock(return_value=answer)
    async with youtube_adapter(shelf) as adapter:
        with pytest.raises(ProviderError) as failed:
            await adapter.publish(
                publish_request(youtube_channel(), "", media=(video,), options=OPTIONS)
            )
    return failed.value


async def test_a_token_about_to_expire_is_refreshed_first_and_reported(
    network: respx.MockRouter,
) -> None:
    token = network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            200, json={"access_token": "ya29.new", "expires_in": 3599, "token_type": "Bearer"}
        )
    )
    stats = network.get(f"{API}/videos").mock(
        return_value=httpx.Response(200, json={"items": [{"id": VIDEO_ID, "statistics": {}}]})
    )
    log = CredentialsLog()
    async with youtube_adapter(MediaShelf(), log=log) as adapter:
        await adapter.fetch_metrics(youtube_channel(expiresAt=NOW + 60), VIDEO_ID, fixed_clock())
    assert form(token) == {
        "grant_type": "refresh_token",
        "refresh_token": REFRESH_TOKEN,
        "client_id": APP.client_id,
        "client_secret": APP.client_secret,
    }
    assert stats.calls[0].request.headers["authorization"] == "Bearer ya29.new"
    [reported] = log.reports
    assert reported["accessToken"] == "ya29.new"
    assert reported["refreshToken"] == REFRESH_TOKEN  # Google keeps it
    assert reported["expiresAt"] == NOW + 3599


async def test_a_refused_token_is_refreshed_once_and_the_call_sent_again(
    network: respx.MockRouter,
) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(200, json={"access_token": "ya29.new", "expires_in": 3599})
    )
    network.delete(f"{API}/videos").mock(
        side_effect=[google_error(401, "authError", "Invalid Credentials"), httpx.Response(204)]
    )
    async with youtube_adapter(MediaShelf()) as adapter:
        await adapter.delete(youtube_channel(), VIDEO_ID)


async def test_a_revoked_refresh_token_is_auth_expired(network: respx.MockRouter) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            400,
            json={
                "error": "invalid_grant",
                "error_description": "Token has been expired or revoked.",
            },
        )
    )
    async with youtube_adapter(MediaShelf()) as adapter:
        with pytest.raises(ProviderError) as failed:
            await adapter.delete(youtube_channel(expiresAt=NOW - 10), VIDEO_ID)
    assert failed.value.code == "auth_expired"
    assert "Token has been expired or revoked." in failed.value.message
    assert REFRESH_TOKEN not in failed.value.message


async def test_the_daily_quota_is_retried_at_midnight_pacific_time(
    network: respx.MockRouter,
) -> None:
    error = await publish_failure(
        network,
        google_error(
            403,
            "quotaExceeded",
            "The request cannot be completed because you have exceeded your quota.",
        ),
    )
    assert error.code == "rate_limited" and error.retryable
    # 2026-11-22 09:30 UTC is 01:30 PST; the quota resets at 00:00 PST on the 23rd.
    assert "retried after 2026-11-23T08:00:00Z" in error.message
    assert "quotaExceeded: The request cannot be completed" in error.message
    assert error.retry_after == pytest.approx(22.5 * 3600 - 0.123)


async def test_the_channels_upload_limit_is_retried_a_day_later(
    network: respx.MockRouter,
) -> None:
    error = await publish_failure(
        network,
        google_error(400, "uploadLimitExceeded", "The user has exceeded the number of videos."),
    )
    assert error.code == "rate_limited"
    assert error.retry_after == 24 * 3600
    assert "retried after 2026-11-23T09:30:00Z" in error.message


async def test_a_short_rate_limit_waits_for_retry_after(network: respx.MockRouter) -> None:
    answer = google_error(403, "rateLimitExceeded", "Too many requests.")
    answer.headers["Retry-After"] = "30"
    error = await publish_failure(network, answer)
    assert (error.code, error.retry_after) == ("rate_limited", 30.0)


@pytest.mark.parametrize("reason", ["invalidTitle", "invalidDescription", "invalidTags"])
async def test_refused_text_is_text_rejected(network: respx.MockRouter, reason: str) -> None:
    error = await publish_failure(network, google_error(400, reason, "The request was invalid."))
    assert error.code == "text_rejected" and not error.retryable
    assert reason in error.message


async def test_a_forbidden_upload_is_permission_denied(network: respx.MockRouter) -> None:
    error = await publish_failure(network, google_error(403, "forbidden", "Access forbidden."))
    assert error.code == "permission_denied"
    assert "Access forbidden." in error.message


async def test_an_unauthorized_token_after_refresh_is_auth_expired(
    network: respx.MockRouter,
) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(200, json={"access_token": "ya29.new", "expires_in": 3599})
    )
    error = await publish_failure(network, google_error(401, "authError", "Invalid Credentials"))
    assert error.code == "auth_expired"


async def test_delete_sends_videos_delete_and_a_gone_video_counts_as_deleted(
    network: respx.MockRouter,
) -> None:
    route = network.delete(f"{API}/videos").mock(
        side_effect=[httpx.Response(204), google_error(404, "videoNotFound", "Not found.")]
    )
    async with youtube_adapter(MediaShelf()) as adapter:
        await adapter.delete(youtube_channel(), VIDEO_ID)
        await adapter.delete(youtube_channel(), VIDEO_ID)
    assert dict(route.calls[0].request.url.params) == {"id": VIDEO_ID}
    assert route.calls[0].request.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"


async def test_metrics_map_video_statistics_to_canonical_keys(network: respx.MockRouter) -> None:
    route = network.get(f"{API}/videos").mock(
        return_value=httpx.Response(
            200,
            json={
                "items": [
                    {
                        "id": VIDEO_ID,
                        "statistics": {
                            "viewCount": "1523",
                            "likeCount": "87",
                            "favoriteCount": "0",
                            "commentCount": "12",
                        },
                    }
                ]
            },
        )
    )
    async with youtube_adapter(MediaShelf()) as adapter:
        metrics = await adapter.fetch_metrics(youtube_channel(), VIDEO_ID, fixed_clock())
    assert metrics == {"views": 1523, "likes": 87, "comments": 12}
    assert dict(route.calls[0].request.url.params) == {"part": "statistics", "id": VIDEO_ID}


async def test_metrics_of_a_deleted_video_are_not_found(network: respx.MockRouter) -> None:
    network.get(f"{API}/videos").mock(return_value=httpx.Response(200, json={"items": []}))
    async with youtube_adapter(MediaShelf()) as adapter:
        with pytest.raises(ProviderError) as failed:
            await adapter.fetch_metrics(youtube_channel(), VIDEO_ID, fixed_clock())
    assert failed.value.code == "not_found"


async def test_health_reads_the_channel(network: respx.MockRouter) -> None:
    route = network.get(f"{API}/channels").mock(
        return_value=httpx.Response(200, json={"items": [{"id": "UC1"}]})
    )
    async with youtube_adapter(MediaShelf()) as adapter:
        health = await adapter.check_health(youtube_channel())
    assert health.state == "healthy"
    assert dict(route.calls[0].request.url.params) == {"part": "id", "mine": "true"}


async def test_an_expiring_token_without_the_app_needs_reconnecting_before_any_call(
    network: respx.MockRouter,
) -> None:
    async with youtube_adapter(MediaShelf(), app=None) as adapter:
        health = await adapter.check_health(youtube_channel(expiresAt=NOW + 30))
    assert health.state == "reconnect_required"
    assert health.reason is not None and "cannot be refreshed" in health.reason


async def test_revoke_revokes_the_refresh_token(network: respx.MockRouter) -> None:
    route = network.post("https://oauth2.googleapis.com/revoke").mock(
        return_value=httpx.Response(200)
    )
    async with youtube_adapter(MediaShelf()) as adapter:
        assert await adapter.revoke(youtube_channel()) == "revoked"
    assert form(route) == {"token": REFRESH_TOKEN}
