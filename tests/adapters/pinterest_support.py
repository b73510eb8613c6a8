"""What the Pinterest adapter tests share: a connected channel, the adapter on a client of its
own, a signed-URL maker standing in for the media domain, and Pinterest's error answers."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import respx

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.connection import OAuthApp
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.pinterest import PinterestAdapter

from .support import FIXED_NOW
from .support import IDEMPOTENCY_KEY
from .support import CredentialsLog
from .support import MediaShelf
from .support import RecordedSleep
from .support import channel
from .support import publish_request

API = "https://api.pinterest.com/v5"
TOKEN_URL = f"{API}/oauth/token"
ACCESS_TOKEN = "pina_access-token-0123456789"
REFRESH_TOKEN = "pinr_refresh-token-0123456789"
BOARD_ID = "549755885175"
PIN_ID = "813744226420795884"
NOW = FIXED_NOW.timestamp()
DAY = 86400
APP = OAuthApp(
    provider="pinterest",
    client_id="1484365",
    client_secret="pinterest-app-secret-1",
    redirect_uri="https://pressroom.example/connect/pinterest/callback",
)
NOTE = f"pressroom:{IDEMPOTENCY_KEY}"


def clock() -> float:
    return NOW


def pin_channel(**extra: Any) -> ChannelContext:
    credentials = {
        "accessToken": ACCESS_TOKEN,
        "refreshToken": REFRESH_TOKEN,
        "expiresAt": int(NOW) + 20 * DAY,
        "refreshExpiresAt": int(NOW) + 300 * DAY,
        "username": "pressroomhq",
        "defaultBoardId": BOARD_ID,
        **extra,
    }
    return channel("pinterest", {k: v for k, v in credentials.items() if v is not None})


def pin_request(kind: str, text: str, media: tuple[MediaItem, ...], **extra: Any) -> PublishRequest:
    channel_ = extra.pop("channel", None) or pin_channel()
    request = publish_request(channel_, text, media=media, **extra)
    return dataclasses.replace(request, content_kind=kind)


async def signed_url(item: MediaItem) -> str:
    return f"https://media.pressroom.example/m/{item.id}?signature=abc"


@asynccontextmanager
async def pinterest_adapter(
    *,
    shelf: MediaShelf | None = None,
    sleep: RecordedSleep | None = None,
    credentials: CredentialsLog | None = None,
    app: OAuthApp | None = APP,
    media: bool = True,
) -> AsyncIterator[PinterestAdapter]:
    """The adapter polling every 2 seconds for at most 6, with a cache of its own."""
    async with httpx.AsyncClient() as http:
        yield PinterestAdapter(
            http=http,
            app=app,
            media_url=signed_url if media else None,
            read_media=(shelf or MediaShelf()).read,
            on_credentials_changed=credentials,
            sleep=sleep or RecordedSleep(),
            clock=clock,
            cache=CredentialCache(),
            poll_interval=2.0,
            poll_budget=6.0,
        )


def sent_json(route: respx.Route, call: int = 0) -> Any:
    return json.loads(route.calls[call].request.content)


def pinterest_error(status: int, code: int, message: str, **headers: str) -> httpx.Response:
    return httpx.Response(status, json={"code": code, "message": message}, headers=headers)
