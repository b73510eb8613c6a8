"""Live: publish and delete one text post on Threads. Set PRESSROOM_LIVE_THREADS_ACCESS_TOKEN (a
long-lived Threads user token with threads_basic, threads_content_publish and threads_delete)
to run it. The token is used as it is: not refreshed, so the environment's copy stays valid."""

from __future__ import annotations

import os
import uuid

import pytest

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.http import build_client
from pressroom.providers.threads import ThreadsAdapter
from pressroom.providers.threads.oauth import read_account

from .support import live_text

ACCESS_TOKEN = os.environ.get("PRESSROOM_LIVE_THREADS_ACCESS_TOKEN")

pytestmark = pytest.mark.skipif(not ACCESS_TOKEN, reason="set PRESSROOM_LIVE_THREADS_ACCESS_TOKEN")


async def test_live_threads_publish_then_delete() -> None:
    assert ACCESS_TOKEN
    async with build_client() as http:
        account = await read_account(http, ACCESS_TOKEN)
        credentials = {"accessToken": ACCESS_TOKEN, "userId": account["id"]}
        channel = ChannelContext(uuid.uuid4(), uuid.uuid4(), "threads", None, False, credentials)
        adapter = ThreadsAdapter(media_url=None, http=http)
        assert (await adapter.check_health(channel)).state == "healthy"
        result = await adapter.publish(
            PublishRequest(
                channel, uuid.uuid4(), "post", live_text("threads"), (), {}, uuid.uuid4().hex
            )
        )
        assert result.provider_post_id.isdigit()
        await adapter.delete(channel, result.provider_post_id)
