"""Connecting a TikTok account: Login Kit's authorization URL, the code traded for tokens, and
an operator's own token verified before anything is stored."""

from __future__ import annotations

from urllib.parse import parse_qs
from urllib.parse import urlsplit

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.tiktok import TikTokConnector

from .tiktok_support import APP
from .tiktok_support import CREATOR_URL
from .tiktok_support import NOW
from .tiktok_support import OPEN_ID
from .tiktok_support import REFRESH
from .tiktok_support import TOKEN
from .tiktok_support import TOKEN_URL
from .tiktok_support import USER_URL
from .tiktok_support import creator_info
from .tiktok_support import failed
from .tiktok_support import form
from .tiktok_support import ok

CONNECTOR = TikTokConnector(clock=lambda: float(NOW))
TOKENS = {
    "open_id": OPEN_ID,
    "scope": "user.info.basic,video.publish,video.list",
    "access_token": TOKEN,
    "expires_in": 86400,
    "refresh_token": REFRESH,
    "refresh_expires_in": 31536000,
    "token_type": "Bearer",
}
USER = {
    "user": {
        "open_id": OPEN_ID,
        "union_id": "c9c60f44-a68e-4f5d-84dd-ce22faeb0ba1",
        "avatar_url": "https://p19-sign.tiktokcdn-us.com/avatar.jpeg",
        "display_name": "Pressroom News",
    }
}


def mock_account(network: respx.MockRouter) -> tuple[respx.Route, respx.Route]:
    return (
        network.get(USER_URL).mock(return_value=ok(USER)),
        network.post(CREATOR_URL).mock(return_value=creator_info()),
    )


def test_authorization_url_asks_for_the_posting_scopes() -> None:
    start = CONNECTOR.start(APP, "state-123")
    url = urlsplit(start.url)
    assert f"{url.scheme}://{url.netloc}{url.path}" == "https://www.tiktok.com/v2/auth/authorize/"
    assert {key: values[0] for key, values in parse_qs(url.query).items()} == {
        "client_key": APP.client_id,
        "scope": "user.info.basic,video.publish,video.list",
        "redirect_uri": APP.redirect_uri,
        "state": "state-123",
        "response_type": "code",
    }
    assert start.secret == {}


async def test_code_is_exchanged_for_tokens_and_the_account(network: respx.MockRouter) -> None:
    token = network.post(TOKEN_URL).mock(return_value=httpx.Response(200, json=TOKENS))
    user, creator = mock_account(network)

    async with httpx.AsyncClient() as http:
        accounts = await CONNECTOR.exchange(APP, "code-from-callback", {}, http)

    request = token.calls[0].request
    assert request.headers["content-type"] == "application/x-www-form-urlencoded"
    assert form(request) == {
        "client_key": APP.client_id,
        "client_secret": APP.client_secret,
        "code": "code-from-callback",
        "grant_type": "authorization_code",
        "redirect_uri": APP.redirect_uri,
    }
    assert dict(user.calls[0].request.url.params) == {
        "fields": "open_id,union_id,avatar_url,display_name"
    }
    assert user.calls[0].request.headers["authorization"] == f"Bearer {TOKEN}"
    assert creator.call_count == 1
    [account] = accounts
    assert account.handle == "@pressroom.news"
    assert account.account_name == "Pressroom News"
    assert account.credentials == {
        "accessToken": TOKEN,
        "expiresAt": NOW + 86400,
        "refreshToken": REFRESH,
        "refreshExpiresAt": NOW + 31536000,
        "scope": "user.info.basic,video.publish,video.list",
        "openId": OPEN_ID,
        "unionId": "c9c60f44-a68e-4f5d-84dd-ce22faeb0ba1",
        "displayName": "Pressroom News",
        "username": "pressroom.news",
    }


async def test_a_grant_without_video_publish_is_refused(network: respx.MockRouter) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(200, json={**TOKENS, "scope": "user.info.basic"})
    )

    async with httpx.AsyncClient() as http:
        with pytest.raises(ProviderError) as caught:
            await CONNECTOR.exchange(APP, "code", {}, http)

    assert caught.value.code == "permission_denied"
    assert "video.publish" in caught.value.message


async def test_a_code_tiktok_refuses_says_why(network: respx.MockRouter) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            400,
            json={
                "error": "invalid_grant",
                "error_description": "Authorization code is expired.",
                "log_id": "2024112209",
            },
        )
    )

    async with httpx.AsyncClient() as http:
        with pytest.raises(ProviderError) as caught:
            await CONNECTOR.exchange(APP, "stale-code", {}, http)

    assert caught.value.code == "auth_expired"
    assert "Authorization code is expired." in caught.value.message
    assert APP.client_secret not in caught.value.message


async def test_an_operators_refresh_token_is_traded_and_verified(
    network: respx.MockRouter,
) -> None:
    token = network.post(TOKEN_URL).mock(return_value=httpx.Response(200, json=TOKENS))
    mock_account(network)

    async with httpx.AsyncClient() as http:
        [account] = await CONNECTOR.from_token(APP, f" {REFRESH} ", http)

    assert form(token.calls[0].request)["grant_type"] == "refresh_token"
    assert form(token.calls[0].request)["refresh_token"] == REFRESH
    assert account.credentials["refreshToken"] == REFRESH
    assert account.credentials["openId"] == OPEN_ID


async def test_an_operators_access_token_is_verified_before_it_is_stored(
    network: respx.MockRouter,
) -> None:
    user, _ = mock_account(network)

    async with httpx.AsyncClient() as http:
        [account] = await CONNECTOR.from_token(None, TOKEN, http)

    assert user.calls[0].request.headers["authorization"] == f"Bearer {TOKEN}"
    assert account.credentials["accessToken"] == TOKEN
    assert account.handle == "@pressroom.news"


async def test_an_access_token_tiktok_refuses_connects_nothing(network: respx.MockRouter) -> None:
    network.get(USER_URL).mock(
        return_value=failed("access_token_invalid", "The access token is invalid.", 401)
    )

    async with httpx.AsyncClient() as http:
        with pytest.raises(ProviderError) as caught:
            await CONNECTOR.from_token(None, "act.revoked", http)

    assert caught.value.code == "auth_expired"


async def test_a_refresh_token_needs_the_deployments_app() -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(ProviderError) as caught:
            await CONNECTOR.from_token(None, REFRESH, http)
    assert "PRESSROOM_TIKTOK_CLIENT_ID" in caught.value.message
