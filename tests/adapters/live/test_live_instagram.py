"""Live: publish one image story on Instagram. Set PRESSROOM_LIVE_INSTAGRAM_ACCESS_TOKEN (a
long-lived Instagram User token of a business account, with instagram_business_basic and
instagram_business_content_publish) and PRESSROOM_LIVE_INSTAGRAM_IMAGE_URL (a public HTTPS JPEG,
9:16 at best) to run it.

The Instagram API cannot delete published media, so the test publishes a story, which Instagram
removes by itself after 24 hours, and checks that `delete` says it cannot."""

from __future__ import annotations

import os
import uuid

import httpx
import pytest

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.instagram import InstagramAdapter
from pressroom.providers.instagram import InstagramConnector

from .support import live_text

ACCESS_TOKEN = os.environ.get("PRESSROOM_LIVE_INSTAGRAM_ACCESS_TOKEN")
IMAGE_URL = os.environ.get("PRESSROOM_LIVE_INSTAGRAM_IMAGE_URL")

pytestmark = pytest.mark.skipif(
    not (ACCESS_TOKEN and IMAGE_URL),
    reason="set PRESSROOM_LIVE_INSTAGRAM_ACCESS_TOKEN and PRESSROOM_LIVE_INSTAGRAM_IMAGE_URL",
)


async def public_image(item: MediaItem) -> str:
    assert IMAGE_URL
    return IMAGE_URL


async def test_live_instagram_publish_a_story() -> None:
    assert ACCESS_TOKEN
    async with httpx.AsyncClient() as http:
        accounts = await InstagramConnector().from_token(None, ACCESS_TOKEN, http)
    credentials = accounts[0].credentials
    channel = ChannelContext(uuid.uuid4(), uuid.uuid4(), "instagram", None, False, credentials)
    adapter = InstagramAdapter(media_url=public_image)
    image = MediaItem(uuid.uuid4(), "image", "image/jpeg", 1, "live/story.jpg")
    try:
        assert (await adapter.check_health(channel)).state == "healthy"
        result = await adapter.publish(
            PublishRequest(
                channel, uuid.uuid4(), "story", live_text("instagram"), (image,), {}, "live"
            )
        )
        assert result.provider_post_id.isdigit()
        with pytest.raises(ProviderError):
            await adapter.delete(channel, result.provider_post_id)
    finally:
        await adapter.aclose()
