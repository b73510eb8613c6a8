"""Pinterest: token refresh (before expiry and on a 401), error classification in Pinterest's
own words, deletion, pin analytics and the channel's health.

Shapes: https://developers.pinterest.com/docs/api/v5/oauth-token, .../pins-delete,
.../pins-analytics, .../user_account-get; errors `{"code", "message"}`."""

from __future__ import annotations

import base64
from datetime import timedelta
from urllib.parse import parse_qsl

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest

from .pinterest_support import ACCESS_TOKEN
from .pinterest_support import API
from .pinterest_support import APP
from .pinterest_support import DAY
from .pinterest_support import NOW
from .pinterest_support import PIN_ID
from .pinterest_support import REFRESH_TOKEN
from .pinterest_support import TOKEN_URL
from .pinterest_support import pin_channel
from .pinterest_support import pin_request
from .pinterest_support import pinterest_adapter
from .pinterest_support import pinterest_error
from .support import FIXED_NOW
from .support import CredentialsLog
from .support import MediaShelf


def image_request() -> PublishRequest:
    return pin_request("pin", "t", (MediaShelf().add("image", "image/jpeg", b"jpeg"),))


def refreshed(network: respx.MockRouter) -> respx.Route:
    return network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            200,
            json={
                "access_token": "pina_new-access-token",
                "refresh_token": "pinr_new-refresh-token",
                "expires_in": 2592000,
                "refresh_token_expires_in": 5184000,
                "token_type": "bearer",
                "scope": "pins:read,pins:write",
            },
        )
    )


async def test_a_token_expiring_within_a_day_is_refreshed_before_the_call_and_reported(
    network: respx.MockRouter,
) -> None:
    token = refreshed(network)
    pin = network.post(f"{API}/pins").mock(return_value=httpx.Response(201, json={"id": PIN_ID}))
    log = CredentialsLog()
    channel = pin_channel(expiresAt=int(NOW) + 3600)
    async with pinterest_adapter(credentials=log) as adapter:
        media = (MediaShelf().add("image", "image/jpeg", b"jpeg"),)
        await adapter.publish(pin_request("pin", "t", media, channel=channel))
    sent = token.calls[0].request
    expected = base64.b64encode(f"{APP.client_id}:{APP.client_secret}".encode()).decode()
    assert sent.headers["authorization"] == f"Basic {expected}"
    assert dict(parse_qsl(sent.content.decode())) == {
        "grant_type": "refresh_token",
        "refresh_token": REFRESH_TOKEN,
        "continuous_refresh": "true",
    }
    assert pin.calls[0].request.headers["authorization"] == "Bearer pina_new-access-token"
    [report] = log.reports
    assert report["accessToken"] == "pina_new-access-token"
    assert report["refreshToken"] == "pinr_new-refresh-token"
    assert report["expiresAt"] == int(NOW) + 2592000
    assert report["refreshExpiresAt"] == int(NOW) + 5184000
    assert report["defaultBoardId"] == pin_channel().credentials["defaultBoardId"]


async def test_a_401_is_refreshed_once_and_sent_again(network: respx.MockRouter) -> None:
    refreshed(network)
    pin = network.post(f"{API}/pins").mock(
        side_effect=[
            pinterest_error(401, 2, "Authentication failed."),
            httpx.Response(201, json={"id": PIN_ID}),
        ]
    )
    async with pinterest_adapter() as adapter:
        result = await adapter.publish(image_request())
    assert result.provider_post_id == PIN_ID
    assert pin.call_count == 2


async def test_a_refused_refresh_is_auth_expired(network: respx.MockRouter) -> None:
    network.post(TOKEN_URL).mock(
        return_value=pinterest_error(400, 1, "Invalid refresh token " + REFRESH_TOKEN)
    )
    async with pinterest_adapter() as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.delete(pin_channel(expiresAt=int(NOW) - 10), PIN_ID)
    assert raised.value.code == "auth_expired"
    assert REFRESH_TOKEN not in raised.value.message
    assert "Invalid refresh token" in raised.value.message


