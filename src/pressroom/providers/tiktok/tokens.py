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
from typing import Any

import httpx

from pressroom.providers.connection import OAuthApp
from pressroom.providers.tiktok.errors import PROVIDER
from pressroom.providers.token_endpoint import TokenEndpoint

TOKEN_URL = "https://open.tiktokapis.com/v2/oauth/token/"


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
