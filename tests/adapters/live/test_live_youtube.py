"""Live: upload one private video to YouTube, then delete it. Set
PRESSROOM_LIVE_YOUTUBE_REFRESH_TOKEN, PRESSROOM_LIVE_YOUTUBE_CLIENT_ID and
PRESSROOM_LIVE_YOUTUBE_CLIENT_SECRET (a refresh token granted youtube.upload and
youtube.force-ssl) and PRESSROOM_LIVE_YOUTUBE_VIDEO (a path to a short MP4) to run it. It
spends about 1,650 units of the project's daily quota."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.connection import OAuthApp
from pressroom.providers.youtube import CONNECTOR
from pressroom.providers.youtube import YouTubeAdapter

from .support import live_text

REFRESH_TOKEN = os.environ.get("PRESSROOM_LIVE_YOUTUBE_REFRESH_TOKEN")
CLIENT_ID = os.environ.get("PRESSROOM_LIVE_YOUTUBE_CLIENT_ID")
CLIENT_SECRET = os.environ.get("PRESSROOM_LIVE_YOUTUBE_CLIENT_SECRET")
VIDEO = os.environ.get("PRESSROOM_LIVE_YOUTUBE_VIDEO")

pytestmark = pytest.mark.skipif(
    not (REFRESH_TOKEN and CLIENT_ID and CLIENT_SECRET and VIDEO),
    reason="set PRESSROOM_LIVE_YOUTUBE_REFRESH_TOKEN, _CLIENT_ID, _CLIENT_SECRET and _VIDEO",
)


async def test_live_youtube_upload_then_delete() -> None:
    assert REFRESH_TOKEN and CLIENT_ID and CLIENT_SECRET and VIDEO
    app = OAuthApp("youtube", CLIENT_ID, CLIENT_SECRET, "http://localhost/connect/youtube/callback")
    data = await asyncio.to_thread(Path(VIDEO).read_bytes)
    item = MediaItem(uuid.uuid4(), "video", "video/mp4", len(data), "live")

    async def read(_: MediaItem) -> AsyncIterator[bytes]:
        for start in range(0, len(data), 1024 * 1024):
            yield data[start : start + 1024 * 1024]

    async with httpx.AsyncClient() as http:
        [account] = await CONNECTOR.from_token(app, REFRESH_TOKEN, http)
        channel = ChannelContext(
            uuid.uuid4(), uuid.uuid4(), "youtube", None, False, account.credentials
        )
        adapter = YouTubeAdapter(app=app, read_media=read, http=http)
        assert (await adapter.check_health(channel)).state == "healthy"
        options = {"title": "Pressroom live test", "privacyStatus": "private", "madeForKids": False}
        request = PublishRequest(
            channel, uuid.uuid4(), "video", live_text("youtube"), (item,), options, uuid.uuid4().hex
        )
        result = await adapter.publish(request)
        await adapter.delete(channel, result.provider_post_id)
