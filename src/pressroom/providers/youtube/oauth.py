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

from collections.abc import Callable
from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.connection import OAuthApp
from pressroom.providers.connection import TokenGrantConnector
from pressroom.providers.http import provider_request
from pressroom.providers.http import response_json
from pressroom.providers.http import status_failure
from pressroom.providers.token_endpoint import Secrets
from pressroom.providers.token_endpoint import TokenEndpoint
from pressroom.providers.token_endpoint import TokenSet
from pressroom.providers.youtube.errors import PROVIDER
from pressroom.providers.youtube.errors import error_detail

AUTHORIZE_URL = "https://accounts.google.com/o/oauth2/v2/auth"
TOKEN_URL = "https://oauth2.googleapis.com/token"
TOKENINFO_URL = "https://oauth2.googleapis.com/tokeninfo"
REVOKE_URL = "https://oauth2.googleapis.com/revoke"
API = "https://www.googleapis.com/youtube/v3"
SCOPES = (
    "https://www.googleapis.com/auth/youtube.upload",
    "https://www.googleapis.com/auth/youtube.force-ssl",
)


def _described(response: httpx.Response, secrets: Secrets) -> str:
    body = response_json(response)
    return error_detail(body, secrets) or str(body.get("error") or "")


TOKEN_ENDPOINT = TokenEndpoint(TOKEN_URL, PROVIDER, "Google", describe=_described)


async def refresh_access_token(
    http: httpx.AsyncClient, app: OAuthApp, refresh_token: str, clock: Callable[[], float]
) -> TokenSet:
    credentials = await TOKEN_ENDPOINT.refresh_grant(http, app, refresh_token, clock)
    tokens = TokenSet.from_credentials(credentials)
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


class YouTubeConnector(TokenGrantConnector):
    """The `OAuthConnector` of YouTube channels (registry.CONNECTORS)."""

    provider = "youtube"
    authorize_url = AUTHORIZE_URL
    scopes = SCOPES
    scope_separator = " "
    authorize_extra = (("access_type", "offline"), ("prompt", "consent"))
    token_endpoint = TOKEN_ENDPOINT

    async def account_of(
        self, http: httpx.AsyncClient, app: OAuthApp | None, credentials: dict[str, Any]
    ) -> ConnectedAccount:
        return await _account(http, TokenSet.from_credentials(credentials))

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
