"""OAuth 2.0 Authorization Code with PKCE for X, storage-agnostic.

Follows https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/authorization-code
and .../user-access-token:

1. `start_authorization(app)` returns the URL to send the person to
   (`https://x.com/i/oauth2/authorize?response_type=code&client_id=...&redirect_uri=...
   &scope=...&state=...&code_challenge=...&code_challenge_method=S256`), the random `state`
   and the PKCE `code_verifier` (RFC 7636: 43-128 unreserved characters; the challenge is the
   base64url SHA-256 of the verifier, without padding). The caller keeps `state -> verifier`
   wherever it likes (a short-lived row, a signed cookie) until the callback.
2. On the callback, the caller checks the returned `state` with `states_match` and calls
   `exchange_code(app, code, verifier)`: `POST https://api.x.com/2/oauth2/token` with
   `grant_type=authorization_code`. A confidential client authenticates with HTTP Basic
   (client id and secret); a public client sends only its `client_id`. The answer holds an
   access token valid `expires_in` seconds (two hours) and, with the `offline.access` scope, a
   refresh token. The account is then read with `GET /2/users/me`.
3. `refresh_access_token` trades the refresh token for a new pair
   (`grant_type=refresh_token`); X rotates the refresh token, so the old one is dead once used:
   the adapter reports the new credentials at once (`on_credentials_changed`).

Credentials dict: `{"accessToken", "refreshToken", "expiresAt" (Unix seconds), "scope",
"userId", "username"}`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from urllib.parse import urlencode

import httpx

from pressroom.providers.http import given_or_own_client
from pressroom.providers.http import provider_request
from pressroom.providers.http import response_json
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure
from pressroom.providers.token_endpoint import TokenEndpoint
from pressroom.providers.token_endpoint import TokenSet

AUTHORIZE_URL = "https://x.com/i/oauth2/authorize"
API = "https://api.x.com"
TOKEN_URL = f"{API}/2/oauth2/token"
REVOKE_URL = f"{API}/2/oauth2/revoke"
ME_URL = f"{API}/2/users/me"
# Post, read the account, upload media, and get a refresh token (docs.x.com, OAuth 2.0 scopes).
DEFAULT_SCOPES = ("tweet.read", "tweet.write", "users.read", "media.write", "offline.access")
PROVIDER = "X"
# A confidential client authenticates with HTTP Basic and names itself in the form too; a
# public one (no secret) only names itself.
TOKEN_ENDPOINT = TokenEndpoint(TOKEN_URL, PROVIDER, PROVIDER, secret_in_form=False)


@dataclass(frozen=True)
class XApp:
    """The deployment's X app (developer portal, "User authentication settings")."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    redirect_uri: str | None = None
    scopes: tuple[str, ...] = DEFAULT_SCOPES

    def token_auth(self) -> httpx.BasicAuth | None:
        if self.client_secret:
            return httpx.BasicAuth(self.client_id, self.client_secret)
        return None


@dataclass(frozen=True)
class PendingAuthorization:
    """Keep `code_verifier` server-side under `state` until the callback; never show it."""

    url: str
    state: str
    code_verifier: str = field(repr=False)


def new_code_verifier() -> str:
    # 64 random bytes -> 86 base64url characters, all in RFC 7636's unreserved set.
    return secrets.token_urlsafe(64)


def code_challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def start_authorization(
    app: XApp, *, redirect_uri: str | None = None, state: str | None = None
) -> PendingAuthorization:
    redirect = redirect_uri or app.redirect_uri
    if not redirect:
        raise ValueError("an OAuth redirect URI is needed (XApp.redirect_uri or redirect_uri=)")
    state = state or secrets.token_urlsafe(32)
    verifier = new_code_verifier()
    query = urlencode(
        {
            "response_type": "code",
            "client_id": app.client_id,
            "redirect_uri": redirect,
            "scope": " ".join(app.scopes),
            "state": state,
            "code_challenge": code_challenge(verifier),
            "code_challenge_method": "S256",
        }
    )
    return PendingAuthorization(f"{AUTHORIZE_URL}?{query}", state, verifier)


def states_match(expected: str, received: str | None) -> bool:
    """Constant-time comparison of the stored and the returned `state`."""
    return received is not None and hmac.compare_digest(expected.encode(), received.encode())


async def exchange_code(
    app: XApp,
    code: str,
    code_verifier: str,
    *,
    redirect_uri: str | None = None,
    http: httpx.AsyncClient | None = None,
    clock: Callable[[], float] = time.time,
) -> dict[str, Any]:
    """Trade the callback's `code` for tokens and return the channel's credentials dict
    (with `userId` and `username` of the account that authorised)."""
    redirect = redirect_uri or app.redirect_uri
    if not redirect:
        raise ValueError("the redirect URI of the authorization request is needed")
    async with given_or_own_client(http) as client:
        credentials = await TOKEN_ENDPOINT.code_grant(
            client, app, code, redirect, clock, code_verifier=code_verifier
        )
        response = await provider_request(
            client,
            "GET",
            ME_URL,
            provider=PROVIDER,
            action="reading the account",
            bearer=credentials["accessToken"],
        )
    if not response.is_success:
        raise status_failure(response, PROVIDER, "reading the account", "")
    user = response_json(response).get("data")
    if isinstance(user, dict):
        credentials.update(userId=str(user.get("id", "")), username=user.get("username"))
    return credentials


async def refresh_access_token(
    http: httpx.AsyncClient,
    app: XApp,
    refresh_token: str,
    *,
    clock: Callable[[], float] = time.time,
) -> TokenSet:
    credentials = await TOKEN_ENDPOINT.refresh_grant(http, app, refresh_token, clock)
    return TokenSet.from_credentials(credentials)


async def revoke_token(
    app: XApp,
    token: str,
    *,
    token_type_hint: str | None = None,
    http: httpx.AsyncClient | None = None,
) -> None:
    """Revoke an access or refresh token (on disconnect): `POST /2/oauth2/revoke` with
    `token`, `client_id` and `token_type_hint` (`access_token` or `refresh_token`), a
    confidential client authenticating with HTTP Basic like at the token endpoint. A token
    already dead revokes as a success (RFC 7009 section 2.2: the server answers 200 for an
    invalid token). Raises ProviderError when X could not be told."""
    action = "revoking the token"
    data = {"token": token, "client_id": app.client_id}
    if token_type_hint:
        data["token_type_hint"] = token_type_hint
    async with given_or_own_client(http) as client:
        response = await provider_request(
            client,
            "POST",
            REVOKE_URL,
            provider=PROVIDER,
            action=action,
            data=data,
            auth=app.token_auth() or httpx.USE_CLIENT_DEFAULT,
        )
    if response.is_success:
        return
    body = response_json(response)
    described = body.get("error_description") or body.get("error") or ""
    detail = safe_detail(described, (token, app.client_secret))
    raise status_failure(response, PROVIDER, action, detail)
