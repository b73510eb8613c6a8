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

from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.pinterest.errors import PROVIDER
from pressroom.providers.pinterest.errors import classify
from pressroom.providers.pinterest.tokens import refresh_tokens
from pressroom.providers.session import RefreshingSession
from pressroom.providers.session import Renewal

API = "https://api.pinterest.com/v5"
DAY = 86400
# Refresh a 30-day token this long before it expires: an active channel refreshes about every
# 29 days, and a refresh that fails once still leaves a day to try again.
REFRESH_WITHIN = DAY


class PinterestSession(RefreshingSession[OAuthApp]):
    """One channel's API client. Build one per adapter call."""

    provider = PROVIDER
    expiry_margin = REFRESH_WITHIN
    classify_unrenewable = False
    unrenewable = (
        "The Pinterest access token has expired or is about to, and cannot be "
        "refreshed (no refresh token, an expired one, or no Pinterest app "
        "configured). Reconnect the channel."
    )

    @property
    def http(self) -> httpx.AsyncClient:
        return self._http

    def url(self, path: str) -> str:
        return API + path

    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        return classify(response, action, self.secrets())

    def refreshable(self) -> bool:
        """Whether a refresh could be tried now: a refresh token not known to have expired,
        and the deployment's app to present it with."""
        refresh_expires = self.credentials.get("refreshExpiresAt")
        if isinstance(refresh_expires, int | float) and self._clock() >= refresh_expires:
            return False
        return isinstance(self.credentials.get("refreshToken"), str) and self._app is not None

    def renewal(self) -> Renewal | None:
        app = self._app
        if app is None or not self.refreshable():
            return None

        async def renew(refresh_token: str) -> dict[str, Any]:
            return await refresh_tokens(self._http, app, refresh_token, clock=self._clock)

        return renew
