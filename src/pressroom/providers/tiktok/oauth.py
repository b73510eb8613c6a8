"""Connecting a TikTok account through Login Kit for Web (OAuth 2.0).

1. `start`: `https://www.tiktok.com/v2/auth/authorize/?client_key&scope&redirect_uri&state
   &response_type=code` (https://developers.tiktok.com/doc/login-kit-web). The scopes are
   comma-separated. PKCE (`code_verifier`) is "required for mobile and desktop app only"
   (https://developers.tiktok.com/doc/oauth-user-access-token-management): a web app
   authenticates with its client secret, so none is sent.
2. `exchange`: the code for tokens at `/v2/oauth/token/` (tokens.py), then the account:
   `GET /v2/user/info/?fields=open_id,union_id,avatar_url,display_name` (user.info.basic) and its
   username from the creator info (`creator_username`, scope video.publish: no extra scope is
   needed for the handle). A grant without video.publish (the person may untick a scope) is
   refused before anything is stored.
3. `from_token`: an operator's refresh token (`rft.` prefix; traded for an access token, with
   the deployment's app) or access token (`act.`; it lasts 24 hours and cannot be renewed
   without a refresh token), verified with TikTok before anything is stored.

Scopes (https://developers.tiktok.com/doc/tiktok-api-scopes): `user.info.basic` (the account),
`video.publish` (direct posts; Pressroom does not use the inbox/draft flow of video.upload, which
ends with the person finishing the post in the TikTok app) and `video.list` (metrics).
"""

from __future__ import annotations

from typing import Any

import httpx

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.connection import OAuthApp
from pressroom.providers.connection import TokenGrantConnector
from pressroom.providers.connection import operator_token
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.tiktok.creator import CREATOR_INFO_PATH
from pressroom.providers.tiktok.session import TikTokSession
from pressroom.providers.tiktok.tokens import TOKEN_ENDPOINT
from pressroom.providers.tiktok.tokens import refresh_tokens

AUTHORIZE_URL = "https://www.tiktok.com/v2/auth/authorize/"
SCOPES = ("user.info.basic", "video.publish", "video.list")
USER_FIELDS = "open_id,union_id,avatar_url,display_name"
REFRESH_TOKEN_PREFIX = "rft."


class TikTokConnector(TokenGrantConnector):
    """The `OAuthConnector` of TikTok (registry.CONNECTORS)."""

    provider = "tiktok"
    authorize_url = AUTHORIZE_URL
    scopes = SCOPES
    client_field = "client_key"
    token_endpoint = TOKEN_ENDPOINT

    async def from_token(
        self, app: OAuthApp | None, token: str, http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        token = operator_token(token, "A TikTok access or refresh token is needed.")
        if token.startswith(REFRESH_TOKEN_PREFIX):
            if app is None:
                raise ProviderError(
                    "invalid_request",
                    "A TikTok refresh token is traded with the deployment's app: set "
                    "PRESSROOM_TIKTOK_CLIENT_ID and PRESSROOM_TIKTOK_CLIENT_SECRET.",
                )
            credentials = await refresh_tokens(http, app, token, self._clock)
        else:
            credentials = {"accessToken": token}
        return [await self.account_of(http, app, credentials)]

    async def account_of(
        self, http: httpx.AsyncClient, app: OAuthApp | None, credentials: dict[str, Any]
    ) -> ConnectedAccount:
        scope = credentials.get("scope")
        if isinstance(scope, str) and "video.publish" not in scope.split(","):
            raise ProviderError(
                "permission_denied",
                f"The TikTok account granted only {scope}; connect it again and allow posting "
                "(video.publish).",
            )
        channel = ChannelContext.unsaved("tiktok", credentials)
        store = CredentialStore(CredentialCache())
        session = TikTokSession(http, app, channel, store, clock=self._clock)
        user = await session.call(
            "GET", "/v2/user/info/", "reading the account", params={"fields": USER_FIELDS}
        )
        creator = await session.call("POST", CREATOR_INFO_PATH, "reading the creator info")
        account = user.get("user")
        account = account if isinstance(account, dict) else {}
        verified = dict(session.credentials)
        for key, name in (
            ("open_id", "openId"),
            ("union_id", "unionId"),
            ("display_name", "displayName"),
        ):
            value = account.get(key)
            if isinstance(value, str) and value:
                verified[name] = value
        if not verified.get("openId"):
            raise ProviderError(
                "provider_unavailable", "TikTok answered the account without an id."
            )
        username = creator.get("creator_username")
        if isinstance(username, str) and username:
            verified["username"] = username
        handle = f"@{username}" if isinstance(username, str) and username else None
        display = verified.get("displayName")
        return ConnectedAccount(verified, handle, display if isinstance(display, str) else None)


CONNECTOR = TikTokConnector()
