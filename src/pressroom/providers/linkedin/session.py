"""Requests to LinkedIn's API for one channel, with its token kept fresh.

Every call names the deployment's `LinkedIn-Version` (YYYYMM) and `X-Restli-Protocol-Version:
2.0.0`, as the versioned `/rest` APIs require
(https://learn.microsoft.com/en-us/linkedin/marketing/versioning). Access tokens live 60 days;
one known to expire within `EXPIRY_MARGIN_SECONDS` is refreshed before the call when LinkedIn
granted a refresh token and the deployment's app is configured, and a call answered 401 is
refreshed once and sent again. LinkedIn keeps the refresh token across refreshes, but the new
set is still reported through `on_credentials_changed` at once (a new access token, new expiry).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import OAuthApp
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.linkedin.errors import PROVIDER
from pressroom.providers.linkedin.errors import classify
from pressroom.providers.linkedin.tokens import TOKEN_ENDPOINT
from pressroom.providers.session import RefreshingSession
from pressroom.providers.session import Renewal

API = "https://api.linkedin.com"
DEFAULT_VERSION = "202605"
# Refresh a token this close to its expiry rather than let a call (or a long upload) fail on it.
EXPIRY_MARGIN_SECONDS = 3600


def encoded(urn: str) -> str:
    """A URN in a URL path: Rest.li 2.0 wants its colons percent-encoded."""
    return quote(urn, safe="")


def refreshable(credentials: Mapping[str, Any], app: OAuthApp | None, now: float) -> bool:
    """Whether the channel's token can be renewed without the person."""
    refresh_token = credentials.get("refreshToken")
    refresh_expires = credentials.get("refreshExpiresAt")
    if app is None or not isinstance(refresh_token, str) or not refresh_token:
        return False
    return not (isinstance(refresh_expires, int | float) and now >= refresh_expires)


class LinkedInSession(RefreshingSession[OAuthApp]):
    """One channel's API client. Build one per adapter call."""

    provider = PROVIDER
    expiry_margin = EXPIRY_MARGIN_SECONDS

    def __init__(
        self,
        http: httpx.AsyncClient,
        app: OAuthApp | None,
        channel: ChannelContext,
        store: CredentialStore,
        *,
        version: str = DEFAULT_VERSION,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(http, app, channel, store, clock=clock)
        self.version = version

    @property
    def author(self) -> str:
        """The URN the channel posts as: a member (`urn:li:person:…`) or a Page
        (`urn:li:organization:…`)."""
        author = self.credentials.get("author")
        if not isinstance(author, str) or not author.startswith("urn:li:"):
            raise ProviderError(
                "auth_expired", "The LinkedIn channel does not know its account; reconnect it."
            )
        return author

    def url(self, path: str) -> str:
        # Upload URLs come whole from LinkedIn's initializeUpload answers.
        return path if path.startswith("https://") else API + path

    def fixed_headers(self) -> Mapping[str, str]:
        return {"LinkedIn-Version": self.version, "X-Restli-Protocol-Version": "2.0.0"}

    def renewal(self) -> Renewal | None:
        app = self._app
        if app is None or not refreshable(self.credentials, app, self._clock()):
            return None

        async def renew(refresh_token: str) -> dict[str, Any]:
            return await TOKEN_ENDPOINT.refresh_grant(self._http, app, refresh_token, self._clock)

        return renew

    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        now = datetime.fromtimestamp(self._clock(), UTC)
        return classify(response, action, version=self.version, secrets=self.secrets(), now=now)
