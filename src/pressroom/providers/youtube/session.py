"""Requests to the YouTube Data API for one channel, with its Google access token kept fresh.

Access tokens live an hour. Before a call, a token known to expire within `EXPIRY_MARGIN_SECONDS`
is refreshed with the refresh token (oauth.py); a call answered 401 is refreshed once and sent
again. Google does not rotate the refresh token, but the new access token is still reported
through `on_credentials_changed` and kept in the process's credential cache, so that the next call
does not refresh again.
"""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.session import RefreshingSession
from pressroom.providers.session import Renewal
from pressroom.providers.youtube import errors
from pressroom.providers.youtube.oauth import refresh_access_token

# Refresh a token this close to its expiry instead of letting a call (or a long upload) fail.
EXPIRY_MARGIN_SECONDS = 300
# Google keeps the refresh token across refreshes, so the credential cache tells a caller's
# stale copy by the access token it holds, the one a refresh replaced.
ROTATION_KEY = "accessToken"


class YouTubeSession(RefreshingSession[OAuthApp]):
    """One channel's API client; paths are absolute URLs (the API and its upload host, and
    upload session URIs). Build one per adapter call."""

    provider = errors.PROVIDER
    expiry_margin = EXPIRY_MARGIN_SECONDS
    rotation_key = ROTATION_KEY
    classify_unrenewable = False
    unrenewable = (
        "The YouTube access token has expired and cannot be refreshed (no refresh "
        "token, or the deployment's YouTube app is not configured). Reconnect the "
        "channel."
    )

    def url(self, path: str) -> str:
        return path

    def renewal(self) -> Renewal | None:
        app = self._app
        if app is None or not isinstance(self.credentials.get("refreshToken"), str):
            return None

        async def renew(refresh_token: str) -> dict[str, Any]:
            tokens = await refresh_access_token(self._http, app, refresh_token, self._clock)
            return tokens.as_credentials()

        return renew

    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        now = datetime.fromtimestamp(self._clock(), UTC)
        return errors.classify(response, action, now, self.secrets())
