"""Instagram User access tokens: the code exchange, the long-lived exchange and the refresh.

Business Login for Instagram
(https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/business-login):
1. `POST https://api.instagram.com/oauth/access_token` with `client_id`, `client_secret`,
   `grant_type=authorization_code`, `redirect_uri` and `code` -> a short-lived token (one hour),
   the Instagram-scoped user id and the permissions granted, either flat
   `{"access_token", "user_id", "permissions"}` or wrapped in `{"data": [...]}`.
2. `GET https://graph.instagram.com/access_token?grant_type=ig_exchange_token&client_secret=
   &access_token=` -> `{"access_token", "token_type": "bearer", "expires_in"}`, a long-lived
   token valid 60 days (reference/access_token).
3. `GET https://graph.instagram.com/refresh_access_token?grant_type=ig_refresh_token
   &access_token=` -> the same shape: a long-lived token "at least 24 hours old but [that] has
   not expired" is valid 60 days again from the refresh (reference/refresh_access_token).

Those two endpoints take the token in the query string as documented; httpx's own request log is
silenced (kit.outbound), and errors never quote the URL.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import response_json
from pressroom.providers.http import transport_failure
from pressroom.providers.instagram.errors import PROVIDER
from pressroom.providers.instagram.errors import classify

CODE_URL = "https://api.instagram.com/oauth/access_token"
EXCHANGE_URL = "https://graph.instagram.com/access_token"
REFRESH_URL = "https://graph.instagram.com/refresh_access_token"
# A long-lived token can be refreshed once it is a day old.
REFRESH_AGE_SECONDS = 24 * 3600

Clock = Callable[[], float]


@dataclass(frozen=True)
class ShortLivedGrant:
    access_token: str = field(repr=False)
    user_id: str | None
    permissions: str | None


@dataclass(frozen=True)
class LongLivedToken:
    access_token: str = field(repr=False)
    expires_at: int | None
    # Unix seconds from which Instagram accepts a refresh.
    refreshable_at: int

    def as_credentials(self) -> dict[str, Any]:
        return {
            "accessToken": self.access_token,
            "expiresAt": self.expires_at,
            "refreshableAt": self.refreshable_at,
        }


async def exchange_code(
    http: httpx.AsyncClient,
    *,
    client_id: str,
    client_secret: str,
    redirect_uri: str,
    code: str,
) -> ShortLivedGrant:
    action = "exchanging the authorization code"
    form = {
        "client_id": client_id,
        "client_secret": client_secret,
        "grant_type": "authorization_code",
        "redirect_uri": redirect_uri,
        "code": code,
    }
    try:
        response = await http.post(CODE_URL, data=form)
    except httpx.HTTPError as exc:
        raise transport_failure(exc, PROVIDER, action) from None
    if not response.is_success:
        raise _token_refusal(response, action, (client_secret, code))
    body = response_json(response)
    data = body.get("data")
    grant = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else body
    token = grant.get("access_token")
    if not isinstance(token, str) or not token:
        raise ProviderError("provider_unavailable", f"Instagram answered {action} without a token.")
    user_id = grant.get("user_id")
    permissions = grant.get("permissions")
    if isinstance(permissions, list):
        permissions = ",".join(str(p) for p in permissions)
    return ShortLivedGrant(
        access_token=token,
        user_id=str(user_id) if isinstance(user_id, int | str) and user_id != "" else None,
        permissions=permissions if isinstance(permissions, str) else None,
    )


async def long_lived_token(
    http: httpx.AsyncClient, short_lived: str, *, client_secret: str, clock: Clock = time.time
) -> LongLivedToken:
    params = {
        "grant_type": "ig_exchange_token",
        "client_secret": client_secret,
        "access_token": short_lived,
    }
    secrets = (short_lived, client_secret)
    action = "getting a long-lived token"
    return await _token_call(http, EXCHANGE_URL, params, action, secrets, clock, connecting=True)


async def refresh_token(
    http: httpx.AsyncClient, token: str, *, clock: Clock = time.time
) -> LongLivedToken:
    """A refusal is `auth_expired` only when Instagram says the token itself is dead (code 190):
    a refresh refused for another reason leaves a token that still works until its expiry."""
    params = {"grant_type": "ig_refresh_token", "access_token": token}
    action = "refreshing the token"
    return await _token_call(http, REFRESH_URL, params, action, (token,), clock, connecting=False)


async def _token_call(
    http: httpx.AsyncClient,
    url: str,
    params: Mapping[str, str],
    action: str,
    secrets: tuple[str, ...],
    clock: Clock,
    *,
    connecting: bool,
) -> LongLivedToken:
    issued = int(clock())
    try:
        response = await http.get(url, params=params)
    except httpx.HTTPError as exc:
        raise transport_failure(exc, PROVIDER, action) from None
    if not response.is_success:
        if connecting:
            raise _token_refusal(response, action, secrets)
        raise classify(response, action, secrets)
    body = response_json(response)
    token = body.get("access_token")
    if not isinstance(token, str) or not token:
        raise ProviderError("provider_unavailable", f"Instagram answered {action} without a token.")
    expires_in = body.get("expires_in")
    return LongLivedToken(
        access_token=token,
        expires_at=issued + expires_in if isinstance(expires_in, int) and expires_in > 0 else None,
        refreshable_at=issued + REFRESH_AGE_SECONDS,
    )


def _token_refusal(
    response: httpx.Response, action: str, secrets: tuple[str, ...]
) -> ProviderError:
    error = classify(response, action, secrets)
    # While connecting, a 400 is a spent, revoked or foreign code or token.
    if error.code == "invalid_request" and response.status_code in (400, 401):
        return ProviderError("auth_expired", f"{error.message}. Reconnect the channel.")
    return error
