"""Connecting a Threads account: Threads OAuth, long-lived tokens and their refresh.

Follows https://developers.facebook.com/docs/threads/get-started/get-access-tokens-and-permissions
and .../get-started/long-lived-tokens:

1. `start`: the Authorization Window, `https://threads.net/oauth/authorize?client_id=...
   &redirect_uri=...&scope=...&response_type=code&state=...`, the scopes comma-separated.
   Threads has no PKCE: nothing is kept for the callback but the `state` the caller keeps.
2. `exchange`: `POST https://graph.threads.net/oauth/access_token` with `client_id`,
   `client_secret`, `code`, `grant_type=authorization_code` and the same `redirect_uri` ->
   `{"access_token", "user_id"}`, a token valid one hour. It is traded at once for a long-lived
   one: `GET https://graph.threads.net/access_token?grant_type=th_exchange_token
   &client_secret=...&access_token=...` -> `{"access_token", "token_type", "expires_in"}`
   (60 days). The account is read with `GET /v1.0/me?fields=id,username`.
3. `refresh_long_lived`: `GET https://graph.threads.net/refresh_access_token
   ?grant_type=th_refresh_token&access_token=...` -> the same shape, valid 60 days again. A
   token can be refreshed once it is 24 hours old and until it expires; an expired one cannot.

Credentials dict: `{"accessToken", "expiresAt" (Unix seconds), "userId", "username"}`.
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
from pressroom.providers.connection import CodeFlowConnector
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.connection import OAuthApp
from pressroom.providers.connection import operator_token
from pressroom.providers.http import provider_request
from pressroom.providers.threads.api import API
from pressroom.providers.threads.api import GRAPH
from pressroom.providers.threads.api import answer_json
from pressroom.providers.threads.errors import PROVIDER

TOKEN_URL = f"{GRAPH}/oauth/access_token"
LONG_LIVED_URL = f"{GRAPH}/access_token"
REFRESH_URL = f"{GRAPH}/refresh_access_token"
# A long-lived token lives 60 days from its issue or last refresh. When Threads will not yet
# refresh an operator's token (it must be 24 hours old), it is at most a day old: it still has
# at least 59 days, which is what is recorded until the first refresh tells the real expiry.
LONG_LIVED_SECONDS = 60 * 86400
YOUNGEST_EXPIRY_SECONDS = LONG_LIVED_SECONDS - 86400


@dataclass(frozen=True)
class LongLivedToken:
    access_token: str = field(repr=False)
    expires_at: int | None


class ThreadsConnector(CodeFlowConnector):
    """Connects Threads accounts (providers/connection.py `OAuthConnector`)."""

    provider = "threads"
    authorize_url = "https://threads.net/oauth/authorize"
    # https://developers.facebook.com/docs/threads/get-started (Authorization), what each is for:
    # every call; publishing; posting replies (a thread's follow-ups, the first comment); reading
    # replies (finding those an interrupted publish already made); media insights; deleting.
    scopes = (
        "threads_basic",
        "threads_content_publish",
        "threads_manage_replies",
        "threads_read_replies",
        "threads_manage_insights",
        "threads_delete",
    )

    async def exchange(
        self, app: OAuthApp, code: str, kept: Mapping[str, str], http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        action = "exchanging the authorization code"
        response = await provider_request(
            http,
            "POST",
            TOKEN_URL,
            provider=PROVIDER,
            action=action,
            data={
                "client_id": app.client_id,
                "client_secret": app.client_secret,
                "code": code,
                "grant_type": "authorization_code",
                "redirect_uri": app.redirect_uri,
            },
        )
        body = answer_json(response, action, (app.client_secret, code))
        short_lived = _token(body, action)
        action = "exchanging the token for a long-lived one"
        response = await provider_request(
            http,
            "GET",
            LONG_LIVED_URL,
            provider=PROVIDER,
            action=action,
            params={
                "grant_type": "th_exchange_token",
                "client_secret": app.client_secret,
                "access_token": short_lived,
            },
        )
        body = answer_json(response, action, (app.client_secret, short_lived))
        token = LongLivedToken(_token(body, action), _expiry(body, self._clock))
        return [_connected(token, await read_account(http, token.access_token))]

    async def from_token(
        self, app: OAuthApp | None, token: str, http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        """An operator's long-lived token: verified by reading the account, then refreshed so
        that its expiry is known (and its 60 days start again)."""
        token = operator_token(token, "A long-lived Threads access token is needed.")
        account = await read_account(http, token)
        try:
            fresh = await refresh_long_lived(http, token, self._clock)
        except ProviderError as error:
            if error.retryable:
                raise
            # The token works but Threads will not refresh it yet: it is under a day old.
            fresh = LongLivedToken(token, int(self._clock()) + YOUNGEST_EXPIRY_SECONDS)
        return [_connected(fresh, account)]


CONNECTOR = ThreadsConnector()


async def refresh_long_lived(
    http: httpx.AsyncClient, token: str, clock: Callable[[], float] = time.time
) -> LongLivedToken:
    action = "refreshing the long-lived token"
    response = await provider_request(
        http,
        "GET",
        REFRESH_URL,
        provider=PROVIDER,
        action=action,
        params={"grant_type": "th_refresh_token", "access_token": token},
    )
    body = answer_json(response, action, (token,))
    return LongLivedToken(_token(body, action), _expiry(body, clock))


async def read_account(http: httpx.AsyncClient, token: str) -> dict[str, str]:
    """The account a token acts for: `{"id", "username"}` (`GET /v1.0/me`)."""
    action = "reading the account"
    params = {"fields": "id,username", "access_token": token}
    response = await provider_request(
        http, "GET", f"{API}/me", provider=PROVIDER, action=action, params=params
    )
    body = answer_json(response, action, (token,))
    user_id = body.get("id")
    if not isinstance(user_id, str | int) or not str(user_id):
        raise ProviderError("provider_unavailable", "Threads answered /me without an id.")
    username = body.get("username")
    return {"id": str(user_id), "username": username if isinstance(username, str) else ""}


def _connected(token: LongLivedToken, account: dict[str, str]) -> ConnectedAccount:
    credentials: dict[str, Any] = {"accessToken": token.access_token, "userId": account["id"]}
    if token.expires_at is not None:
        credentials["expiresAt"] = token.expires_at
    username = account["username"]
    if username:
        credentials["username"] = username
    return ConnectedAccount(credentials=credentials, handle=f"@{username}" if username else None)


def _token(body: Mapping[str, object], action: str) -> str:
    token = body.get("access_token")
    if not isinstance(token, str) or not token:
        raise ProviderError("provider_unavailable", f"Threads answered {action} without a token.")
    return token


def _expiry(body: Mapping[str, object], clock: Callable[[], float]) -> int | None:
    expires_in = body.get("expires_in")
    return int(clock()) + expires_in if isinstance(expires_in, int) else None
