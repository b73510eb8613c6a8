"""LinkedIn's token endpoint: codes and refresh tokens traded for access tokens.

`POST https://www.linkedin.com/oauth/v2/accessToken`, a urlencoded form with the app's
`client_id` and `client_secret` (https://learn.microsoft.com/en-us/linkedin/shared/authentication/
authorization-code-flow). The answer: `access_token`, `expires_in` (60 days), `scope`, and for
apps approved for programmatic refresh tokens `refresh_token` and `refresh_token_expires_in`
(a year, counted from the first grant: refreshing does not extend it;
.../shared/authentication/programmatic-refresh-tokens).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.http import provider_request, response_json, safe_detail, status_failure
from pressroom.providers.linkedin.errors import PROVIDER

TOKEN_URL = "https://www.linkedin.com/oauth/v2/accessToken"


def _seconds(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


async def token_request(
    http: httpx.AsyncClient,
    app: OAuthApp,
    form: Mapping[str, str],
    action: str,
    *,
    clock: Callable[[], float] = time.time,
) -> dict[str, Any]:
    """The credentials a grant gives: `accessToken`, `expiresAt`, and when LinkedIn issued one,
    `refreshToken` and `refreshExpiresAt` (Unix seconds), plus the granted `scope`."""
    sent = {**form, "client_id": app.client_id, "client_secret": app.client_secret}
    response = await provider_request(
        http, "POST", TOKEN_URL, provider=PROVIDER, action=action, data=sent
    )
    body = response_json(response)
    if not response.is_success:
        said = body.get("error_description") or body.get("error") or ""
        secrets = (app.client_secret, form.get("code"), form.get("refresh_token"))
        detail = safe_detail(said, secrets)
        if response.status_code in (400, 401):
            # invalid_grant / invalid_request: the code or refresh token is spent or expired.
            return _refused(action, detail)
        raise status_failure(response, PROVIDER, action, detail)
    access = body.get("access_token")
    if not isinstance(access, str) or not access:
        raise ProviderError("provider_unavailable", f"LinkedIn answered {action} without a token.")
    now = int(clock())
    credentials: dict[str, Any] = {"accessToken": access}
    expires_in = _seconds(body.get("expires_in"))
    if expires_in is not None:
        credentials["expiresAt"] = now + expires_in
    refresh = body.get("refresh_token")
    if isinstance(refresh, str) and refresh:
        credentials["refreshToken"] = refresh
        refresh_in = _seconds(body.get("refresh_token_expires_in"))
        if refresh_in is not None:
            credentials["refreshExpiresAt"] = now + refresh_in
    if isinstance(body.get("scope"), str):
        credentials["scope"] = body["scope"]
    return credentials


def _refused(action: str, detail: str) -> dict[str, Any]:
    raise ProviderError(
        "auth_expired",
        f"LinkedIn refused {action} ({detail or 'invalid grant'}). Reconnect the channel.",
    )


async def refresh_credentials(
    http: httpx.AsyncClient,
    app: OAuthApp,
    refresh_token: str,
    *,
    clock: Callable[[], float] = time.time,
) -> dict[str, Any]:
    return await token_request(
        http,
        app,
        {"grant_type": "refresh_token", "refresh_token": refresh_token},
        "refreshing the access token",
        clock=clock,
    )
