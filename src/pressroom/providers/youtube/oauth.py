"""Connecting a YouTube channel through Google OAuth 2.0 for web server applications
(https://developers.google.com/youtube/v3/guides/auth/server-side-web-apps).

1. `start`: `https://accounts.google.com/o/oauth2/v2/auth?client_id&redirect_uri&response_type=code
   &scope&state&access_type=offline&prompt=consent`. `access_type=offline` asks for a refresh
   token; `prompt=consent` makes Google issue one again to a person who granted the app before
   (Google only sends a refresh token on a consent screen).
2. `exchange`: `POST https://oauth2.googleapis.com/token` (form: code, client_id, client_secret,
   redirect_uri, grant_type=authorization_code) -> `{"access_token", "expires_in" (3599),
   "refresh_token", "scope", "token_type"}`; then the channel, `GET /youtube/v3/channels
   ?part=snippet&mine=true`.
3. Refresh: the same endpoint with `grant_type=refresh_token`. Google keeps the refresh token
   (it answers without a new one); `invalid_grant` means it was revoked or expired (a Testing-mode
   app's refresh tokens die after 7 days).
4. `from_token`: an operator's refresh token (traded for an access token, when the deployment's
   app is configured) or access token (checked with `GET https://oauth2.googleapis.com/tokeninfo`,
   which gives its remaining lifetime); the channel is read with it before anything is stored.
5. Revoke (on disconnect): `POST https://oauth2.googleapis.com/revoke` (form: token); revoking
   the refresh token ends the whole grant.

Scopes (https://developers.google.com/youtube/v3/guides/auth/installed-apps#identify-access-scopes):
`youtube.upload` for videos.insert, and `youtube.force-ssl` ("see, edit, and permanently delete
your YouTube videos"), the narrowest scope that videos.delete accepts (it does not accept
youtube.upload); it also covers channels.list and videos.list, so `youtube.readonly` is not asked.

Credentials dict: `{"accessToken", "refreshToken", "expiresAt" (Unix seconds), "scope",
"channelId", "channelTitle"}`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import AuthorizationStart, ConnectedAccount, OAuthApp
from pressroom.providers.http import provider_request, response_json, status_failure
from pressroom.providers.youtube.errors import PROVIDER, error_detail

AUTHORIZE_URL = "https://accounts.google.com/o/oauth2/v2/auth"
TOKEN_URL = "https://oauth2.googleapis.com/token"
TOKENINFO_URL = "https://oauth2.googleapis.com/tokeninfo"
REVOKE_URL = "https://oauth2.googleapis.com/revoke"
API = "https://www.googleapis.com/youtube/v3"
SCOPES = (
    "https://www.googleapis.com/auth/youtube.upload",
    "https://www.googleapis.com/auth/youtube.force-ssl",
)


@dataclass(frozen=True)
class TokenSet:
    access_token: str = field(repr=False)
    refresh_token: str | None = field(repr=False)
    expires_at: int | None
    scope: str | None

    def as_credentials(self) -> dict[str, Any]:
        credentials: dict[str, Any] = {"accessToken": self.access_token}
        if self.refresh_token:
            credentials["refreshToken"] = self.refresh_token
        if self.expires_at is not None:
            credentials["expiresAt"] = self.expires_at
        if self.scope:
            credentials["scope"] = self.scope
        return credentials


async def token_request(
    http: httpx.AsyncClient,
    app: OAuthApp,
    form: Mapping[str, str],
    action: str,
    clock: Callable[[], float],
) -> TokenSet:
    """A grant at Google's token endpoint; a refused grant is `auth_expired`."""
    sent = {**form, "client_id": app.client_id, "client_secret": app.client_secret}
    response = await provider_request(
        http, "POST", TOKEN_URL, provider=PROVIDER, action=action, data=sent
    )
    body = response_json(response)
    if not response.is_success:
        secrets = (app.client_secret, form.get("code"), form.get("refresh_token"))
        detail = error_detail(body, secrets) or str(body.get("error") or "")
        if response.status_code in (400, 401):
            raise ProviderError(
                "auth_expired",
                f"Google refused {action} ({detail or 'invalid grant'}). Reconnect the channel.",
            )
        raise status_failure(response, PROVIDER, action, detail)
    access = body.get("access_token")
    if not isinstance(access, str) or not access:
        raise ProviderError("provider_unavailable", f"Google answered {action} without a token.")
    refresh, expires_in = body.get("refresh_token"), body.get("expires_in")
    scope = body.get("scope")
    return TokenSet(
        access_token=access,
        refresh_token=refresh if isinstance(refresh, str) else None,
        expires_at=int(clock()) + expires_in if isinstance(expires_in, int) else None,
        scope=scope if isinstance(scope, str) else None,
    )


