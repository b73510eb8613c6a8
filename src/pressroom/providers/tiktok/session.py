"""Requests to the TikTok v2 API for one channel, with its access token kept fresh.

An access token lives 24 hours, its refresh token 365 days (tokens.py). Before a call, a token
known to expire within `EXPIRY_MARGIN_SECONDS` is refreshed; a call refused with
`access_token_invalid` is refreshed once and sent again. New credentials are reported through
`on_credentials_changed` at once and kept in the process's credential cache, so a call still
holding the old copy does not spend the old refresh token again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from pressroom.providers.adapter import ChannelContext, ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.http import response_json
from pressroom.providers.session import BearerSession
from pressroom.providers.tiktok.errors import PROVIDER, classify, is_failure, tiktok_error
from pressroom.providers.tiktok.tokens import refresh_tokens

API = "https://open.tiktokapis.com"
# Refresh this long before expiry: a publish that uploads for minutes must not outlive its token.
EXPIRY_MARGIN_SECONDS = 600


def renewal_blocker(credentials: dict[str, Any], app: OAuthApp | None, now: float) -> str | None:
    """Why an expired access token could not be refreshed now, or None if it could."""
    refresh_token = credentials.get("refreshToken")
    if not isinstance(refresh_token, str) or not refresh_token:
        return "the channel holds no refresh token"
    if app is None:
        return "the deployment's TikTok app (PRESSROOM_TIKTOK_CLIENT_ID/_SECRET) is not configured"
    refresh_expires = credentials.get("refreshExpiresAt")
    if isinstance(refresh_expires, int | float) and now >= refresh_expires:
        return "its refresh token has expired (they last 365 days)"
    return None


class TikTokSession(BearerSession):
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
                "auth_expired", "The TikTok channel has no access token; reconnect it."
            )

    def secrets(self) -> tuple[str | None, ...]:
        return (
            self.credentials.get("accessToken"),
            self.credentials.get("refreshToken"),
            self._app.client_secret if self._app else None,
        )

    def url(self, path: str) -> str:
        return path if path.startswith("https://") else API + path

    def access_token(self) -> str:
        token: str = self.credentials["accessToken"]
        return token

    def expires_soon(self) -> bool:
        expires_at = self.credentials.get("expiresAt")
        return isinstance(expires_at, int | float) and (
            self.clock() >= expires_at - EXPIRY_MARGIN_SECONDS
        )

    async def prepare(self) -> None:
        if self.expires_soon():
            await self.refresh(self.access_token())

    async def renewed(self, response: httpx.Response, used: str) -> bool:
        """A token refused as invalid is refreshed, once a call."""
        refused = response.status_code == 401 or tiktok_error(response)[0] == "access_token_invalid"
        if not refused or self._refreshed_this_call:
            return False
        await self.refresh(used)
        return True

    async def refresh(self, used_access: str) -> None:
        async with self._store.lock(self._channel):
            latest = self._store.current(self._channel, "refreshToken")
            if latest.get("accessToken") != used_access:
                # Another call of this process refreshed while this one waited.
                self.credentials = latest
                return
            blocker = renewal_blocker(self.credentials, self._app, self.clock())
            if blocker is not None or self._app is None:
                raise ProviderError(
                    "auth_expired",
                    f"The TikTok access token has expired and cannot be refreshed ({blocker}). "
                    "Reconnect the channel.",
                )
            self._refreshed_this_call = True
            spent = self.credentials["refreshToken"]
            tokens = await refresh_tokens(self._http, self._app, spent, self.clock)
            updated = {**self.credentials, **tokens}
            self.credentials = updated
            await self._store.replace(self._channel, spent, updated)

    async def call(self, method: str, path: str, action: str, **options: Any) -> dict[str, Any]:
        """The `data` object of a successful answer; a classified ProviderError otherwise."""
        response = await self.request(method, path, action, **options)
        if is_failure(response):
            raise self.classify(response, action)
        data = response_json(response).get("data")
        return data if isinstance(data, dict) else {}

    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        return classify(response, action, self.secrets())
