"""Live: publish and delete one post on LinkedIn. Set PRESSROOM_LIVE_LINKEDIN_ACCESS_TOKEN (a
token with openid profile w_member_social) and PRESSROOM_LIVE_LINKEDIN_AUTHOR (the member's or a
Page's URN) to run it; PRESSROOM_LINKEDIN_VERSION picks the API version."""

from __future__ import annotations

import os
import uuid

import pytest

from pressroom.config import Settings
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.linkedin import LinkedInAdapter

from .support import live_text
from .support import no_media

ACCESS_TOKEN = os.environ.get("PRESSROOM_LIVE_LINKEDIN_ACCESS_TOKEN")
AUTHOR = os.environ.get("PRESSROOM_LIVE_LINKEDIN_AUTHOR")

pytestmark = pytest.mark.skipif(
    not (ACCESS_TOKEN and AUTHOR),
    reason="set PRESSROOM_LIVE_LINKEDIN_ACCESS_TOKEN and PRESSROOM_LIVE_LINKEDIN_AUTHOR",
)


async def test_live_linkedin_publish_then_delete() -> None:
    credentials = {"accessToken": ACCESS_TOKEN, "author": AUTHOR}
    channel = ChannelContext(uuid.uuid4(), uuid.uuid4(), "linkedin", None, False, credentials)
    adapter = LinkedInAdapter(read_media=no_media, version=Settings().linkedin_version)
    try:
        result = await adapter.publish(
            PublishRequest(
                channel, uuid.uuid4(), "post", live_text("linkedin"), (), {}, uuid.uuid4().hex
            )
        )
        assert result.provider_post_id.startswith("urn:li:")
        await adapter.delete(channel, result.provider_post_id)
    finally:
        await adapter.aclose()
