"""TikTok's token endpoint (https://developers.tiktok.com/doc/oauth-user-access-token-management).

`POST https://open.tiktokapis.com/v2/oauth/token/`, a form (`application/x-www-form-urlencoded`)
with `client_key`, `client_secret` and either `code`, `grant_type=authorization_code` and
`redirect_uri`, or `grant_type=refresh_token` and `refresh_token`. The answer: `open_id`,
`scope` (comma-separated), `access_token` (valid `expires_in` seconds: 24 hours),
`refresh_token` (valid `refresh_expires_in` seconds: 365 days; TikTok may hand back a new one
on a refresh, so the newest is always kept), `token_type`. A refusal answers
`{"error", "error_description", "log_id"}`.

Credentials dict: `{"accessToken", "expiresAt", "refreshToken", "refreshExpiresAt" (Unix
seconds), "scope", "openId"}` (plus `unionId`, `displayName`, `username` from the account).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import httpx

from pressroom.providers.connection import OAuthApp
from pressroom.providers.http import provider_request
from pressroom.providers.http import response_json
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure
from pressroom.providers.tiktok.errors import PROVIDER
from pressroom.providers.token_endpoint import TokenEndpoint

TOKEN_URL = "https://open.tiktokapis.com/v2/oauth/token/"
# https://developers.tiktok.com/doc/oauth-user-access-token-management ("Revoke access"): a form
# with `client_key`, `client_secret` and `token` (the user access token); it "disconnects your
# app from the user's TikTok account". Success answers an empty body.
REVOKE_URL = "https://open.tiktokapis.com/v2/oauth/revoke/"


async def _app_form(
    http: httpx.AsyncClient, app: OAuthApp, url: str, fields: Mapping[str, str], action: str
) -> httpx.Response:
    """`POST url` with a form of the app's `client_key` and `client_secret` and `fields`."""
    return await provider_request(
        http,
        "POST",
        url,
        provider=PROVIDER,
        action=action,
        data={"client_key": app.client_id, "client_secret": app.client_secret, **fields},
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )


# TikTok names the client id `client_key`, answers some refusals with 200 and no token, and
# adds the account's `open_id`.
TOKEN_ENDPOINT = TokenEndpoint(
    TOKEN_URL,
    PROVIDER,
    PROVIDER,
    client_id_field="client_key",
    headers={"Content-Type": "application/x-www-form-urlencoded"},
    refresh_lifetime_field="refresh_expires_in",
    kept_fields=(("open_id", "openId"),),
    refused_without_token=True,
)


async def refresh_tokens(
    http: httpx.AsyncClient, app: OAuthApp, refresh_token: str, clock: Callable[[], float]
) -> dict[str, Any]:
    return await TOKEN_ENDPOINT.refresh_grant(http, app, refresh_token, clock)


async def revoke_token(http: httpx.AsyncClient, app: OAuthApp, token: str) -> bool:
    """Revoke the user access token `token` (and with it the app's access to the account).
    False when TikTok refuses it as invalid or expired (`access_token_invalid`, `invalid_grant`
    or a 401): the caller then revokes a fresh one. Raises ProviderError when TikTok could not
    be told."""
    action = "revoking the access token"
    response = await _app_form(http, app, REVOKE_URL, {"token": token}, action)
    body = response_json(response)
    error = body.get("error")
    code = error.get("code") if isinstance(error, dict) else error
    if response.is_success and code in (None, "", "ok"):
        return True
    if response.status_code == 401 or code in _DEAD_TOKEN:
        return False
    said = body.get("error_description") or (
        error.get("message") if isinstance(error, dict) else None
    )
    detail = safe_detail(str(said or code or ""), (app.client_secret, token))
    raise status_failure(response, PROVIDER, action, detail)


# What TikTok answers for a token it no longer honours: the OAuth endpoints' `error` and the v2
# API's `error.code` (https://developers.tiktok.com/doc/tiktok-api-v2-error-handling).
_DEAD_TOKEN = frozenset({"access_token_invalid", "invalid_grant", "invalid_token"})