async def refresh_access_token(
    http: httpx.AsyncClient, app: OAuthApp, refresh_token: str, clock: Callable[[], float]
) -> TokenSet:
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    tokens = await token_request(http, app, form, "refreshing the access token", clock)
    # Google answers a refresh without a refresh token: the one used stays valid.
    if tokens.refresh_token is None:
        return TokenSet(tokens.access_token, refresh_token, tokens.expires_at, tokens.scope)
    return tokens


async def revoke_token(http: httpx.AsyncClient, token: str) -> None:
    """Revoke a token; one Google no longer knows (`invalid_token`) counts as revoked."""
    action = "revoking the token"
    response = await provider_request(
        http, "POST", REVOKE_URL, provider=PROVIDER, action=action, data={"token": token}
    )
    body = response_json(response)
    if response.is_success or body.get("error") == "invalid_token":
        return
    raise status_failure(response, PROVIDER, action, error_detail(body, (token,)))


async def read_channel(http: httpx.AsyncClient, access_token: str) -> dict[str, Any]:
    """`channelId` and `channelTitle` of the token's own channel, plus its handle."""
    action = "reading the YouTube channel"
    response = await provider_request(
        http,
        "GET",
        f"{API}/channels",
        provider=PROVIDER,
        action=action,
        bearer=access_token,
        params={"part": "snippet", "mine": "true"},
    )
    body = response_json(response)
    if not response.is_success:
        raise status_failure(response, PROVIDER, action, error_detail(body, (access_token,)))
    items = body.get("items")
    first = items[0] if isinstance(items, list) and items else None
    if not isinstance(first, dict) or not isinstance(first.get("id"), str):
        raise ProviderError(
            "permission_denied",
            "This Google account has no YouTube channel. Create the channel on YouTube, then "
            "connect again.",
        )
    snippet = first.get("snippet")
    if not isinstance(snippet, dict):
        snippet = {}
    title, handle = snippet.get("title"), snippet.get("customUrl")
    return {
        "channelId": first["id"],
        "channelTitle": title if isinstance(title, str) else None,
        "handle": handle if isinstance(handle, str) else None,
    }


class YouTubeConnector:
    """The `OAuthConnector` of YouTube channels (registry.CONNECTORS)."""

    provider = "youtube"

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock

    def start(self, app: OAuthApp, state: str) -> AuthorizationStart:
        query = urlencode(
            {
                "client_id": app.client_id,
                "redirect_uri": app.redirect_uri,
                "response_type": "code",
                "scope": " ".join(SCOPES),
                "state": state,
                "access_type": "offline",
                "prompt": "consent",
            }
        )
        return AuthorizationStart(f"{AUTHORIZE_URL}?{query}")

    async def exchange(
        self, app: OAuthApp, code: str, kept: Mapping[str, str], http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": app.redirect_uri}
        tokens = await token_request(
            http, app, form, "exchanging the authorization code", self._clock
        )
        return [await _account(http, tokens)]

    async def from_token(
        self, app: OAuthApp | None, token: str, http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        token = token.strip()
        if app is not None:
            try:
                tokens = await refresh_access_token(http, app, token, self._clock)
            except ProviderError as error:
                if error.code != "auth_expired":
                    raise
                # Not a refresh token of this app: it may be an access token.
            else:
                return [await _account(http, tokens)]
        return [await _account(http, await self._access_token_info(http, token))]

    async def _access_token_info(self, http: httpx.AsyncClient, token: str) -> TokenSet:
        action = "checking the access token"
        response = await provider_request(
            http,
            "GET",
            TOKENINFO_URL,
            provider=PROVIDER,
            action=action,
            params={"access_token": token},
        )
        body = response_json(response)
        if not response.is_success:
            detail = error_detail(body, (token,)) or "invalid token"
            raise ProviderError(
                "auth_expired", f"Google refused the access token ({detail}); get a new one."
            )
        expires_in = body.get("expires_in")
        seconds = (
            int(expires_in)
            if isinstance(expires_in, int) or (isinstance(expires_in, str) and expires_in.isdigit())
            else None
        )
        scope = body.get("scope")
        return TokenSet(
            access_token=token,
            refresh_token=None,
            expires_at=int(self._clock()) + seconds if seconds is not None else None,
            scope=scope if isinstance(scope, str) else None,
        )


async def _account(http: httpx.AsyncClient, tokens: TokenSet) -> ConnectedAccount:
    channel = await read_channel(http, tokens.access_token)
    credentials = {
        **tokens.as_credentials(),
        "channelId": channel["channelId"],
        "channelTitle": channel["channelTitle"],
    }
    return ConnectedAccount(
        credentials=credentials,
        handle=channel["handle"] or channel["channelTitle"],
        account_name=channel["channelTitle"],
    )


CONNECTOR = YouTubeConnector()
