"""Requests to the TikTok v2 API for one channel, with its access token kept fresh.

An access token lives 24 hours, its refresh token 365 days (tokens.py). Before a call, a token
known to expire within `EXPIRY_MARGIN_SECONDS` is refreshed; a call refused with
`access_token_invalid` is refreshed once and sent again. New credentials are reported through
`on_credentials_changed` at once and kept in the process's credential cache, so a call still
holding the old copy does not spend the old refresh token again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
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


@dataclass
class ChannelTokens:
    """The channel's current credentials, and how to renew them."""

    app: OAuthApp | None
    channel: ChannelContext
    store: CredentialStore
    clock: Callable[[], float]
    credentials: dict[str, Any] = field(init=False, repr=False)
    renewed: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.credentials = self.store.current(self.channel, "refreshToken")
        if not isinstance(self.credentials.get("accessToken"), str):
            raise ProviderError(
                "auth_expired", "The TikTok channel has no access token; reconnect it."
            )

    @property
    def access(self) -> str:
        return str(self.credentials["accessToken"])

    def expiring(self) -> bool:
        """Whether the access token ends within the margin (unknown expiry: it is used)."""
        expires_at = self.credentials.get("expiresAt")
        if not isinstance(expires_at, int | float):
            return False
        return expires_at - self.clock() <= EXPIRY_MARGIN_SECONDS

    async def renew(self, http: httpx.AsyncClient, replacing: str) -> None:
        """New tokens in place of the access token `replacing`, unless this process has
        already renewed it (another call, while this one waited for the lock)."""
        async with self.store.lock(self.channel):
            newest = self.store.current(self.channel, "refreshToken")
            if newest.get("accessToken") != replacing:
                self.credentials = newest
                return
            blocker = renewal_blocker(self.credentials, self.app, self.clock())
            if blocker is not None or self.app is None:
                raise ProviderError(
                    "auth_expired",
                    f"The TikTok access token has expired and cannot be refreshed ({blocker}). "
                    "Reconnect the channel.",
                )
            self.renewed = True
            spent = str(self.credentials["refreshToken"])
            fresh = await refresh_tokens(http, self.app, spent, self.clock)
            self.credentials = {**self.credentials, **fresh}
            await self.store.replace(self.channel, spent, self.credentials)


class TikTokSession(BearerSession):
    """One channel's API client. Build one per adapter call."""

    provider = PROVIDER

    def __init__(self, http: httpx.AsyncClient, tokens: ChannelTokens) -> None:
        super().__init__(http)
        self.tokens = tokens

    @property
    def credentials(self) -> dict[str, Any]:
        return self.tokens.credentials

    def secrets(self) -> tuple[str | None, ...]:
        app = self.tokens.app
        return (
            self.credentials.get("accessToken"),
            self.credentials.get("refreshToken"),
            app.client_secret if app else None,
        )

    def url(self, path: str) -> str:
        return API + path

    def access_token(self) -> str:
        return self.tokens.access

    async def prepare(self) -> None:
        if self.tokens.expiring():
            await self.tokens.renew(self._http, self.tokens.access)

    async def renewed(self, response: httpx.Response, used: str) -> bool:
        """A token refused as invalid is refreshed, once a call (a 401 for a missing scope is
        not: a new token would carry the same scopes)."""
        code = tiktok_error(response)[0]
        refused = code == "access_token_invalid" or (response.status_code == 401 and not code)
        if not refused or self.tokens.renewed:
            return False
        await self.tokens.renew(self._http, used)
        return True

    async def call(self, method: str, path: str, action: str, **options: Any) -> dict[str, Any]:
        """The `data` object of a successful answer; a classified ProviderError otherwise."""
        response = await self.request(method, path, action, **options)
        if is_failure(response):
            raise self.classify(response, action)
        data = response_json(response).get("data")
        return data if isinstance(data, dict) else {}

    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        return classify(response, action, self.secrets())
