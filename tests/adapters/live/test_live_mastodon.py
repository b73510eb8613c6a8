"""Live: publish and delete one Mastodon status (visibility "direct", so nobody sees it). Set
PRESSROOM_LIVE_MASTODON_BASE_URL and PRESSROOM_LIVE_MASTODON_TOKEN to run it."""

from __future__ import annotations

import os
import uuid

import pytest

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.mastodon.adapter import MastodonAdapter
from pressroom.providers.mastodon.adapter import verify_credentials

from .support import live_text
from .support import no_media

BASE_URL = os.environ.get("PRESSROOM_LIVE_MASTODON_BASE_URL")
TOKEN = os.environ.get("PRESSROOM_LIVE_MASTODON_TOKEN")

pytestmark = pytest.mark.skipif(
    not (BASE_URL and TOKEN),
    reason="set PRESSROOM_LIVE_MASTODON_BASE_URL and PRESSROOM_LIVE_MASTODON_TOKEN",
)


async def test_live_mastodon_publish_then_delete() -> None:
    assert BASE_URL and TOKEN
    credentials, handle = await verify_credentials(BASE_URL, TOKEN)
    channel = ChannelContext(uuid.uuid4(), uuid.uuid4(), "mastodon", handle, False, credentials)
    adapter = MastodonAdapter(read_media=no_media)
    try:
        limits = await adapter.instance_limits(channel)
        assert limits.max_characters > 0
        result = await adapter.publish(
            PublishRequest(
                channel,
                uuid.uuid4(),
                "post",
                live_text("mastodon"),
                (),
                {"visibility": "direct"},
                uuid.uuid4().hex,
            )
        )
        assert result.provider_post_id
        await adapter.delete(channel, result.provider_post_id)
    finally:
        await adapter.aclose()
