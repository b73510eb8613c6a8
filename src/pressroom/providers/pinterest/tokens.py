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
from collections.abc import Callable
from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.pinterest.errors import PROVIDER
from pressroom.providers.pinterest.errors import classify as classify_answer
from pressroom.providers.pinterest.errors import error_message
from pressroom.providers.token_endpoint import Secrets
from pressroom.providers.token_endpoint import TokenEndpoint

TOKEN_URL = "https://api.pinterest.com/v5/oauth/token"


def _failure(response: httpx.Response, action: str, detail: str, secrets: Secrets) -> ProviderError:
    return classify_answer(response, action, secrets)


# The app authenticates with HTTP Basic; an invalid, spent or revoked code or refresh token is
# refused with 400 or 401, any other failure is read like an API answer (errors.py).
TOKEN_ENDPOINT = TokenEndpoint(
    TOKEN_URL,
    PROVIDER,
    PROVIDER,
    client_id_field=None,
    secret_in_form=False,
    describe=error_message,
    failure=_failure,
)


async def refresh_tokens(
    http: httpx.AsyncClient,
    app: OAuthApp,
    refresh_token: str,
    *,
    clock: Callable[[], float] = time.time,
) -> dict[str, Any]:
    """New token credentials for `refresh_token` (which may itself be replaced)."""
    return await TOKEN_ENDPOINT.refresh_grant(
        http, app, refresh_token, clock, continuous_refresh="true"
    )
