"""Live: publish and delete one Bluesky post. Set PRESSROOM_LIVE_BLUESKY_IDENTIFIER and
PRESSROOM_LIVE_BLUESKY_APP_PASSWORD (and PRESSROOM_LIVE_BLUESKY_SERVICE for a PDS other than
https://bsky.social) to run it."""

from __future__ import annotations

import os
import uuid

import pytest

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.bluesky import DEFAULT_SERVICE
from pressroom.providers.bluesky import BlueskyAdapter
from pressroom.providers.bluesky import create_session_credentials

from .support import live_text
from .support import no_media

IDENTIFIER = os.environ.get("PRESSROOM_LIVE_BLUESKY_IDENTIFIER")
APP_PASSWORD = os.environ.get("PRESSROOM_LIVE_BLUESKY_APP_PASSWORD")

pytestmark = pytest.mark.skipif(
    not (IDENTIFIER and APP_PASSWORD),
    reason="set PRESSROOM_LIVE_BLUESKY_IDENTIFIER and PRESSROOM_LIVE_BLUESKY_APP_PASSWORD",
)


async def test_live_bluesky_publish_then_delete() -> None:
    assert IDENTIFIER and APP_PASSWORD
    service = os.environ.get("PRESSROOM_LIVE_BLUESKY_SERVICE", DEFAULT_SERVICE)
    credentials = await create_session_credentials(IDENTIFIER, APP_PASSWORD, service)
    channel = ChannelContext(uuid.uuid4(), uuid.uuid4(), "bluesky", None, False, credentials)
    adapter = BlueskyAdapter(read_media=no_media)
    try:
        result = await adapter.publish(
            PublishRequest(
                channel, uuid.uuid4(), "post", live_text("bluesky"), (), {}, uuid.uuid4().hex
            )
        )
        assert result.provider_post_id.startswith("at://")
        assert (await adapter.check_health(channel)).state == "healthy"
        await adapter.delete(channel, result.provider_post_id)
    finally:
        await adapter.aclose()
