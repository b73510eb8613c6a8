"""Connecting a Pinterest account through OAuth 2.0: one grant, one account, one channel.

1. `start`: `https://www.pinterest.com/oauth/?client_id&redirect_uri&response_type=code&scope
   &state` (https://developers.pinterest.com/docs/getting-started/set-up-authentication-and-authorization/).
2. `exchange`: the code for a token set (tokens.py), then the account,
   `GET /v5/user_account` (`username`, `id`), and its default board.
3. `from_token`: an operator's existing access token, verified with `GET /v5/user_account`
   before anything is stored; without a refresh token it works until it expires (30 days),
   then the channel needs reconnecting (check_health says so ahead of time when the expiry is
   known; an operator token's is not).

The default board: a pin is always saved to a board, and a target may name one
(`options.boardId`). Otherwise it goes to the channel's `defaultBoardId`, the first board
`GET /v5/boards` lists when the account is connected (Pinterest lists boards in the order the
account arranged them). An account with no board yet is connected without one: its targets must
name a board until it is reconnected.

Scopes (https://developers.pinterest.com/docs/getting-started/authentication-and-scopes/):
`pins:read` and `pins:write` (create, read back and delete pins, their analytics),
`boards:read` (list the boards), `user_accounts:read` (the account).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.connection import OAuthApp
from pressroom.providers.connection import TokenGrantConnector
from pressroom.providers.http import provider_request
from pressroom.providers.http import response_json
from pressroom.providers.pinterest.api import API
from pressroom.providers.pinterest.errors import PROVIDER
from pressroom.providers.pinterest.errors import classify
from pressroom.providers.pinterest.tokens import TOKEN_ENDPOINT

AUTHORIZE_URL = "https://www.pinterest.com/oauth/"
SCOPES = ("pins:read", "pins:write", "boards:read", "user_accounts:read")


class PinterestConnector(TokenGrantConnector):
    """The `OAuthConnector` of Pinterest (registry.CONNECTORS)."""

    provider = "pinterest"
    authorize_url = AUTHORIZE_URL
    scopes = SCOPES
    token_endpoint = TOKEN_ENDPOINT

    async def account_of(
        self, http: httpx.AsyncClient, app: OAuthApp | None, credentials: dict[str, Any]
    ) -> ConnectedAccount:
        return await connected_account(http, credentials)

    async def from_token(
        self, app: OAuthApp | None, token: str, http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        return [await connected_account(http, {"accessToken": token.strip()})]


async def connected_account(
    http: httpx.AsyncClient, credentials: dict[str, Any]
) -> ConnectedAccount:
    """The account `credentials` act for, with its default board added to them."""
    token: str = credentials["accessToken"]
    account = await _get(http, token, "/user_account", "reading the account", {})
    username = account.get("username")
    if not isinstance(username, str) or not username:
        raise ProviderError(
            "provider_unavailable", "Pinterest answered the account without a username."
        )
    credentials = {**credentials, "username": username}
    if isinstance(account.get("id"), str):
        credentials["userId"] = account["id"]
    boards = await _get(http, token, "/boards", "listing the boards", {"page_size": "25"})
    board = _first_board(boards)
    if board is not None:
        credentials["defaultBoardId"] = board[0]
        credentials["defaultBoardName"] = board[1]
    return ConnectedAccount(credentials=credentials, handle=username)


async def _get(
    http: httpx.AsyncClient, token: str, path: str, action: str, params: dict[str, str]
) -> dict[str, Any]:
    response = await provider_request(
        http, "GET", API + path, provider=PROVIDER, action=action, bearer=token, params=params
    )
    if not response.is_success:
        raise classify(response, action, (token,))
    return response_json(response)


def _first_board(body: Mapping[str, Any]) -> tuple[str, str | None] | None:
    items = body.get("items")
    for board in items if isinstance(items, list) else []:
        if isinstance(board, dict) and isinstance(board.get("id"), str) and board["id"]:
            name = board.get("name")
            return board["id"], name if isinstance(name, str) else None
    return None


CONNECTOR = PinterestConnector()
