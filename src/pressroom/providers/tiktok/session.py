"""Requests to the TikTok v2 API for one channel, with its access token kept fresh.

An access token lives 24 hours, its refresh token 365 days (tokens.py). Before a call, a token
known to expire within `EXPIRY_MARGIN_SECONDS` is refreshed; a call refused with
`access_token_invalid` is refreshed once and sent again. New credentials are reported through
`on_credentials_changed` at once and kept in the process's credential cache, so a call still
holding the old copy does not spend the old refresh token again.
"""

from __future__ import annotations

from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.http import response_json
from pressroom.providers.session import RefreshingSession
from pressroom.providers.session import Renewal
from pressroom.providers.tiktok.errors import PROVIDER
from pressroom.providers.tiktok.errors import classify
from pressroom.providers.tiktok.errors import is_failure
from pressroom.providers.tiktok.errors import tiktok_error
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


class TikTokSession(RefreshingSession[OAuthApp]):
    """One channel's API client. Build one per adapter call."""

    provider = PROVIDER
    expiry_margin = EXPIRY_MARGIN_SECONDS
    classify_unrenewable = False

    def blocker(self) -> str | None:
        """Why the access token could not be refreshed now, or None if it could."""
        return renewal_blocker(self.credentials, self._app, self._clock())

    def cannot_refresh(self) -> ProviderError:
        return ProviderError(
            "auth_expired",
            f"The TikTok access token has expired and cannot be refreshed ({self.blocker()}). "
            "Reconnect the channel.",
        )

    def refused(self, response: httpx.Response) -> bool:
        """A token refused as invalid (a 401 for a missing scope is not: a new token would
        carry the same scopes)."""
        code = tiktok_error(response)[0]
        return code == "access_token_invalid" or (response.status_code == 401 and not code)

    def url(self, path: str) -> str:
        return API + path

    def renewal(self) -> Renewal | None:
        app = self._app
        if app is None or self.blocker() is not None:
            return None

        async def renew(refresh_token: str) -> dict[str, Any]:
            return await refresh_tokens(self._http, app, refresh_token, self._clock)

        return renew

    async def call(self, method: str, path: str, action: str, **options: Any) -> dict[str, Any]:
        """The `data` object of a successful answer; a classified ProviderError otherwise."""
        response = await self.request(method, path, action, **options)
        if is_failure(response):
            raise self.classify(response, action)
        data = response_json(response).get("data")
        return data if isinstance(data, dict) else {}

    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        return classify(response, action, self.secrets())
