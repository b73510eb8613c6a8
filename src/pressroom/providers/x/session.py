"""Requests to the X API v2 for one channel, with its OAuth 2.0 user token kept fresh.

An access token lives two hours. Before a call, a token known to expire within a minute is
refreshed; a call answered 401 is refreshed once and sent again. The refresh token rotates
(oauth.py), so the new pair is reported through `on_credentials_changed` immediately, and kept in
the process's credential cache for callers still holding the old copy.

Errors (https://docs.x.com/x-api/fundamentals/response-codes-and-errors): RFC 7807-style
problems `{"title", "detail", "type", "status"}`, sometimes with `errors: [{"message"}]`.
429 carries `x-rate-limit-reset` (Unix seconds) for the endpoint's window; when the account's
own 24-hour posting limit is the one reached, `x-user-limit-24hour-remaining: 0` and
`x-user-limit-24hour-reset` say so, and that reset is the one to wait for.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from pressroom.providers.adapter import ChannelContext, ProviderError
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.http import rate_limited, response_json, safe_detail, status_failure
from pressroom.providers.session import BearerSession
from pressroom.providers.x.oauth import XApp, refresh_access_token

PROVIDER = "X"
API = "https://api.x.com"
# Refresh a token this close to its expiry instead of letting a call fail on it.
EXPIRY_MARGIN_SECONDS = 60


def problem_detail(response: httpx.Response, secrets: tuple[str | None, ...] = ()) -> str:
    body = response_json(response)
    parts: list[str] = []
    for key in ("title", "detail"):
        value = body.get(key)
        if isinstance(value, str) and value and value not in parts:
            parts.append(value)
    errors = body.get("errors")
    if isinstance(errors, list):
        for error in errors[:3]:
            if isinstance(error, dict):
                message = error.get("message") or error.get("detail")
                if isinstance(message, str) and message not in parts:
                    parts.append(message)
    return safe_detail("; ".join(parts), secrets)


class XSession(BearerSession):
    """One channel's API client. Build one per adapter call."""

    provider = PROVIDER

    def __init__(
        self,
        http: httpx.AsyncClient,
        app: XApp | None,
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
        self.credentials: dict[str, Any] = store.current(channel, "refreshToken")
        self._refreshed_this_call = False
        if not isinstance(self.credentials.get("accessToken"), str):
            raise ProviderError("auth_expired", "The X channel has no access token; reconnect it.")

    def secrets(self) -> tuple[str | None, ...]:
        return (
            self.credentials.get("accessToken"),
            self.credentials.get("refreshToken"),
            self._app.client_secret if self._app else None,
        )

    def url(self, path: str) -> str:
        return API + path

    def access_token(self) -> str:
        token: str = self.credentials["accessToken"]
        return token

    async def prepare(self) -> None:
        expires_at = self.credentials.get("expiresAt")
        if isinstance(expires_at, int | float) and (
            self._clock() >= expires_at - EXPIRY_MARGIN_SECONDS
        ):
            await self._refresh(self.access_token())

    async def renewed(self, response: httpx.Response, used: str) -> bool:
        """A token refused with 401 is refreshed, once a call."""
        if response.status_code != 401 or self._refreshed_this_call:
            return False
        await self._refresh(used)
        return True

    async def _refresh(self, used_access: str) -> None:
        async with self._store.lock(self._channel):
            latest = self._store.current(self._channel, "refreshToken")
            if latest.get("accessToken") != used_access:
                # Another call of this process refreshed while this one waited.
                self.credentials = latest
                return
            refresh_token = self.credentials.get("refreshToken")
            if not isinstance(refresh_token, str) or self._app is None:
                raise ProviderError(
                    "auth_expired",
                    "The X access token has expired and cannot be refreshed (no refresh token "
                    "or no X app configured). Reconnect the channel.",
                )
            self._refreshed_this_call = True
            tokens = await refresh_access_token(
                self._http, self._app, refresh_token, clock=self._clock
            )
            updated = {**self.credentials, **tokens.as_credentials()}
            self.credentials = updated
            await self._store.replace(self._channel, refresh_token, updated)

    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        detail = problem_detail(response, self.secrets())
        status = response.status_code
        if status == 429:
            headers = response.headers
            if headers.get("x-user-limit-24hour-remaining") == "0" and headers.get(
                "x-user-limit-24hour-reset"
            ):
                daily = httpx.Headers({"x-rate-limit-reset": headers["x-user-limit-24hour-reset"]})
                return rate_limited(
                    PROVIDER, f"{action} (the account's 24-hour post limit)", daily, detail
                )
            return rate_limited(PROVIDER, action, headers, detail)
        if status == 401:
            return ProviderError(
                "auth_expired",
                f"X rejected the channel's token while {action} ({detail or 'unauthorized'}). "
                "Reconnect the channel.",
            )
        lowered = detail.lower()
        if status == 403 and "duplicate" in lowered:
            return ProviderError(
                "duplicate_content",
                f"X refused the post as a duplicate of one the account published recently "
                f"({detail}). Change the text to post it again.",
            )
        # "Your Tweet text is too long." / "Tweet needs to be a bit shorter."
        if status == 400 and ("too long" in lowered or "shorter" in lowered):
            return ProviderError("text_rejected", f"X refused the text: {detail}")
        if status == 400 and "media" in lowered:
            return ProviderError("media_rejected", f"X refused the media: {detail}")
        return status_failure(response, PROVIDER, action, detail)
