"""Pinterest's token endpoint: `POST https://api.pinterest.com/v5/oauth/token`, the app
authenticating with HTTP Basic (client id and secret), a form body
(https://developers.pinterest.com/docs/api/v5/oauth-token).

- `grant_type=authorization_code&code&redirect_uri`: the callback's code for a token set.
- `grant_type=refresh_token&refresh_token&continuous_refresh=true`: a new access token; with
  continuous refresh Pinterest also answers a new refresh token (and its lifetime), so that an
  active channel never reaches the end of its refresh token's life.

The answer: `{"access_token", "refresh_token", "expires_in", "refresh_token_expires_in",
"scope", "token_type": "bearer", "response_type"}`; lifetimes in seconds. Credentials keep
`accessToken`, `refreshToken`, `expiresAt` and `refreshExpiresAt` (Unix seconds), `scope`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.http import provider_request, response_json
from pressroom.providers.pinterest.errors import PROVIDER, error_message
from pressroom.providers.pinterest.errors import classify as classify_answer

TOKEN_URL = "https://api.pinterest.com/v5/oauth/token"


async def exchange_code(
    http: httpx.AsyncClient, app: OAuthApp, code: str, *, clock: Callable[[], float] = time.time
) -> dict[str, Any]:
    """The callback's code traded for the channel's token credentials."""
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": app.redirect_uri}
    return await _token_request(http, app, form, "exchanging the authorization code", clock)


async def refresh_tokens(
    http: httpx.AsyncClient,
    app: OAuthApp,
    refresh_token: str,
    *,
    clock: Callable[[], float] = time.time,
) -> dict[str, Any]:
    """New token credentials for `refresh_token` (which may itself be replaced)."""
    form = {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "continuous_refresh": "true",
    }
    return await _token_request(http, app, form, "refreshing the access token", clock)


async def _token_request(
    http: httpx.AsyncClient,
    app: OAuthApp,
    form: Mapping[str, str],
    action: str,
    clock: Callable[[], float],
) -> dict[str, Any]:
    response = await provider_request(
        http,
        "POST",
        TOKEN_URL,
        provider=PROVIDER,
        action=action,
        data=dict(form),
        auth=httpx.BasicAuth(app.client_id, app.client_secret),
    )
    spent = (form.get("code"), form.get("refresh_token"), app.client_secret)
    if not response.is_success:
        if response.status_code in (400, 401):
            # An invalid, spent or revoked code or refresh token: only a new consent helps.
            detail = error_message(response, spent) or "invalid grant"
            raise ProviderError(
                "auth_expired", f"Pinterest refused {action} ({detail}). Reconnect the channel."
            )
        raise classify_answer(response, action, spent)
    return token_credentials(response_json(response), action, int(clock()))


def token_credentials(body: Mapping[str, object], action: str, now: int) -> dict[str, Any]:
    """The credentials a token answer gives (only the fields it carries)."""
    access = body.get("access_token")
    if not isinstance(access, str) or not access:
        raise ProviderError("provider_unavailable", f"Pinterest answered {action} without a token.")
    credentials: dict[str, Any] = {"accessToken": access}
    refresh = body.get("refresh_token")
    if isinstance(refresh, str) and refresh:
        credentials["refreshToken"] = refresh
    for source, key in (
        ("expires_in", "expiresAt"),
        ("refresh_token_expires_in", "refreshExpiresAt"),
    ):
        seconds = body.get(source)
        if isinstance(seconds, int) and not isinstance(seconds, bool) and seconds > 0:
            credentials[key] = now + seconds
    scope = body.get("scope")
    if isinstance(scope, str) and scope:
        credentials["scope"] = scope
    return credentials
