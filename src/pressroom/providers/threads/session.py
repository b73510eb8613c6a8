"""Requests to the Threads API for one channel, with its long-lived token kept alive.

A long-lived token lives 60 days and can be refreshed (oauth.py) from its first day until it
expires, never after. Before its first call, a session whose token has less than
`REFRESH_WITHIN` left refreshes it and reports the new credentials (`on_credentials_changed`),
remembering in the process's credential cache which token was replaced, so that a caller still
holding the old copy does not refresh again. A refresh Threads refuses does not fail the call
while the token still works: `check_health` shows it, and `auth_expired` comes only once the
token has expired.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from typing import Unpack

import httpx

from pressroom.kit.clock import utc_minute
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import ProviderError
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.http import FormFields
from pressroom.providers.http import provider_request
from pressroom.providers.threads.api import API
from pressroom.providers.threads.api import answer_json
from pressroom.providers.threads.errors import PROVIDER
from pressroom.providers.threads.errors import classify
from pressroom.providers.threads.oauth import refresh_long_lived

DAY = 86400
# Refresh this long before expiry: a refresh then happens about monthly for an active channel,
# leaving weeks of margin for a refresh that fails once.
REFRESH_WITHIN = 30 * DAY

log = logging.getLogger(__name__)


class ThreadsSession:
    """One channel's API client. Build one per adapter call."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        channel: ChannelContext,
        store: CredentialStore,
        *,
        clock: Callable[[], float],
    ) -> None:
        self._http = http
        self._channel = channel
        self._store = store
        self.clock = clock
        self.credentials: dict[str, Any] = store.current(channel, "accessToken")
        self._fresh = False
        if not isinstance(self.credentials.get("accessToken"), str):
            raise ProviderError(
                "auth_expired", "The Threads channel has no access token; reconnect it."
            )

    @property
    def user_id(self) -> str:
        """The account's Threads user id (`me` for credentials stored without it)."""
        user_id = self.credentials.get("userId")
        return str(user_id) if user_id else "me"

    @property
    def expires_at(self) -> float | None:
        value = self.credentials.get("expiresAt")
        return float(value) if isinstance(value, int | float) else None

    def secrets(self) -> tuple[str | None, ...]:
        """Every token this session may have held, kept out of error messages."""
        return (self.credentials.get("accessToken"), self._channel.credentials.get("accessToken"))

    async def ensure_fresh(self) -> ProviderError | None:
        """Refresh the token when it is due; the refusal if Threads refused. Raises
        `auth_expired` when the token has already expired."""
        self._fresh = True
        expires_at = self.expires_at
        if expires_at is None:
            return None
        if self.clock() >= expires_at:
            raise ProviderError(
                "auth_expired",
                f"The Threads token expired on {utc_minute(expires_at)}, and an expired token "
                "cannot be refreshed. Reconnect the channel.",
            )
        if expires_at - self.clock() > REFRESH_WITHIN:
            return None
        try:
            await self._refresh()
        except ProviderError as error:
            log.warning(
                "refreshing the Threads token failed",
                extra={"channel_id": str(self._channel.id), "code": error.code},
            )
            return error
        return None

    async def _refresh(self) -> None:
        used = self.credentials["accessToken"]
        async with self._store.lock(self._channel):
            latest = self._store.current(self._channel, "accessToken")
            if latest.get("accessToken") != used or latest.get("expiresAt") != self.expires_at:
                # Another call of this process refreshed while this one waited.
                self.credentials = latest
                return
            token = await refresh_long_lived(self._http, used, self.clock)
            updated = {**self.credentials, "accessToken": token.access_token}
            if token.expires_at is not None:
                updated["expiresAt"] = token.expires_at
            self.credentials = updated
            await self._store.replace(self._channel, used, updated)

    async def request(
        self, method: str, path: str, action: str, **fields: Unpack[FormFields]
    ) -> httpx.Response:
        """The answer to `method /v1.0{path}`, whatever its status."""
        if not self._fresh:
            await self.ensure_fresh()
        token = {"access_token": self.credentials["accessToken"]}
        params, data = fields.get("params"), fields.get("data")
        if method == "POST":
            data = {**(data or {}), **token}
        else:
            params = {**(params or {}), **token}
        return await provider_request(
            self._http,
            method,
            API + path,
            provider=PROVIDER,
            action=action,
            params=params,
            data=data,
        )

    async def call(
        self, method: str, path: str, action: str, **fields: Unpack[FormFields]
    ) -> dict[str, Any]:
        """The JSON object of a successful `request`; a classified ProviderError otherwise."""
        response = await self.request(method, path, action, **fields)
        return answer_json(response, action, self.secrets())

    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        return classify(response, action, self.secrets())
