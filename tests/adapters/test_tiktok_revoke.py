"""Revoking a disconnected TikTok channel's access at TikTok.

Recorded shapes: `POST https://open.tiktokapis.com/v2/oauth/revoke/`, a form of `client_key`,
`client_secret` and `token` (the user access token), answered with an empty body on success
(developers.tiktok.com, oauth-user-access-token-management, "Revoke access"); the token
endpoint's refresh grant and its `{"error", "error_description", "log_id"}` refusal."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError

from .support import CredentialsLog
from .support import MediaShelf
from .support import RecordedSleep
from .support import channel
from .tiktok_support import APP
from .tiktok_support import CREDENTIALS
from .tiktok_support import NOW
from .tiktok_support import REFRESH
from .tiktok_support import TOKEN
from .tiktok_support import TOKEN_URL
from .tiktok_support import build_adapter
from .tiktok_support import form

REVOKE_URL = "https://open.tiktokapis.com/v2/oauth/revoke/"
FRESH = "act.fresh12345Example12345Example12"
REVOKE_FORM = {"client_key": APP.client_id, "client_secret": APP.client_secret, "token": TOKEN}
REFRESH_FORM = {
    "client_key": APP.client_id,
    "client_secret": APP.client_secret,
    "grant_type": "refresh_token",
    "refresh_token": REFRESH,
}
INVALID = {
    "error": "invalid_grant",
    "error_description": "The token is invalid or expired.",
    "log_id": "202411220930001234ABCDEF",
}


def tiktok_channel(**changes: Any) -> Any:
    credentials = {**CREDENTIALS, **changes}
    return channel("tiktok", {k: v for k, v in credentials.items() if v is not None})


def fresh_tokens() -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "open_id": CREDENTIALS["openId"],
            "scope": "user.info.basic,video.publish,video.list",
            "access_token": FRESH,
            "expires_in": 86400,
            "refresh_token": "rft.rotated12345Example12345Exampl",
            "refresh_expires_in": 31536000,
            "token_type": "Bearer",
        },
    )


async def revoke(credentials_channel: Any, **overrides: Any) -> str:
    log = CredentialsLog()
    adapter = build_adapter(MediaShelf(), log, RecordedSleep(), **overrides)
    try:
        result = await adapter.revoke(credentials_channel)
    finally:
        await adapter.aclose()
    assert log.reports == []  # nothing of a disconnected channel is stored back
    return result


async def test_revoke_sends_the_access_token_with_the_apps_key_and_secret(
    network: respx.MockRouter,
) -> None:
    route = network.post(REVOKE_URL).mock(return_value=httpx.Response(200, json={}))
    assert await revoke(tiktok_channel()) == "revoked"
    [call] = route.calls
    assert call.request.headers["content-type"] == "application/x-www-form-urlencoded"
    assert "authorization" not in call.request.headers
    assert form(call.request) == REVOKE_FORM


async def test_an_expired_access_token_is_replaced_by_a_fresh_one_which_is_revoked(
    network: respx.MockRouter,
) -> None:
    refreshed = network.post(TOKEN_URL).mock(return_value=fresh_tokens())
    route = network.post(REVOKE_URL).mock(return_value=httpx.Response(200, json={}))
    assert await revoke(tiktok_channel(expiresAt=NOW - 60)) == "revoked"
    assert form(refreshed.calls[0].request) == REFRESH_FORM
    assert [form(call.request) for call in route.calls] == [{**REVOKE_FORM, "token": FRESH}]


async def test_an_access_token_tiktok_refuses_is_replaced_and_the_fresh_one_revoked(
    network: respx.MockRouter,
) -> None:
    route = network.post(REVOKE_URL).mock(
        side_effect=[httpx.Response(401, json=INVALID), httpx.Response(200, json={})]
    )
    network.post(TOKEN_URL).mock(return_value=fresh_tokens())
    assert await revoke(tiktok_channel()) == "revoked"
    assert [form(call.request)["token"] for call in route.calls] == [TOKEN, FRESH]


async def test_a_refresh_token_tiktok_refuses_means_the_grant_is_already_over(
    network: respx.MockRouter,
) -> None:
    network.post(TOKEN_URL).mock(return_value=httpx.Response(400, json=INVALID))
    assert await revoke(tiktok_channel(expiresAt=NOW - 60)) == "revoked"


async def test_an_expired_access_token_without_refresh_token_leaves_nothing_to_call(
    network: respx.MockRouter,
) -> None:
    assert await revoke(tiktok_channel(expiresAt=NOW - 60, refreshToken=None)) == "revoked"
    assert network.calls.call_count == 0


async def test_without_the_deployments_app_revocation_is_unsupported(
    network: respx.MockRouter,
) -> None:
    assert await revoke(tiktok_channel(), app=None) == "unsupported"
    assert network.calls.call_count == 0


async def test_a_channel_without_tokens_has_nothing_to_revoke(network: respx.MockRouter) -> None:
    bare = channel("tiktok", {"openId": CREDENTIALS["openId"]})
    assert await revoke(bare) == "nothing_to_revoke"


async def test_a_tiktok_outage_is_retryable_and_quotes_no_secret(
    network: respx.MockRouter,
) -> None:
    network.post(REVOKE_URL).mock(
        return_value=httpx.Response(
            503,
            json={
                "error": "server_error",
                "error_description": f"try later ({TOKEN}, {APP.client_secret})",
            },
        )
    )
    with pytest.raises(ProviderError) as raised:
        await revoke(tiktok_channel())
    assert raised.value.code == "provider_unavailable" and raised.value.retryable
    assert TOKEN not in str(raised.value) and APP.client_secret not in str(raised.value)
