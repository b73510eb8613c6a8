"""A first comment goes out with its post through the publisher; one the network refuses once
the post is live leaves the target published, never retried, with the reason in its error."""

from __future__ import annotations

import uuid

import httpx
import pytest
from sqlalchemy import select

from pressroom.db import unit_of_work
from pressroom.providers.sandbox.models import SandboxPublication
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import create_post
from tests.posts.factories import events_of
from tests.posts.factories import get_post
from tests.posts.factories import post_body
from tests.posts.factories import publications_of
from tests.posts.factories import publish_all_due


@pytest.fixture
async def channel(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    return await connect_channel(runtime, tenant.organization_id)


async def first_comment_kept(runtime: Runtime, target_id: str) -> str | None:
    async with unit_of_work(runtime.sessions) as session:
        kept: str | None = await session.scalar(
            select(SandboxPublication.first_comment).where(
                SandboxPublication.target_id == uuid.UUID(target_id)
            )
        )
    return kept


async def test_the_first_comment_goes_out_with_the_post(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    options = {"firstComment": "Sources: https://example.org/report"}
    body = post_body(
        channel, publishNow=True, targets=[{"channelId": str(channel), "options": options}]
    )
    post = await create_post(client, tenant, body)
    await publish_all_due(runtime)
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (target["status"], target["error"]) == ("published", None)
    assert await first_comment_kept(runtime, target["id"]) == options["firstComment"]


async def test_a_refused_first_comment_leaves_the_target_published_with_the_reason(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(
        client,
        tenant,
        post_body(
            channel,
            publishNow=True,
            targets=[
                {
                    "channelId": str(channel),
                    "options": {"simulate": "comment_rejected", "firstComment": "More below"},
                }
            ],
        ),
    )
    await publish_all_due(runtime)
    published = await get_post(client, tenant, post["id"])
    [target] = published["targets"]
    # The post is live: published, once, never retried; the error says what is missing.
    assert (published["status"], target["status"], target["attempts"]) == (
        "published",
        "published",
        1,
    )
    assert target["providerPostId"] and target["url"]
    assert target["error"]["code"] == "text_rejected"
    assert target["error"]["message"].startswith(
        "The post was published but its first comment was not:"
    )
    assert await publications_of(runtime, target["id"]) == 1
    assert await first_comment_kept(runtime, target["id"]) is None
    events = await events_of(runtime, tenant.organization_id, "post.published.v1")
    assert [e["data"]["post"]["targets"][0]["error"] for e in events] == [target["error"]]
    assert await events_of(runtime, tenant.organization_id, "post.failed.v1") == []