@pytest.mark.parametrize(
    ("status", "code", "message", "expected"),
    [
        (401, 2, "Authentication failed.", "auth_expired"),
        (403, 3, "Not authorized to access board or Pin.", "permission_denied"),
        (400, 1, "Invalid parameters. Sorry we could not fetch the image.", "media_rejected"),
        (400, 1, "Invalid request: title is too long", "text_rejected"),
        (404, 2601, "Board not found.", "not_found"),
        (500, 0, "Something went wrong", "provider_unavailable"),
    ],
)
async def test_pinterest_errors_are_classified_in_its_own_words(
    network: respx.MockRouter, status: int, code: int, message: str, expected: str
) -> None:
    network.post(f"{API}/pins").mock(return_value=pinterest_error(status, code, message))
    if status == 401:
        network.post(TOKEN_URL).mock(return_value=pinterest_error(401, 2, "Authentication failed."))
    async with pinterest_adapter() as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(image_request())
    assert raised.value.code == expected
    assert message.rstrip(".") in raised.value.message


async def test_a_rate_limit_is_retryable_at_pinterests_reset(network: respx.MockRouter) -> None:
    network.post(f"{API}/pins").mock(
        return_value=pinterest_error(
            429, 29, "You have exceeded your rate limit. Try again later.",
            **{"x-ratelimit-reset": "42"},
        )
    )  # fmt: skip
    async with pinterest_adapter() as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(image_request())
    assert raised.value.code == "rate_limited" and raised.value.retryable
    assert raised.value.retry_after == 42
    assert "exceeded your rate limit" in raised.value.message


async def test_delete_removes_the_pin_and_one_already_gone_counts_as_deleted(
    network: respx.MockRouter,
) -> None:
    route = network.delete(f"{API}/pins/{PIN_ID}").mock(
        side_effect=[httpx.Response(204), pinterest_error(404, 50, "Pin not found.")]
    )
    async with pinterest_adapter() as adapter:
        await adapter.delete(pin_channel(), PIN_ID)
        await adapter.delete(pin_channel(), PIN_ID)
    assert route.calls[0].request.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"


async def test_analytics_map_to_impressions_saves_and_clicks(network: respx.MockRouter) -> None:
    route = network.get(f"{API}/pins/{PIN_ID}/analytics").mock(
        return_value=httpx.Response(
            200,
            json={"all": {"summary_metrics": {"IMPRESSION": 1200, "SAVE": 14, "PIN_CLICK": 30,
                                              "OUTBOUND_CLICK": 7}, "daily_metrics": []}},
        )
    )  # fmt: skip
    async with pinterest_adapter() as adapter:
        metrics = await adapter.fetch_metrics(pin_channel(), PIN_ID, FIXED_NOW - timedelta(days=3))
    assert metrics == {"impressions": 1200, "saves": 14, "clicks": 37}
    assert dict(route.calls[0].request.url.params) == {
        "start_date": "2026-11-19",
        "end_date": "2026-11-22",
        "metric_types": "IMPRESSION,SAVE,PIN_CLICK,OUTBOUND_CLICK",
    }


async def test_analytics_of_an_old_pin_start_within_pinterests_90_days(
    network: respx.MockRouter,
) -> None:
    route = network.get(f"{API}/pins/{PIN_ID}/analytics").mock(
        return_value=httpx.Response(200, json={"all": {"summary_metrics": {}}})
    )
    async with pinterest_adapter() as adapter:
        metrics = await adapter.fetch_metrics(
            pin_channel(), PIN_ID, FIXED_NOW - timedelta(days=400)
        )
    assert metrics == {"impressions": 0, "saves": 0, "clicks": 0}
    assert route.calls[0].request.url.params["start_date"] == "2026-08-25"


async def test_health_reads_the_account(network: respx.MockRouter) -> None:
    route = network.get(f"{API}/user_account").mock(
        return_value=httpx.Response(200, json={"username": "pressroomhq"})
    )
    async with pinterest_adapter() as adapter:
        health = await adapter.check_health(pin_channel())
    assert health.state == "healthy"
    assert route.calls[0].request.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"


async def test_health_is_reconnect_required_before_an_unrefreshable_token_expires() -> None:
    channel = pin_channel(expiresAt=int(NOW) + 3600, refreshToken=None)
    async with pinterest_adapter() as adapter:
        health = await adapter.check_health(channel)
    assert health.state == "reconnect_required"
    assert "cannot be refreshed" in (health.reason or "")


async def test_health_is_reconnect_required_once_the_refresh_token_has_expired() -> None:
    channel = pin_channel(expiresAt=int(NOW) + 3600, refreshExpiresAt=int(NOW) - DAY)
    async with pinterest_adapter() as adapter:
        health = await adapter.check_health(channel)
    assert health.state == "reconnect_required"


async def test_health_without_the_app_cannot_refresh() -> None:
    async with pinterest_adapter(app=None) as adapter:
        health = await adapter.check_health(pin_channel(expiresAt=int(NOW) - 1))
    assert health.state == "reconnect_required"
