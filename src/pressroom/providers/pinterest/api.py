"""Requests to the Pinterest API v5 for one channel, with its OAuth token kept fresh.

Tokens (https://developers.pinterest.com/docs/getting-started/set-up-authentication-and-authorization/):
an access token lives 30 days (`expires_in` 2592000), a refresh token a year
(`refresh_token_expires_in`). A session whose access token expires within `REFRESH_WITHIN`
refreshes it before its first call (tokens.py `refresh_tokens`), and a call answered 401 is
refreshed once and sent again. With continuous refresh Pinterest also returns a new refresh
token; the new set is reported through `on_credentials_changed` at once and kept in the
process's credential cache for callers still holding the old copy. Error answers are read
by errors.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from pressroom.providers.adapter import ChannelContext, ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.pinterest.errors import PROVIDER, classify
from pressroom.providers.pinterest.tokens import refresh_tokens
from pressroom.providers.session import BearerSession

API = "https://api.pinterest.com/v5"
DAY = 86400
# Refresh a 30-day token this long before it expires: an active channel refreshes about every
# 29 days, and a refresh that fails once still leaves a day to try again.
REFRESH_WITHIN = DAY


class PinterestSession(BearerSession):
    """One channel's API client. Build one per adapter call."""

    provider = PROVIDER

    def __init__(
        self,
        http: httpx.AsyncClient,
        app: OAuthApp | None,
        channel: ChannelContext,
        store: CredentialStore,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(http)
        self._app = app
        self._channel = channel
        self._store = store
        self.clock = clock
        self.credentials: dict[str, Any] = store.current(channel, "refreshToken")
        self._refreshed_this_call = False
        if not isinstance(self.credentials.get("accessToken"), str):
            raise ProviderError(
                "auth_expired", "The Pinterest channel has no access token; reconnect it."
            )

    def secrets(self) -> tuple[str | None, ...]:
        return (
            self.credentials.get("accessToken"),
            self.credentials.get("refreshToken"),
            self._app.client_secret if self._app else None,
        )

    @property
    def http(self) -> httpx.AsyncClient:
        return self._http

    def url(self, path: str) -> str:
        return API + path

    def access_token(self) -> str:
        token: str = self.credentials["accessToken"]
        return token

    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        return classify(response, action, self.secrets())

    def refresh_due(self) -> bool:
        expires_at = self.credentials.get("expiresAt")
        return isinstance(expires_at, int | float) and (self.clock() >= expires_at - REFRESH_WITHIN)

    def refreshable(self) -> bool:
        """Whether a refresh could be tried now: a refresh token not known to have expired,
        and the deployment's app to present it with."""
        refresh_expires = self.credentials.get("refreshExpiresAt")
        if isinstance(refresh_expires, int | float) and self.clock() >= refresh_expires:
            return False
        return isinstance(self.credentials.get("refreshToken"), str) and self._app is not None

    async def prepare(self) -> None:
        if self.refresh_due():
            await self._refresh(self.access_token())

    async def renewed(self, response: httpx.Response, used: str) -> bool:
        """A token refused with 401 is refreshed, once a call."""
        if response.status_code != 401 or self._refreshed_this_call:
            return False
        await self._refresh(used)
        return True

    async def _refresh(self, used_access: str) -> None:
        self.credentials = await self._store.renew(self._channel, used_access, self._renewal)

    async def _renewal(self, newest: dict[str, Any]) -> dict[str, Any]:
        self.credentials = newest
        refresh_token = newest.get("refreshToken")
        if not self.refreshable() or not isinstance(refresh_token, str) or self._app is None:
            raise ProviderError(
                "auth_expired",
                "The Pinterest access token has expired or is about to, and cannot be "
                "refreshed (no refresh token, an expired one, or no Pinterest app "
                "configured). Reconnect the channel.",
            )
        self._refreshed_this_call = True
        tokens = await refresh_tokens(self._http, self._app, refresh_token, clock=self.clock)
        return {**newest, **tokens}
