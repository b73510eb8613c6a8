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

from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import duplicate_refused
from pressroom.providers.adapter import refused_part
from pressroom.providers.http import rate_limited
from pressroom.providers.http import response_json
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure
from pressroom.providers.http import token_rejected
from pressroom.providers.session import RefreshingSession
from pressroom.providers.session import Renewal
from pressroom.providers.x.oauth import API
from pressroom.providers.x.oauth import XApp
from pressroom.providers.x.oauth import refresh_access_token

PROVIDER = "X"
# Refresh a token this close to its expiry instead of letting a call fail on it.
EXPIRY_MARGIN_SECONDS = 60
# What a 400 refused, by the words of its message: "Your Tweet text is too long." / "Tweet
# needs to be a bit shorter." name the text.
_REFUSED_PARTS = (
    ("text_rejected", "the text", ("too long", "shorter")),
    ("media_rejected", "the media", ("media",)),
)


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


class XSession(RefreshingSession[XApp]):
    """One channel's API client. Build one per adapter call."""

    provider = PROVIDER
    expiry_margin = EXPIRY_MARGIN_SECONDS
    classify_unrenewable = False
    unrenewable = (
        "The X access token has expired and cannot be refreshed (no refresh token "
        "or no X app configured). Reconnect the channel."
    )

    def url(self, path: str) -> str:
        return API + path

    def renewal(self) -> Renewal | None:
        app = self._app
        if app is None or not isinstance(self.credentials.get("refreshToken"), str):
            return None

        async def renew(refresh_token: str) -> dict[str, Any]:
            tokens = await refresh_access_token(self._http, app, refresh_token, clock=self._clock)
            return tokens.as_credentials()

        return renew

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
            return token_rejected(PROVIDER, action, detail)
        if status == 403 and "duplicate" in detail.lower():
            return duplicate_refused(PROVIDER, detail, "one the account published recently")
        refused = refused_part(PROVIDER, detail, _REFUSED_PARTS) if status == 400 else None
        return refused or status_failure(response, PROVIDER, action, detail)
