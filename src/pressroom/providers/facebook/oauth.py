"""Connecting Facebook Pages through Facebook Login: every Page the person ticks in Facebook's
own dialog becomes one channel.

1. `start`: `https://www.facebook.com/{version}/dialog/oauth?client_id&redirect_uri&state
   &response_type=code&scope=...`
   (https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow). The dialog
   asks which Pages to grant.
2. `exchange`: the code for a user token, `GET /{version}/oauth/access_token?client_id
   &redirect_uri&client_secret&code`; then that short-lived token for a long-lived one (about
   60 days), `grant_type=fb_exchange_token&client_id&client_secret&fb_exchange_token`
   (https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived);
   then the granted Pages, `GET /me/accounts?fields=id,name,username,access_token,tasks`, each
   with its Page token. A Page token obtained with a long-lived user token does not expire.
3. `from_token`: an operator's existing token. A user token lists its Pages as above (exchanged
   for a long-lived one first when the deployment's app is configured); a Page token (on which
   `/me/accounts` is an unknown field, code 100) is that one Page, read with
   `GET /me?fields=id,name,username`, and its expiry is asked of `GET /debug_token` when the app
   is configured (https://developers.facebook.com/docs/facebook-login/guides/access-tokens/debugging).

Scopes (https://developers.facebook.com/docs/permissions): `pages_show_list` (list the Pages),
`pages_manage_posts` (publish and delete), `pages_read_engagement` (read the Page's posts,
reactions and comments), `pages_manage_engagement` (the first comment) and `read_insights`
(post insights). `business_management` is only needed to act through a business system user,
which Pressroom does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.connection import OAuthApp
from pressroom.providers.facebook.page import PROVIDER
from pressroom.providers.facebook.page import required_value
from pressroom.providers.graph import GraphClient
from pressroom.providers.graph import GraphConnector
from pressroom.providers.graph import GraphFailure

SCOPES = (
    "pages_show_list",
    "pages_manage_posts",
    "pages_read_engagement",
    "pages_manage_engagement",
    "read_insights",
)
PAGE_FIELDS = "id,name,username,access_token,tasks"
# /me/accounts pages of 100 Pages, at most this many pages of them.
MAX_ACCOUNT_PAGES = 10


class FacebookConnector(GraphConnector):
    """The `OAuthConnector` of Facebook Pages (registry.CONNECTORS)."""

    provider = "facebook"
    scopes = SCOPES

    def authorization_endpoint(self, app: OAuthApp) -> str:
        return f"https://www.facebook.com/{self.version(app)}/dialog/oauth"

    def _graph(self, http: httpx.AsyncClient, app: OAuthApp | None) -> GraphClient:
        secret = app.client_secret if app is not None else None
        version = self.version(app)
        return GraphClient(http, provider=PROVIDER, version=version, app_secret=secret)

    async def exchange(
        self, app: OAuthApp, code: str, kept: Mapping[str, str], http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        graph = self._graph(http, app)
        body = await graph.call(
            "GET",
            "oauth/access_token",
            "exchanging the authorization code",
            params={
                "client_id": app.client_id,
                "redirect_uri": app.redirect_uri,
                "client_secret": app.client_secret,
                "code": code,
            },
            secrets=(code,),
        )
        short = required_value(body, "access_token", "exchanging the authorization code")
        token, expires_at = await self._long_lived(graph, app, short)
        return await self._granted_pages(graph, token, expires_at)

    async def from_token(
        self, app: OAuthApp | None, token: str, http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        graph = self._graph(http, app)
        token = token.strip()
        try:
            first = await _accounts(graph, token, None)
        except GraphFailure as error:
            # A Page token has no `accounts` edge: "(#100) Tried accessing nonexisting field".
            if error.graph_code != 100:
                raise
            return [await self._page_token(graph, app, token)]
        if app is None:
            return await self._granted_pages(graph, token, None, first=first)
        long_token, expires_at = await self._long_lived(graph, app, token)
        return await self._granted_pages(graph, long_token, expires_at)

    async def _long_lived(
        self, graph: GraphClient, app: OAuthApp, token: str
    ) -> tuple[str, int | None]:
        action = "exchanging the user token for a long-lived one"
        body = await graph.call(
            "GET",
            "oauth/access_token",
            action,
            params={
                "grant_type": "fb_exchange_token",
                "client_id": app.client_id,
                "client_secret": app.client_secret,
                "fb_exchange_token": token,
            },
            secrets=(token,),
        )
        expires_in = body.get("expires_in")
        expires_at = (
            int(self._clock()) + expires_in
            if isinstance(expires_in, int) and not isinstance(expires_in, bool) and expires_in > 0
            else None
        )
        return required_value(body, "access_token", action), expires_at

    async def _granted_pages(
        self,
        graph: GraphClient,
        user_token: str,
        user_expires_at: int | None,
        *,
        first: dict[str, Any] | None = None,
    ) -> list[ConnectedAccount]:
        body = first if first is not None else await _accounts(graph, user_token, None)
        accounts: list[ConnectedAccount] = []
        for _ in range(MAX_ACCOUNT_PAGES):
            data = body.get("data")
            for page in data if isinstance(data, list) else []:
                account = _page_account(page, user_expires_at)
                if account is not None:
                    accounts.append(account)
            after = _next_cursor(body)
            if after is None:
                break
            body = await _accounts(graph, user_token, after)
        if not accounts:
            raise ProviderError(
                "permission_denied",
                "Facebook granted Pressroom no Page on which you can create content. Connect "
                "again and tick, in Facebook's dialog, the Pages to publish to.",
            )
        return accounts

    async def _page_token(
        self, graph: GraphClient, app: OAuthApp | None, token: str
    ) -> ConnectedAccount:
        page = await graph.call(
            "GET", "me", "reading the Page", token=token, params={"fields": "id,name,username"}
        )
        page_id = required_value(page, "id", "reading the Page")
        credentials: dict[str, Any] = {"pageId": page_id, "accessToken": token}
        if app is not None:
            expires_at = await _token_expiry(graph, app, token)
            if expires_at is not None:
                credentials["expiresAt"] = expires_at
        return _account(page, credentials)


async def _accounts(graph: GraphClient, token: str, after: str | None) -> dict[str, Any]:
    params = {"fields": PAGE_FIELDS, "limit": "100"}
    if after is not None:
        params["after"] = after
    return await graph.call(
        "GET", "me/accounts", "listing the granted Pages", token=token, params=params
    )


def _next_cursor(body: Mapping[str, Any]) -> str | None:
    # Follow the `after` cursor, not `paging.next`: that URL carries the token in its query.
    paging = body.get("paging")
    if not isinstance(paging, dict) or not paging.get("next"):
        return None
    cursors = paging.get("cursors")
    after = cursors.get("after") if isinstance(cursors, dict) else None
    return after if isinstance(after, str) and after else None


def _page_account(page: object, user_expires_at: int | None) -> ConnectedAccount | None:
    """A granted Page as a channel; None for one the person cannot publish on (its `tasks`
    lack CREATE_CONTENT) or that came without its Page token."""
    if not isinstance(page, dict):
        return None
    page_id, token, tasks = page.get("id"), page.get("access_token"), page.get("tasks")
    if not isinstance(page_id, str) or not isinstance(token, str) or not token:
        return None
    if isinstance(tasks, list) and "CREATE_CONTENT" not in tasks:
        return None
    credentials: dict[str, Any] = {"pageId": page_id, "accessToken": token}
    if user_expires_at is not None:
        credentials["userTokenExpiresAt"] = user_expires_at
    return _account(page, credentials)


def _account(page: Mapping[str, Any], credentials: dict[str, Any]) -> ConnectedAccount:
    name = page.get("name") if isinstance(page.get("name"), str) else None
    username = page.get("username") if isinstance(page.get("username"), str) else None
    return ConnectedAccount(credentials=credentials, handle=username or name, account_name=name)


async def _token_expiry(graph: GraphClient, app: OAuthApp, token: str) -> int | None:
    """When `token` expires (Unix seconds), or None when it does not (`expires_at` 0)."""
    body = await graph.call(
        "GET",
        "debug_token",
        "checking the Page token",
        token=f"{app.client_id}|{app.client_secret}",
        params={"input_token": token},
        secrets=(token,),
    )
    data = body.get("data")
    expires_at = data.get("expires_at") if isinstance(data, dict) else None
    if isinstance(expires_at, int) and not isinstance(expires_at, bool) and expires_at > 0:
        return expires_at
    return None


CONNECTOR = FacebookConnector()
