"""Live: post one private (SELF_ONLY) video to a TikTok account. Set
PRESSROOM_LIVE_TIKTOK_ACCESS_TOKEN (a user access token with video.publish, at most 24 hours old)
and PRESSROOM_LIVE_TIKTOK_VIDEO (the path of a short MP4) to run it.

TikTok's Content Posting API cannot delete a post: the test posts with SELF_ONLY, visible to the
account alone, and the video must be deleted in the TikTok app afterwards."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.http import build_client
from pressroom.providers.tiktok import TikTokAdapter

from .support import live_text

TOKEN = os.environ.get("PRESSROOM_LIVE_TIKTOK_ACCESS_TOKEN")
VIDEO = os.environ.get("PRESSROOM_LIVE_TIKTOK_VIDEO")
# A short video, read once here (the test is opt-in and the file small).
VIDEO_BYTES = Path(VIDEO).read_bytes() if VIDEO else b""

pytestmark = pytest.mark.skipif(
    not (TOKEN and VIDEO),
    reason="set PRESSROOM_LIVE_TIKTOK_ACCESS_TOKEN and PRESSROOM_LIVE_TIKTOK_VIDEO",
)


async def read_video(item: MediaItem) -> AsyncIterator[bytes]:
    for start in range(0, len(VIDEO_BYTES), 1 << 20):
        yield VIDEO_BYTES[start : start + (1 << 20)]


async def test_live_tiktok_publish_then_delete() -> None:
    assert TOKEN and VIDEO
    channel = ChannelContext(
        uuid.uuid4(), uuid.uuid4(), "tiktok", None, False, {"accessToken": TOKEN}
    )
    item = MediaItem(uuid.uuid4(), "video", "video/mp4", len(VIDEO_BYTES), "live")
    async with build_client() as http:
        adapter = TikTokAdapter(app=None, read_media=read_video, http=http)
        assert (await adapter.check_health(channel)).state == "healthy"
        result = await adapter.publish(
            PublishRequest(
                channel,
                uuid.uuid4(),
                "video",
                live_text("tiktok"),
                (item,),
                {"privacyLevel": "SELF_ONLY"},
                uuid.uuid4().hex,
            )
        )
        assert result.provider_post_id
        with pytest.raises(ProviderError) as refused:
            await adapter.delete(channel, result.provider_post_id)
        assert refused.value.code == "invalid_request"
