"""Live: pin one image and delete it again. Set PRESSROOM_LIVE_PINTEREST_ACCESS_TOKEN (a token
with pins:read, pins:write, boards:read, user_accounts:read),
PRESSROOM_LIVE_PINTEREST_BOARD_ID (a board of the account) and
PRESSROOM_LIVE_PINTEREST_IMAGE_URL (a public HTTPS image Pinterest can fetch) to run it."""

from __future__ import annotations

import os
import uuid

import httpx
import pytest

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.pinterest import PinterestAdapter

from .support import live_text
from .support import no_media

ACCESS_TOKEN = os.environ.get("PRESSROOM_LIVE_PINTEREST_ACCESS_TOKEN")
BOARD_ID = os.environ.get("PRESSROOM_LIVE_PINTEREST_BOARD_ID")
IMAGE_URL = os.environ.get("PRESSROOM_LIVE_PINTEREST_IMAGE_URL")

pytestmark = pytest.mark.skipif(
    not (ACCESS_TOKEN and BOARD_ID and IMAGE_URL),
    reason="set PRESSROOM_LIVE_PINTEREST_ACCESS_TOKEN, _BOARD_ID and _IMAGE_URL",
)


async def test_live_pinterest_pin_then_delete() -> None:
    assert ACCESS_TOKEN and BOARD_ID and IMAGE_URL
    credentials = {"accessToken": ACCESS_TOKEN, "defaultBoardId": BOARD_ID}
    channel = ChannelContext(uuid.uuid4(), uuid.uuid4(), "pinterest", None, False, credentials)
    image = MediaItem(uuid.uuid4(), "image", "image/jpeg", 1, "live/image.jpg")

    async def public_url(item: MediaItem) -> str:
        return str(IMAGE_URL)

    async with httpx.AsyncClient() as http:
        adapter = PinterestAdapter(http=http, app=None, media_url=public_url, read_media=no_media)
        assert (await adapter.check_health(channel)).state == "healthy"
        result = await adapter.publish(
            PublishRequest(
                channel, uuid.uuid4(), "pin", live_text("pinterest"), (image,), {},
                uuid.uuid4().hex,
            )
        )  # fmt: skip
        assert result.provider_post_id
        await adapter.delete(channel, result.provider_post_id)
