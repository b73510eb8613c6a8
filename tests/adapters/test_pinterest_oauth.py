"""Connecting Pinterest: the authorization URL, the code exchange (HTTP Basic, form body), the
account and its default board, and an operator's existing token.

Shapes: https://developers.pinterest.com/docs/getting-started/set-up-authentication-and-authorization/,
https://developers.pinterest.com/docs/api/v5/oauth-token, .../user_account-get, .../boards-list."""

from __future__ import annotations

import base64
from urllib.parse import parse_qs
from urllib.parse import parse_qsl
from urllib.parse import urlsplit

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.pinterest import PinterestConnector

from .pinterest_support import API
from .pinterest_support import APP
from .pinterest_support import BOARD_ID
from .pinterest_support import NOW
from .pinterest_support import TOKEN_URL
from .pinterest_support import clock
from .pinterest_support import pinterest_error

CODE = "auth-code-0123456789"


def test_the_authorization_url_asks_for_the_publishing_scopes() -> None:
    start = PinterestConnector().start(APP, "state-123")
    url = urlsplit(start.url)
    assert f"{url.scheme}://{url.netloc}{url.path}" == "https://www.pinterest.com/oauth/"
    assert {key: values[0] for key, values in parse_qs(url.query).items()} == {
        "client_id": APP.client_id,
        "redirect_uri": APP.redirect_uri,
        "response_type": "code",
        "scope": "pins:read,pins:write,boards:read,user_accounts:read",
        "state": "state-123",
    }
    assert start.secret == {}


def account_and_boards(network: respx.MockRouter, boards: list[dict[str, str]]) -> respx.Route:
    network.get(f"{API}/user_account").mock(
        return_value=httpx.Response(
            200, json={"username": "pressroomhq", "id": "1136", "account_type": "BUSINESS"}
        )
    )
    return network.get(f"{API}/boards").mock(
        return_value=httpx.Response(200, json={"items": boards, "bookmark": None})
    )


async def test_a_code_is_exchanged_and_the_first_board_becomes_the_default(
    network: respx.MockRouter,
) -> None:
    token = network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            200,
            json={
                "access_token": "pina_access",
                "refresh_token": "pinr_refresh",
                "expires_in": 2592000,
                "refresh_token_expires_in": 31536000,
                "scope": "pins:read,pins:write,boards:read,user_accounts:read",
                "token_type": "bearer",
                "response_type": "authorization_code",
            },
        )
    )
    boards = account_and_boards(
        network, [{"id": BOARD_ID, "name": "Recipes"}, {"id": "2", "name": "Travel"}]
    )
    async with httpx.AsyncClient() as http:
        [account] = await PinterestConnector(clock=clock).exchange(APP, CODE, {}, http)
    sent = token.calls[0].request
    basic = base64.b64encode(f"{APP.client_id}:{APP.client_secret}".encode()).decode()
    assert sent.headers["authorization"] == f"Basic {basic}"
    assert dict(parse_qsl(sent.content.decode())) == {
        "grant_type": "authorization_code",
        "code": CODE,
        "redirect_uri": APP.redirect_uri,
    }
    assert boards.calls[0].request.headers["authorization"] == "Bearer pina_access"
    assert account.handle == "pressroomhq"
    assert account.credentials == {
        "accessToken": "pina_access",
        "refreshToken": "pinr_refresh",
        "expiresAt": int(NOW) + 2592000,
        "refreshExpiresAt": int(NOW) + 31536000,
        "scope": "pins:read,pins:write,boards:read,user_accounts:read",
        "username": "pressroomhq",
        "userId": "1136",
        "defaultBoardId": BOARD_ID,
        "defaultBoardName": "Recipes",
    }


async def test_a_refused_code_is_auth_expired_in_pinterests_words(
    network: respx.MockRouter,
) -> None:
    network.post(TOKEN_URL).mock(
        return_value=pinterest_error(400, 1, f"Invalid authorization code {CODE}")
    )
    async with httpx.AsyncClient() as http:
        with pytest.raises(ProviderError) as raised:
            await PinterestConnector().exchange(APP, CODE, {}, http)
    assert raised.value.code == "auth_expired"
    assert "Invalid authorization code" in raised.value.message
    assert CODE not in raised.value.message


async def test_an_operator_token_is_verified_and_an_account_without_boards_has_no_default(
    network: respx.MockRouter,
) -> None:
    account_and_boards(network, [])
    async with httpx.AsyncClient() as http:
        [account] = await PinterestConnector().from_token(None, " pina_operator ", http)
    assert account.credentials == {
        "accessToken": "pina_operator",
        "username": "pressroomhq",
        "userId": "1136",
    }


async def test_an_operator_token_pinterest_refuses_stores_nothing(
    network: respx.MockRouter,
) -> None:
    network.get(f"{API}/user_account").mock(
        return_value=pinterest_error(401, 2, "Authentication failed.")
    )
    async with httpx.AsyncClient() as http:
        with pytest.raises(ProviderError) as raised:
            await PinterestConnector().from_token(None, "pina_bad", http)
    assert raised.value.code == "auth_expired"
