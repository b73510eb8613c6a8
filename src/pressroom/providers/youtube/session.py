"""Requests to the YouTube Data API for one channel, with its Google access token kept fresh.

Access tokens live an hour. Before a call, a token known to expire within `EXPIRY_MARGIN_SECONDS`
is refreshed with the refresh token (oauth.py); a call answered 401 is refreshed once and sent
again. Google does not rotate the refresh token, but the new access token is still reported
through `on_credentials_changed` and kept in the process's credential cache, so that the next call
does not refresh again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx

from pressroom.providers.adapter import ChannelContext, ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.session import BearerSession
from pressroom.providers.youtube import errors
from pressroom.providers.youtube.oauth import refresh_access_token

# Refresh a token this close to its expiry instead of letting a call (or a long upload) fail.
EXPIRY_MARGIN_SECONDS = 300
# Google keeps the refresh token across refreshes, so the credential cache tells a caller's
# stale copy by the access token it holds, the one a refresh replaced.
ROTATION_KEY = "accessToken"


class YouTubeSession(BearerSession):
    """One channel's API client; paths are absolute URLs (the API and its upload host, and
    upload session URIs). Build one per adapter call."""

    provider = errors.PROVIDER

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
        self._clock = clock
        self.credentials: dict[str, Any] = store.current(channel, ROTATION_KEY)
        self._refreshed_this_call = False
        if not isinstance(self.credentials.get("accessToken"), str):
            raise ProviderError(
                "auth_expired", "The YouTube channel has no access token; reconnect it."
            )

    def secrets(self) -> tuple[str | None, ...]:
        return (
            self.credentials.get("accessToken"),
            self.credentials.get("refreshToken"),
            self._app.client_secret if self._app else None,
        )

    def url(self, path: str) -> str:
        return path

    def access_token(self) -> str:
        token: str = self.credentials["accessToken"]
        return token

    def expiring(self) -> bool:
        expires_at = self.credentials.get("expiresAt")
        return isinstance(expires_at, int | float) and (
            self._clock() >= expires_at - EXPIRY_MARGIN_SECONDS
        )

    async def prepare(self) -> None:
        if self.expiring():
            await self._refresh(self.access_token())

    async def renewed(self, response: httpx.Response, used: str) -> bool:
        """A token refused with 401 is refreshed, once a call."""
        if response.status_code != 401 or self._refreshed_this_call:
            return False
        await self._refresh(used)
        return True

    async def _refresh(self, used_access: str) -> None:
        async with self._store.lock(self._channel):
            latest = self._store.current(self._channel, ROTATION_KEY)
            if latest.get("accessToken") != used_access:
                # Another call of this process refreshed while this one waited.
                self.credentials = latest
                return
            refresh_token = self.credentials.get("refreshToken")
            if not isinstance(refresh_token, str) or self._app is None:
                raise ProviderError(
                    "auth_expired",
                    "The YouTube access token has expired and cannot be refreshed (no refresh "
                    "token, or the deployment's YouTube app is not configured). Reconnect the "
                    "channel.",
                )
            self._refreshed_this_call = True
            tokens = await refresh_access_token(self._http, self._app, refresh_token, self._clock)
            updated = {**self.credentials, **tokens.as_credentials()}
            self.credentials = updated
            await self._store.replace(self._channel, used_access, updated)

    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        now = datetime.fromtimestamp(self._clock(), UTC)
        return errors.classify(response, action, now, self.secrets())
