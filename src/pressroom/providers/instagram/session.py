"""Requests to graph.instagram.com for one channel, with its long-lived token kept alive.

A long-lived Instagram User token lives 60 days and can be refreshed once it is a day old
(tokens.py). Before a call, a token in the second half of its life (or of unknown age, once it
may be refreshed) is refreshed and the new one reported through `on_credentials_changed`; a
refresh Instagram refuses for a reason other than the token itself leaves the current token in
use while it is valid. A token past its expiry cannot be refreshed: the channel needs
reconnecting.

The token goes in an `Authorization: Bearer` header, never in a URL; parameters of a POST go in
a form body (the Graph API reads both the same way).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import Unpack

import httpx

from pressroom.config import Settings
from pressroom.kit.clock import utc_minute
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import ProviderError
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.http import FormFields
from pressroom.providers.http import provider_request
from pressroom.providers.http import response_json
from pressroom.providers.instagram.errors import PROVIDER
from pressroom.providers.instagram.errors import classify
from pressroom.providers.instagram.tokens import refresh_token

GRAPH = "https://graph.instagram.com"
DEFAULT_GRAPH_VERSION: str = Settings.model_fields["meta_graph_version"].default
# Refresh a token once fewer than this many seconds of its 60 days remain.
REFRESH_WHEN_LEFT = 30 * 24 * 3600

logger = logging.getLogger(__name__)


def graph_url(version: str, path: str) -> str:
    return f"{GRAPH}/{version}/{path.lstrip('/')}"


class InstagramSession:
    """One channel's Graph client. Build one per adapter call."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        channel: ChannelContext,
        store: CredentialStore,
        *,
        graph_version: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._http = http
        self._channel = channel
        self._store = store
        self._version = graph_version
        self._clock = clock
        # The access token is also what a refresh spends: the cache is keyed on it.
        self.credentials: dict[str, Any] = store.current(channel, "accessToken")
        self.refresh_refusal: ProviderError | None = None
        self._checked = False
        token = self.credentials.get("accessToken")
        if not isinstance(token, str) or not token:
            raise ProviderError(
                "auth_expired", "The Instagram channel has no access token; reconnect it."
            )
        user_id = self.credentials.get("userId")
        if not isinstance(user_id, str) or not user_id:
            raise ProviderError(
                "auth_expired",
                "The Instagram channel does not know its account id; reconnect it.",
            )
        self.user_id = user_id

    @property
    def token(self) -> str:
        token: str = self.credentials["accessToken"]
        return token

    def expires_at(self) -> float | None:
        value = self.credentials.get("expiresAt")
        return float(value) if isinstance(value, int | float) else None

    async def get(
        self, path: str, action: str, params: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        response = await self.send("GET", path, action, params=params)
        if response.is_success:
            return response_json(response)
        raise classify(response, action, (self.token,))

    async def post(self, path: str, action: str, data: Mapping[str, str]) -> dict[str, Any]:
        response = await self.send("POST", path, action, data=data)
        if response.is_success:
            return response_json(response)
        raise classify(response, action, (self.token,))

    async def send(
        self, method: str, path: str, action: str, **fields: Unpack[FormFields]
    ) -> httpx.Response:
        await self.keep_fresh()
        return await provider_request(
            self._http,
            method,
            graph_url(self._version, path),
            provider=PROVIDER,
            action=action,
            bearer=self.token,
            **fields,
        )

    async def keep_fresh(self) -> None:
        """Refresh the token when it is due (once per session); raise `auth_expired` for a
        token already past its expiry."""
        if self._checked:
            return
        self._checked = True
        now = self._clock()
        expires_at = self.expires_at()
        if expires_at is not None and now >= expires_at:
            raise ProviderError(
                "auth_expired",
                f"The Instagram token expired on {utc_minute(expires_at)} and can no longer "
                "be refreshed. Reconnect the channel.",
            )
        refreshable_at = self.credentials.get("refreshableAt")
        if isinstance(refreshable_at, int | float) and now < refreshable_at:
            return
        if expires_at is not None and expires_at - now > REFRESH_WHEN_LEFT:
            return
        await self._refresh()

    async def _refresh(self) -> None:
        try:
            self.credentials = await self._store.renew(
                self._channel, self.token, self._refreshed, rotation_key="accessToken"
            )
        except ProviderError as error:
            if error.code == "auth_expired":
                raise
            # The token still works until its expiry; the next call tries again.
            self.refresh_refusal = error
            logger.warning(
                "instagram token refresh failed",
                extra={"channel_id": str(self._channel.id), "code": error.code},
            )

    async def _refreshed(self, newest: dict[str, Any]) -> dict[str, Any]:
        """`newest` with its token refreshed (another call of this process may have refreshed
        it while this one waited: `CredentialStore.renew` then returns that one instead)."""
        fresh = await refresh_token(self._http, str(newest["accessToken"]), clock=self._clock)
        return {**newest, **fresh.as_credentials()}
