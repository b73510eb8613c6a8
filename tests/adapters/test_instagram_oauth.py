"""Connecting Instagram through Business Login for Instagram.

Shapes follow developers.facebook.com/docs/instagram-platform: instagram-api-with-instagram-login/
business-login (the authorization window at www.instagram.com/oauth/authorize, `#_` appended to
the code, POST api.instagram.com/oauth/access_token answering `{"data": [{"access_token",
"user_id", "permissions"}]}`), reference/oauth-access-token (the flat answer and the legacy error
shape), reference/access_token (GET graph.instagram.com/access_token, grant_type=
ig_exchange_token -> `{"access_token", "token_type", "expires_in"}`), reference/
refresh_access_token (grant_type=ig_refresh_token) and instagram-api-with-instagram-login/
get-started (GET /me?fields=user_id,username)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import httpx
import pytest
import respx
from pydantic import SecretStr

from pressroom.config import Settings
from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.connection import oauth_app
from pressroom.providers.instagram import InstagramConnector
from pressroom.providers.registry import CONNECTORS
from pressroom.providers.registry import configured_providers

from .instagram_support import graph_error

APP = OAuthApp(
    provider="instagram",
    client_id="990602627938098",
    client_secret="ig-app-secret-5f4dcc3b",
    redirect_uri="https://pressroom.example/connect/instagram/callback",
)
NOW = 1_800_000_000
ME = "https://graph.instagram.com/v24.0/me"
CODE_URL = "https://api.instagram.com/oauth/access_token"
EXCHANGE_URL = "https://graph.instagram.com/access_token"
REFRESH_URL = "https://graph.instagram.com/refresh_access_token"
LONG_LIVED = {"access_token": "IGAA-long-1", "token_type": "bearer", "expires_in": 5183944}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def connector() -> InstagramConnector:
    return InstagramConnector(graph_version="v24.0", clock=lambda: NOW)


def query(request: httpx.Request) -> dict[str, str]:
    return dict(request.url.params)


def form(request: httpx.Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(request.content.decode()).items()}


def stored(**changes: object) -> dict[str, object]:
    """The credentials a connected account keeps, with `changes`."""
    return {
        "accessToken": "IGAA-long-1",
        "expiresAt": NOW + 5183944,
        "refreshableAt": NOW + 24 * 3600,
        "userId": "17841405822304914",
        "username": "pressroom",
        **changes,
    }


def me_answer() -> httpx.Response:
    return httpx.Response(
        200, json={"user_id": "17841405822304914", "username": "pressroom", "id": "7214"}
    )


def test_authorization_url_is_the_instagram_window_with_the_publishing_scopes() -> None:
    start = connector().start(APP, "state-abc")
    url = urlsplit(start.url)
    assert f"{url.scheme}://{url.netloc}{url.path}" == "https://www.instagram.com/oauth/authorize"
    assert {k: v[0] for k, v in parse_qs(url.query).items()} == {
        "client_id": APP.client_id,
        "redirect_uri": APP.redirect_uri,
        "response_type": "code",
        "scope": "instagram_business_basic,instagram_business_content_publish,"
        "instagram_business_manage_comments,instagram_business_manage_insights",
        "state": "state-abc",
    }
    assert start.secret == {}


async def test_code_becomes_a_long_lived_token_and_the_account_is_read(
    network: respx.MockRouter, http: httpx.AsyncClient
) -> None:
    code = network.post(CODE_URL).mock(
        return_value=httpx.Response(
            200,
            json={
                "data": [
                    {
                        "access_token": "IGAA-short-1",
                        "user_id": "17841405822304914",
                        "permissions": "instagram_business_basic,"
                        "instagram_business_content_publish",
                    }
                ]
            },
        )
    )
    exchange = network.get(EXCHANGE_URL).mock(return_value=httpx.Response(200, json=LONG_LIVED))
    me = network.get(ME).mock(return_value=me_answer())

    accounts = await connector().exchange(APP, "AQBx-hBsH3#_", {}, http)

    assert form(code.calls[0].request) == {
        "client_id": APP.client_id,
        "client_secret": APP.client_secret,
        "grant_type": "authorization_code",
        "redirect_uri": APP.redirect_uri,
        "code": "AQBx-hBsH3",
    }
    assert query(exchange.calls[0].request) == {
        "grant_type": "ig_exchange_token",
        "client_secret": APP.client_secret,
        "access_token": "IGAA-short-1",
    }
    assert query(me.calls[0].request) == {"fields": "user_id,username"}
    assert me.calls[0].request.headers["Authorization"] == "Bearer IGAA-long-1"
    assert len(accounts) == 1
    assert accounts[0].handle == "@pressroom"
    assert accounts[0].credentials == stored(
        scope="instagram_business_basic,instagram_business_content_publish"
    )


async def test_the_flat_code_answer_is_read_too(
    network: respx.MockRouter, http: httpx.AsyncClient
) -> None:
    network.post(CODE_URL).mock(
        return_value=httpx.Response(
            200, json={"access_token": "IGAA-short-2", "user_id": 17841405793187218}
        )
    )
    exchange = network.get(EXCHANGE_URL).mock(return_value=httpx.Response(200, json=LONG_LIVED))
    network.get(ME).mock(return_value=me_answer())
    accounts = await connector().exchange(APP, "code", {}, http)
    assert query(exchange.calls[0].request)["access_token"] == "IGAA-short-2"
    assert "scope" not in accounts[0].credentials


async def test_a_refused_code_is_auth_expired_in_instagrams_words_without_the_secret(
    network: respx.MockRouter, http: httpx.AsyncClient
) -> None:
    network.post(CODE_URL).mock(
        return_value=httpx.Response(
            400,
            json={
                "error_type": "OAuthException",
                "code": 400,
                "error_message": "Invalid authorization code (client_secret "
                "ig-app-secret-5f4dcc3b)",
            },
        )
    )
    with pytest.raises(ProviderError) as caught:
        await connector().exchange(APP, "spent-code", {}, http)
    assert caught.value.code == "auth_expired"
    assert "Invalid authorization code" in caught.value.message
    assert APP.client_secret not in caught.value.message
    assert "spent-code" not in caught.value.message


async def test_an_operators_token_is_verified_then_refreshed_to_learn_its_expiry(
    network: respx.MockRouter, http: httpx.AsyncClient
) -> None:
    me = network.get(ME).mock(return_value=me_answer())
    refresh = network.get(REFRESH_URL).mock(
        return_value=httpx.Response(200, json={**LONG_LIVED, "access_token": "IGAA-long-2"})
    )
    accounts = await connector().from_token(None, " IGAA-operator ", http)

    assert me.calls[0].request.headers["Authorization"] == "Bearer IGAA-operator"
    assert query(refresh.calls[0].request) == {
        "grant_type": "ig_refresh_token",
        "access_token": "IGAA-operator",
    }
    assert accounts[0].credentials == stored(accessToken="IGAA-long-2")


async def test_a_token_too_young_to_refresh_is_kept_with_its_expiry_unknown(
    network: respx.MockRouter, http: httpx.AsyncClient
) -> None:
    network.get(ME).mock(return_value=me_answer())
    network.get(REFRESH_URL).mock(
        return_value=graph_error(400, 100, "Invalid request: the token cannot be refreshed yet")
    )
    accounts = await connector().from_token(APP, "IGAA-fresh", http)
    assert accounts[0].credentials == stored(accessToken="IGAA-fresh", expiresAt=None)


async def test_a_token_instagram_refuses_stores_nothing(
    network: respx.MockRouter, http: httpx.AsyncClient
) -> None:
    network.get(ME).mock(
        return_value=graph_error(
            400, 190, "Error validating access token: Session has expired.", 463
        )
    )
    with pytest.raises(ProviderError) as caught:
        await connector().from_token(APP, "IGAA-dead", http)
    assert caught.value.code == "auth_expired"
    assert "Session has expired" in caught.value.message


async def test_instagram_connects_through_oauth_once_both_app_settings_are_set(
    settings: Settings,
) -> None:
    assert isinstance(CONNECTORS["instagram"], InstagramConnector)
    assert "instagram" not in configured_providers(settings)
    only_id = settings.model_copy(update={"instagram_client_id": "990602627938098"})
    assert "instagram" not in configured_providers(only_id)
    both = only_id.model_copy(update={"instagram_client_secret": SecretStr("s3cret")})
    assert "instagram" in configured_providers(both)
    app = oauth_app(both, "instagram")
    assert app is not None
    assert app.redirect_uri.endswith("/connect/instagram/callback")
