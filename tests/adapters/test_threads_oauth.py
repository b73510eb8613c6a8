"""Connecting a Threads account: the Authorization Window, the code traded for a long-lived
token, and an operator's own token verified before anything is stored.

Shapes: get-started/get-access-tokens-and-permissions (authorize URL parameters, comma-separated
scopes; POST /oauth/access_token -> `{"access_token", "user_id"}`), get-started/long-lived-tokens
(GET /access_token?grant_type=th_exchange_token, GET /refresh_access_token?grant_type=
th_refresh_token -> `{"access_token", "token_type", "expires_in"}`), GET /v1.0/me."""

from __future__ import annotations

from urllib.parse import parse_qs
from urllib.parse import urlsplit

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.threads import ThreadsConnector

from .threads_support import API
from .threads_support import DAY
from .threads_support import GRAPH
from .threads_support import NOW
from .threads_support import USER_ID
from .threads_support import answer
from .threads_support import form
from .threads_support import graph_error
from .threads_support import query

APP = OAuthApp(
    provider="threads",
    client_id="990602627938098",
    client_secret="threads-app-secret-1",
    redirect_uri="https://pressroom.example/connect/threads/callback",
)
CONNECTOR = ThreadsConnector(clock=lambda: float(NOW))
LONG_LIVED = {"access_token": "THAAG-long-1", "token_type": "bearer", "expires_in": 5183944}


def mock_me(network: respx.MockRouter) -> respx.Route:
    return network.get(f"{API}/me").mock(
        return_value=answer({"id": USER_ID, "username": "pressroom"})
    )


def test_authorization_url_asks_for_the_publishing_scopes() -> None:
    start = CONNECTOR.start(APP, "state-123")
    url = urlsplit(start.url)
    assert f"{url.scheme}://{url.netloc}{url.path}" == "https://threads.net/oauth/authorize"
    assert {key: values[0] for key, values in parse_qs(url.query).items()} == {
        "client_id": APP.client_id,
        "redirect_uri": APP.redirect_uri,
        "scope": "threads_basic,threads_content_publish,threads_manage_replies,"
        "threads_read_replies,threads_manage_insights,threads_delete",
        "response_type": "code",
        "state": "state-123",
    }
    assert start.secret == {}


async def test_code_is_exchanged_for_a_long_lived_token_and_the_account(
    network: respx.MockRouter,
) -> None:
    code = network.post(f"{GRAPH}/oauth/access_token").mock(
        return_value=answer({"access_token": "THAAG-short", "user_id": USER_ID})
    )
    exchange = network.get(f"{GRAPH}/access_token").mock(return_value=answer(LONG_LIVED))
    me = mock_me(network)

    async with httpx.AsyncClient() as http:
        accounts = await CONNECTOR.exchange(APP, "AQBx-code", {}, http)

    assert form(code.calls[0].request) == {
        "client_id": APP.client_id,
        "client_secret": APP.client_secret,
        "code": "AQBx-code",
        "grant_type": "authorization_code",
        "redirect_uri": APP.redirect_uri,
    }
    assert query(exchange.calls[0].request) == {
        "grant_type": "th_exchange_token",
        "client_secret": APP.client_secret,
        "access_token": "THAAG-short",
    }
    assert query(me.calls[0].request) == {"fields": "id,username", "access_token": "THAAG-long-1"}
    assert len(accounts) == 1
    assert accounts[0].handle == "@pressroom"
    assert accounts[0].credentials == {
        "accessToken": "THAAG-long-1",
        "expiresAt": NOW + 5183944,
        "userId": USER_ID,
        "username": "pressroom",
    }


async def test_a_refused_code_fails_in_threads_own_words(network: respx.MockRouter) -> None:
    network.post(f"{GRAPH}/oauth/access_token").mock(
        return_value=graph_error(
            100,
            "Error validating verification code. Please make sure your redirect_uri is "
            "identical to the one you used in the OAuth dialog request",
        )
    )
    async with httpx.AsyncClient() as http:
        with pytest.raises(ProviderError) as caught:
            await CONNECTOR.exchange(APP, "AQBx-code", {}, http)
    assert "Error validating verification code" in caught.value.message
    assert APP.client_secret not in caught.value.message


async def test_an_operator_token_is_verified_then_refreshed_to_learn_its_expiry(
    network: respx.MockRouter,
) -> None:
    me = mock_me(network)
    refresh = network.get(f"{GRAPH}/refresh_access_token").mock(
        return_value=answer({**LONG_LIVED, "access_token": "THAAG-long-2"})
    )
    async with httpx.AsyncClient() as http:
        accounts = await CONNECTOR.from_token(None, "  THAAG-operator \n", http)

    assert query(me.calls[0].request)["access_token"] == "THAAG-operator"
    assert query(refresh.calls[0].request) == {
        "grant_type": "th_refresh_token",
        "access_token": "THAAG-operator",
    }
    assert accounts[0].credentials == {
        "accessToken": "THAAG-long-2",
        "expiresAt": NOW + 5183944,
        "userId": USER_ID,
        "username": "pressroom",
    }


async def test_an_operator_token_too_young_to_refresh_is_kept_with_its_shortest_life(
    network: respx.MockRouter,
) -> None:
    mock_me(network)
    network.get(f"{GRAPH}/refresh_access_token").mock(
        return_value=graph_error(190, "The access token cannot be refreshed yet")
    )
    async with httpx.AsyncClient() as http:
        accounts = await CONNECTOR.from_token(APP, "THAAG-operator", http)
    assert accounts[0].credentials["accessToken"] == "THAAG-operator"
    assert accounts[0].credentials["expiresAt"] == NOW + 59 * DAY


async def test_an_operator_token_threads_refuses_stores_nothing(network: respx.MockRouter) -> None:
    network.get(f"{API}/me").mock(
        return_value=graph_error(
            190, "Invalid OAuth access token - Cannot parse access token", status=401
        )
    )
    async with httpx.AsyncClient() as http:
        with pytest.raises(ProviderError) as caught:
            await CONNECTOR.from_token(None, "THAAG-bad", http)
    assert caught.value.code == "auth_expired"
    assert "Cannot parse access token" in caught.value.message


async def test_an_empty_operator_token_is_refused_without_calling_threads(
    network: respx.MockRouter,
) -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(ProviderError) as caught:
            await CONNECTOR.from_token(None, "  ", http)
    assert caught.value.code == "invalid_request"
