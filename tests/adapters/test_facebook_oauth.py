"""Connecting Facebook Pages through Facebook Login.

Shapes follow developers.facebook.com: facebook-login/guides/advanced/manual-flow (the dialog's
parameters; GET /oauth/access_token with client_id, redirect_uri, client_secret, code ->
{"access_token", "token_type", "expires_in"}), facebook-login/guides/access-tokens/get-long-lived
(grant_type=fb_exchange_token), graph-api/reference/user/accounts (GET /me/accounts with
id, name, username, access_token, tasks; cursor paging), facebook-login/guides/access-tokens/
debugging (GET /debug_token -> {"data": {"expires_at", "is_valid", ...}}) and
graph-api/guides/error-handling."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.facebook import FacebookConnector

from .facebook_support import GRAPH
from .facebook_support import graph_error
from .facebook_support import headers
from .facebook_support import query
from .support import fixed_clock

APP = OAuthApp(
    provider="facebook",
    client_id="1234567890",
    client_secret="app-secret-xyz",
    redirect_uri="https://pressroom.example/connect/facebook/callback",
)
NOW = int(fixed_clock().timestamp())
USER_TOKEN = "EAAUser-short-lived"
LONG_TOKEN = "EAAUser-long-lived"
ACCOUNTS_FIELDS = "id,name,username,access_token,tasks"


def proof(token: str) -> str:
    return hmac.new(APP.client_secret.encode(), token.encode(), hashlib.sha256).hexdigest()


def page(
    page_id: str, name: str, *, username: str | None = None, tasks: list[str] | None = None
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": page_id,
        "name": name,
        "access_token": f"EAAPage-{page_id}",
        "category": "Media",
        "tasks": tasks if tasks is not None else ["ANALYZE", "ADVERTISE", "CREATE_CONTENT"],
    }
    if username:
        entry["username"] = username
    return entry


@pytest.fixture
def connector() -> FacebookConnector:
    return FacebookConnector(clock=lambda: float(NOW))


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def test_authorization_url_is_facebooks_dialog_with_the_page_scopes(
    connector: FacebookConnector,
) -> None:
    start = connector.start(APP, "state-123")
    url = urlsplit(start.url)
    assert f"{url.scheme}://{url.netloc}{url.path}" == "https://www.facebook.com/v24.0/dialog/oauth"
    assert {key: values[0] for key, values in parse_qs(url.query).items()} == {
        "client_id": APP.client_id,
        "redirect_uri": APP.redirect_uri,
        "state": "state-123",
        "response_type": "code",
        "scope": "pages_show_list,pages_manage_posts,pages_read_engagement,"
        "pages_manage_engagement,read_insights",
    }
    assert start.secret == {}


async def test_code_is_exchanged_for_a_long_lived_token_and_each_granted_page_is_a_channel(
    network: respx.MockRouter, connector: FacebookConnector, http: httpx.AsyncClient
) -> None:
    tokens = network.get(f"{GRAPH}/oauth/access_token").mock(
        side_effect=[
            respx.MockResponse(
                200, json={"access_token": USER_TOKEN, "token_type": "bearer", "expires_in": 5183}
            ),
            respx.MockResponse(
                200,
                json={"access_token": LONG_TOKEN, "token_type": "bearer", "expires_in": 5183944},
            ),
        ]
    )
    accounts = network.get(f"{GRAPH}/me/accounts").mock(
        side_effect=[
            respx.MockResponse(
                200,
                json={
                    "data": [page("111", "Pressroom News", username="pressroomnews")],
                    "paging": {
                        "cursors": {"before": "b1", "after": "a1"},
                        "next": f"{GRAPH}/me/accounts?access_token={LONG_TOKEN}&after=a1",
                    },
                },
            ),
            respx.MockResponse(
                200,
                json={
                    "data": [
                        page("222", "Pressroom Jobs"),
                        page("333", "Read only", tasks=["ANALYZE"]),
                    ],
                    "paging": {"cursors": {"before": "b2", "after": "a2"}},
                },
            ),
        ]
    )
    connected = await connector.exchange(APP, "the-code", {}, http)
    assert query(tokens, 0) == {
        "client_id": APP.client_id,
        "redirect_uri": APP.redirect_uri,
        "client_secret": APP.client_secret,
        "code": "the-code",
    }
    assert "authorization" not in headers(tokens, 0)
    assert query(tokens, 1) == {
        "grant_type": "fb_exchange_token",
        "client_id": APP.client_id,
        "client_secret": APP.client_secret,
        "fb_exchange_token": USER_TOKEN,
    }
    assert query(accounts, 0) == {
        "fields": ACCOUNTS_FIELDS,
        "limit": "100",
        "appsecret_proof": proof(LONG_TOKEN),
    }
    assert headers(accounts, 0)["authorization"] == f"Bearer {LONG_TOKEN}"
    assert query(accounts, 1)["after"] == "a1"
    assert [(c.account_name, c.handle) for c in connected] == [
        ("Pressroom News", "pressroomnews"),
        ("Pressroom Jobs", "Pressroom Jobs"),
    ]
    assert connected[0].credentials == {
        "pageId": "111",
        "accessToken": "EAAPage-111",
        "userTokenExpiresAt": NOW + 5183944,
    }


async def test_refused_code_says_so_in_facebooks_words_without_the_secrets(
    network: respx.MockRouter, connector: FacebookConnector, http: httpx.AsyncClient
) -> None:
    network.get(f"{GRAPH}/oauth/access_token").mock(
        return_value=graph_error(
            100, "This authorization code has been used. (the-code)", subcode=36009
        )
    )
    with pytest.raises(ProviderError) as refused:
        await connector.exchange(APP, "the-code", {}, http)
    assert refused.value.code == "invalid_request"
    assert "This authorization code has been used" in refused.value.message
    assert "the-code" not in refused.value.message
    assert APP.client_secret not in refused.value.message


async def test_grant_without_a_page_to_publish_on_is_refused(
    network: respx.MockRouter, connector: FacebookConnector, http: httpx.AsyncClient
) -> None:
    network.get(f"{GRAPH}/oauth/access_token").mock(
        side_effect=[
            respx.MockResponse(200, json={"access_token": USER_TOKEN, "expires_in": 5183}),
            respx.MockResponse(200, json={"access_token": LONG_TOKEN}),
        ]
    )
    network.get(f"{GRAPH}/me/accounts").respond(
        200, json={"data": [page("333", "Read only", tasks=["ANALYZE"])]}
    )
    with pytest.raises(ProviderError) as refused:
        await connector.exchange(APP, "the-code", {}, http)
    assert refused.value.code == "permission_denied"


async def test_user_token_lists_its_pages_with_a_long_lived_token(
    network: respx.MockRouter, connector: FacebookConnector, http: httpx.AsyncClient
) -> None:
    accounts = network.get(f"{GRAPH}/me/accounts").respond(
        200, json={"data": [page("111", "Pressroom News")]}
    )
    exchange = network.get(f"{GRAPH}/oauth/access_token").respond(
        200, json={"access_token": LONG_TOKEN, "expires_in": 5183944}
    )
    connected = await connector.from_token(APP, f" {USER_TOKEN} ", http)
    assert headers(accounts, 0)["authorization"] == f"Bearer {USER_TOKEN}"
    assert query(exchange)["fb_exchange_token"] == USER_TOKEN
    assert headers(accounts, 1)["authorization"] == f"Bearer {LONG_TOKEN}"
    assert [c.credentials["pageId"] for c in connected] == ["111"]


async def test_user_token_without_the_app_is_used_as_given(
    network: respx.MockRouter, connector: FacebookConnector, http: httpx.AsyncClient
) -> None:
    accounts = network.get(f"{GRAPH}/me/accounts").respond(
        200, json={"data": [page("111", "Pressroom News")]}
    )
    connected = await connector.from_token(None, USER_TOKEN, http)
    assert accounts.call_count == 1
    assert query(accounts) == {"fields": ACCOUNTS_FIELDS, "limit": "100"}
    assert connected[0].credentials == {"pageId": "111", "accessToken": "EAAPage-111"}


async def test_page_token_is_that_page_with_its_expiry(
    network: respx.MockRouter, connector: FacebookConnector, http: httpx.AsyncClient
) -> None:
    page_token = "EAAPage-direct"
    network.get(f"{GRAPH}/me/accounts").mock(
        return_value=graph_error(
            100, "(#100) Tried accessing nonexisting field (accounts) on node type (Page)"
        )
    )
    me = network.get(f"{GRAPH}/me").respond(
        200, json={"id": "444", "name": "Direct Page", "username": "directpage"}
    )
    debug = network.get(f"{GRAPH}/debug_token").respond(
        200,
        json={
            "data": {
                "app_id": APP.client_id,
                "type": "PAGE",
                "expires_at": NOW + 3600,
                "is_valid": True,
                "profile_id": "444",
            }
        },
    )
    connected = await connector.from_token(APP, page_token, http)
    assert query(me) == {"fields": "id,name,username", "appsecret_proof": proof(page_token)}
    assert query(debug)["input_token"] == page_token
    assert headers(debug)["authorization"] == f"Bearer {APP.client_id}|{APP.client_secret}"
    assert len(connected) == 1
    assert (connected[0].account_name, connected[0].handle) == ("Direct Page", "directpage")
    assert connected[0].credentials == {
        "pageId": "444",
        "accessToken": page_token,
        "expiresAt": NOW + 3600,
    }


async def test_page_token_that_never_expires_is_stored_without_expiry(
    network: respx.MockRouter, connector: FacebookConnector, http: httpx.AsyncClient
) -> None:
    network.get(f"{GRAPH}/me/accounts").mock(
        return_value=graph_error(100, "(#100) Tried accessing nonexisting field (accounts)")
    )
    network.get(f"{GRAPH}/me").respond(200, json={"id": "444", "name": "Direct Page"})
    network.get(f"{GRAPH}/debug_token").respond(
        200, json={"data": {"expires_at": 0, "is_valid": True}}
    )
    connected = await connector.from_token(APP, "EAAPage-direct", http)
    assert "expiresAt" not in connected[0].credentials


async def test_invalid_token_is_refused_before_anything_is_stored(
    network: respx.MockRouter, connector: FacebookConnector, http: httpx.AsyncClient
) -> None:
    network.get(f"{GRAPH}/me/accounts").mock(
        return_value=graph_error(190, "Invalid OAuth access token - Cannot parse access token")
    )
    with pytest.raises(ProviderError) as refused:
        await connector.from_token(APP, "not-a-token", http)
    assert refused.value.code == "auth_expired"
    assert "Cannot parse access token" in refused.value.message
