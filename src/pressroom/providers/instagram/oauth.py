"""Connecting an Instagram professional account: Business Login for Instagram (the Instagram API
with Instagram Login; no Facebook Page needed).

- Authorization window (Business Login, step 1, and reference/oauth-authorize):
  `https://www.instagram.com/oauth/authorize?client_id=&redirect_uri=&response_type=code
  &scope=&state=`, the scope a comma-separated list. The callback's code comes with `#_`
  appended to the redirect, which is not part of the code.
- The code becomes a long-lived token (tokens.py), and the account is read with
  `GET https://graph.instagram.com/{version}/me?fields=user_id,username`: `user_id` is the
  Instagram professional account id that the publishing endpoints take (Get Started,
  "Get the app user ID & username").
- `from_token` takes an operator's long-lived Instagram User token (for example one generated in
  the App Dashboard), reads the account with it, then refreshes it once to learn when it expires;
  a token Instagram will not refresh yet (it must be a day old) is kept, its expiry unknown until
  its first refresh.

Scopes: `instagram_business_basic` and `instagram_business_content_publish` to publish,
`instagram_business_manage_comments` for first comments and `instagram_business_manage_insights`
for the metrics (IG Media Insights).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.connection import OAuthApp
from pressroom.providers.connection import operator_token
from pressroom.providers.graph import GraphConnector
from pressroom.providers.http import response_json
from pressroom.providers.http import transport_failure
from pressroom.providers.instagram.errors import PROVIDER
from pressroom.providers.instagram.errors import classify
from pressroom.providers.instagram.session import graph_url
from pressroom.providers.instagram.tokens import REFRESH_AGE_SECONDS
from pressroom.providers.instagram.tokens import LongLivedToken
from pressroom.providers.instagram.tokens import exchange_code
from pressroom.providers.instagram.tokens import long_lived_token
from pressroom.providers.instagram.tokens import refresh_token


class InstagramConnector(GraphConnector):
    """Connects the Instagram professional account that logs in (one channel per grant)."""

    provider = "instagram"
    scopes = (
        "instagram_business_basic",
        "instagram_business_content_publish",
        "instagram_business_manage_comments",
        "instagram_business_manage_insights",
    )
    authorize_url = "https://www.instagram.com/oauth/authorize"

    async def exchange(
        self, app: OAuthApp, code: str, kept: Mapping[str, str], http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        grant = await exchange_code(
            http,
            client_id=app.client_id,
            client_secret=app.client_secret,
            redirect_uri=app.redirect_uri,
            code=code.strip().removesuffix("#_"),
        )
        token = await long_lived_token(
            http, grant.access_token, client_secret=app.client_secret, clock=self._clock
        )
        version = self.version(app)
        user_id, username = await read_account(http, version, token.access_token)
        return [_account(token, user_id, username, grant.permissions)]

    async def from_token(
        self, app: OAuthApp | None, token: str, http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        token = operator_token(token, "An Instagram User access token is needed.")
        # Read the account first: a token Instagram refuses stores nothing.
        user_id, username = await read_account(http, self.version(app), token)
        try:
            known = await refresh_token(http, token, clock=self._clock)
        except ProviderError as error:
            if error.code == "auth_expired":
                raise
            known = LongLivedToken(
                access_token=token,
                expires_at=None,
                refreshable_at=int(self._clock()) + REFRESH_AGE_SECONDS,
            )
        return [_account(known, user_id, username, None)]


def _account(
    token: LongLivedToken, user_id: str, username: str | None, permissions: str | None
) -> ConnectedAccount:
    credentials: dict[str, Any] = {**token.as_credentials(), "userId": user_id}
    if username:
        credentials["username"] = username
    if permissions:
        credentials["scope"] = permissions
    return ConnectedAccount(
        credentials=credentials,
        handle=f"@{username}" if username else None,
        account_name=username,
    )


async def read_account(
    http: httpx.AsyncClient, graph_version: str, token: str
) -> tuple[str, str | None]:
    """The professional account id and username the token acts for (`GET /me`)."""
    action = "reading the account"
    try:
        response = await http.get(
            graph_url(graph_version, "me"),
            params={"fields": "user_id,username"},
            headers={"Authorization": f"Bearer {token}"},
        )
    except httpx.HTTPError as exc:
        raise transport_failure(exc, PROVIDER, action) from None
    if not response.is_success:
        raise classify(response, action, (token,))
    body = response_json(response)
    user_id = body.get("user_id")
    if not isinstance(user_id, int | str) or str(user_id) == "":
        raise ProviderError(
            "provider_unavailable", "Instagram answered /me without the account's user_id."
        )
    username = body.get("username")
    return str(user_id), username if isinstance(username, str) and username else None
