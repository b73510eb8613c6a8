"""What the Facebook adapter tests share: a Page channel, a signed-URL maker standing in for
the media domain, and readers of the form and query a recorded request sent."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl

import httpx
import respx

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import MediaItem
from pressroom.providers.facebook import FacebookAdapter

from .support import RecordedSleep
from .support import channel
from .support import fixed_clock

GRAPH = "https://graph.facebook.com/v24.0"
PAGE_ID = "104857600123456"
PAGE_TOKEN = "EAAPage-token-0123456789"
APP_SECRET = "facebook-app-secret-1"
PROOF = hmac.new(APP_SECRET.encode(), PAGE_TOKEN.encode(), hashlib.sha256).hexdigest()
POST_ID = f"{PAGE_ID}_987654321098765"
NOW = fixed_clock()
# Graph times look like this (created_time of posts, videos and reels).
RECENT = NOW.strftime("%Y-%m-%dT%H:%M:%S+0000")


def page_channel(**extra: Any) -> ChannelContext:
    return channel(
        "facebook", {"pageId": PAGE_ID, "accessToken": PAGE_TOKEN, **extra}, "pressroomhq"
    )


async def signed_url(item: MediaItem) -> str:
    return f"https://media.pressroom.example/m/{item.id}?signature=abc"


@asynccontextmanager
async def facebook_adapter(
    sleep: RecordedSleep, *, media: bool = True
) -> AsyncIterator[FacebookAdapter]:
    """The adapter on a client of its own, polling every 2 seconds for at most 6."""
    async with httpx.AsyncClient() as http:
        yield FacebookAdapter(
            http=http,
            media_url=signed_url if media else None,
            app_secret=APP_SECRET,
            sleep=sleep,
            clock=fixed_clock,
            poll_interval=2.0,
            poll_budget=6.0,
        )


def form(route: respx.Route, call: int = 0) -> dict[str, str]:
    """The urlencoded form a recorded call sent."""
    return dict(parse_qsl(route.calls[call].request.content.decode(), keep_blank_values=True))


def query(route: respx.Route, call: int = 0) -> dict[str, str]:
    return dict(route.calls[call].request.url.params)


def headers(route: respx.Route, call: int = 0) -> httpx.Headers:
    return route.calls[call].request.headers


def graph_error(
    code: int, message: str, *, subcode: int | None = None, status: int = 400, **extra: Any
) -> httpx.Response:
    error: dict[str, Any] = {
        "message": message,
        "type": "OAuthException",
        "code": code,
        "fbtrace_id": "AbCdEf123",
        **extra,
    }
    if subcode is not None:
        error["error_subcode"] = subcode
    return httpx.Response(status, json={"error": error})


def video_status(
    video_status: str,
    *,
    uploading: str = "complete",
    processing: str = "not_started",
    publishing: str = "not_started",
    error: str | None = None,
) -> httpx.Response:
    """`GET /{video-id}?fields=status` as the Reels guide shows it."""
    processing_phase: dict[str, Any] = {"status": processing}
    if error is not None:
        processing_phase["error"] = {"message": error}
    return httpx.Response(
        200,
        json={
            "status": {
                "video_status": video_status,
                "uploading_phase": {"status": uploading},
                "processing_phase": processing_phase,
                "publishing_phase": {"status": publishing},
            },
            "id": "1",
        },
    )
