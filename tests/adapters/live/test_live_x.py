"""Live: publish and delete one post on X. Set PRESSROOM_LIVE_X_ACCESS_TOKEN (an OAuth 2.0
user token with tweet.read tweet.write users.read) to run it; PRESSROOM_LIVE_X_REFRESH_TOKEN,
PRESSROOM_LIVE_X_CLIENT_ID and PRESSROOM_LIVE_X_CLIENT_SECRET let it refresh an expired one."""

from __future__ import annotations

import os
import uuid

import pytest

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.x import XAdapter
from pressroom.providers.x import XApp
from pressroom.providers.x import credentials_from_cli_options

from .support import live_text
from .support import no_media

ACCESS_TOKEN = os.environ.get("PRESSROOM_LIVE_X_ACCESS_TOKEN")

pytestmark = pytest.mark.skipif(not ACCESS_TOKEN, reason="set PRESSROOM_LIVE_X_ACCESS_TOKEN")


async def test_live_x_publish_then_delete() -> None:
    assert ACCESS_TOKEN
    client_id = os.environ.get("PRESSROOM_LIVE_X_CLIENT_ID")
    app = XApp(client_id, os.environ.get("PRESSROOM_LIVE_X_CLIENT_SECRET")) if client_id else None
    credentials = credentials_from_cli_options(
        ACCESS_TOKEN, os.environ.get("PRESSROOM_LIVE_X_REFRESH_TOKEN")
    )
    channel = ChannelContext(uuid.uuid4(), uuid.uuid4(), "x", None, False, credentials)
    adapter = XAdapter(app=app, read_media=no_media)
    try:
        assert (await adapter.check_health(channel)).state == "healthy"
        result = await adapter.publish(
            PublishRequest(channel, uuid.uuid4(), "post", live_text("x"), (), {}, uuid.uuid4().hex)
        )
        assert result.provider_post_id.isdigit()
        await adapter.delete(channel, result.provider_post_id)
    finally:
        await adapter.aclose()
