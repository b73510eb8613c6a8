"""X OAuth 2.0 Authorization Code with PKCE.

Shapes follow https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/authorization-code
and .../user-access-token (authorize URL parameters, POST /2/oauth2/token with
grant_type=authorization_code or refresh_token, HTTP Basic for confidential clients, answer
`{"token_type", "expires_in", "access_token", "scope", "refresh_token"}`), RFC 7636 (S256) and
https://docs.x.com/x-api/users/user-lookup-me (GET /2/users/me)."""

from __future__ import annotations

import base64
import re
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.x.oauth import XApp
from pressroom.providers.x.oauth import code_challenge
from pressroom.providers.x.oauth import exchange_code
from pressroom.providers.x.oauth import start_authorization
from pressroom.providers.x.oauth import states_match

APP = XApp(
    client_id="M1M5R3BMVy13QmpScXkzTUt5OE46MTpjaQ",
    client_secret="app-secret-kjhgfd",
    redirect_uri="https://pressroom.example/connect/x/callback",
)
TOKEN_URL = "https://api.x.com/2/oauth2/token"


def test_pkce_challenge_is_the_rfc_7636_s256_of_the_verifier() -> None:
    # RFC 7636, Appendix B.
    assert (
        code_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )


def test_authorization_url_carries_state_scopes_and_the_s256_challenge() -> None:
    pending = start_authorization(APP)
    url = urlsplit(pending.url)
    assert f"{url.scheme}://{url.netloc}{url.path}" == "https://x.com/i/oauth2/authorize"
    query = {key: values[0] for key, values in parse_qs(url.query).items()}
    assert query == {
        "response_type": "code",
        "client_id": APP.client_id,
        "redirect_uri": APP.redirect_uri,
        "scope": "tweet.read tweet.write users.read media.write offline.access",
        "state": pending.state,
        "code_challenge": code_challenge(pending.code_verifier),
        "code_challenge_method": "S256",
    }
    assert re.fullmatch(r"[A-Za-z0-9\-._~]{43,128}", pending.code_verifier)
    assert pending.code_verifier not in pending.url


def test_every_authorization_gets_its_own_state_and_verifier() -> None:
    first, second = start_authorization(APP), start_authorization(APP)
    assert first.state != second.state
    assert first.code_verifier != second.code_verifier


def test_states_match_only_the_same_state() -> None:
    assert states_match("abc", "abc")
    assert not states_match("abc", "abd")
    assert not states_match("abc", None)


async def test_code_exchange_sends_the_verifier_and_returns_the_account_credentials(
    network: respx.MockRouter,
) -> None:
    token = network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            200,
            json={
                "token_type": "bearer",
                "expires_in": 7200,
                "access_token": "access-x-1",
                "scope": "tweet.read tweet.write users.read media.write offline.access",
                "refresh_token": "refresh-x-1",
            },
        )
    )
    me = network.get("https://api.x.com/2/users/me").mock(
        return_value=httpx.Response(
            200, json={"data": {"id": "2244994945", "name": "Pressroom", "username": "pressroom"}}
        )
    )
    credentials = await exchange_code(APP, "code-123", "verifier-abc", clock=lambda: 1_800_000_000)

    request = token.calls[0].request
    assert {k: v[0] for k, v in parse_qs(request.content.decode()).items()} == {
        "grant_type": "authorization_code",
        "code": "code-123",
        "redirect_uri": APP.redirect_uri,
        "code_verifier": "verifier-abc",
        "client_id": APP.client_id,
    }
    expected_basic = base64.b64encode(f"{APP.client_id}:app-secret-kjhgfd".encode()).decode()
    assert request.headers["Authorization"] == f"Basic {expected_basic}"
    assert me.calls[0].request.headers["Authorization"] == "Bearer access-x-1"
    assert credentials == {
        "accessToken": "access-x-1",
        "refreshToken": "refresh-x-1",
        "expiresAt": 1_800_007_200,
        "scope": "tweet.read tweet.write users.read media.write offline.access",
        "userId": "2244994945",
        "username": "pressroom",
    }


async def test_public_client_sends_no_basic_auth(network: respx.MockRouter) -> None:
    token = network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            200, json={"token_type": "bearer", "expires_in": 7200, "access_token": "a"}
        )
    )
    network.get("https://api.x.com/2/users/me").mock(
        return_value=httpx.Response(200, json={"data": {"id": "1", "username": "u"}})
    )
    public = XApp(client_id="public-client", redirect_uri="https://pressroom.example/cb")
    await exchange_code(public, "code", "verifier")
    assert "Authorization" not in token.calls[0].request.headers


async def test_refused_code_is_auth_expired_without_the_code_in_the_message(
    network: respx.MockRouter,
) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            400,
            json={
                "error": "invalid_request",
                "error_description": "Value passed for the code code-123 was invalid.",
            },
        )
    )
    with pytest.raises(ProviderError) as caught:
        await exchange_code(APP, "code-123", "verifier-abc")
    assert caught.value.code == "auth_expired"
    assert "code-123" not in str(caught.value)
