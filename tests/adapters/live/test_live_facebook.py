"""Live: publish and delete one post on a Facebook Page. Set PRESSROOM_LIVE_FACEBOOK_PAGE_ID and
PRESSROOM_LIVE_FACEBOOK_PAGE_TOKEN (a Page access token with pages_manage_posts and
pages_read_engagement) to run it; PRESSROOM_LIVE_FACEBOOK_APP_SECRET signs the calls
(appsecret_proof) for an app that requires it."""

from __future__ import annotations

import os
import uuid

import pytest

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.facebook import FacebookAdapter
from pressroom.providers.http import build_client

from .support import live_text

PAGE_ID = os.environ.get("PRESSROOM_LIVE_FACEBOOK_PAGE_ID")
PAGE_TOKEN = os.environ.get("PRESSROOM_LIVE_FACEBOOK_PAGE_TOKEN")

pytestmark = pytest.mark.skipif(
    not (PAGE_ID and PAGE_TOKEN),
    reason="set PRESSROOM_LIVE_FACEBOOK_PAGE_ID and PRESSROOM_LIVE_FACEBOOK_PAGE_TOKEN",
)


async def test_live_facebook_publish_then_delete() -> None:
    assert PAGE_ID and PAGE_TOKEN
    credentials = {"pageId": PAGE_ID, "accessToken": PAGE_TOKEN}
    channel = ChannelContext(uuid.uuid4(), uuid.uuid4(), "facebook", None, False, credentials)
    async with build_client() as http:
        adapter = FacebookAdapter(
            http=http,
            media_url=None,
            app_secret=os.environ.get("PRESSROOM_LIVE_FACEBOOK_APP_SECRET"),
        )
        assert (await adapter.check_health(channel)).state == "healthy"
        text = live_text("facebook")
        result = await adapter.publish(
            PublishRequest(channel, uuid.uuid4(), "post", text, (), {}, uuid.uuid4().hex)
        )
        assert result.provider_post_id.startswith(f"{PAGE_ID}_")
        await adapter.delete(channel, result.provider_post_id)
