"""Post events are rows written in the transaction of the change (the outbox): a request that
fails leaves none, one that succeeds leaves exactly its own, with the contract's data."""

from __future__ import annotations

import uuid

import httpx
import pytest
from sqlalchemy import func
from sqlalchemy import select

from pressroom.auth.service import Principal
from pressroom.channels.disconnecting import disconnect_channel
from pressroom.db import unit_of_work
from pressroom.posts.creating import create_post as create_post_service
from pressroom.posts.models import Post
from pressroom.posts.schemas import PostCreate
from pressroom.posts.schemas import PostUpdate
from pressroom.posts.updating import update_post as update_post_service
from pressroom.runtime import Runtime
from pressroom.webhooks.models import Event
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import create_post
from tests.posts.factories import events_of
from tests.posts.factories import future
from tests.posts.factories import get_post
from tests.posts.factories import patch_post
from tests.posts.factories import post_body
from tests.posts.factories import publish_all_due


@pytest.fixture
async def channel(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    return await connect_channel(runtime, tenant.organization_id)


async def post_events(runtime: Runtime, tenant: Tenant) -> list[dict[str, object]]:
    events = await events_of(runtime, tenant.organization_id)
    return [e for e in events if str(e["type"]).startswith("post.")]


async def count_rows(runtime: Runtime, model: type[Post] | type[Event]) -> int:
    async with unit_of_work(runtime.sessions) as session:
        return int(await session.scalar(select(func.count()).select_from(model)) or 0)


async def test_each_operation_writes_exactly_its_events(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, scheduledAt=future()))
    assert [e["type"] for e in await post_events(runtime, tenant)] == [
        "post.created.v1",
        "post.scheduled.v1",
    ]
    updated = (await patch_post(client, tenant, post["id"], {"tags": ["x"]})).json()
    await client.delete(f"/api/v1/posts/{post['id']}", headers=tenant.headers)
    events = await post_events(runtime, tenant)
    assert [e["type"] for e in events] == [
        "post.created.v1",
        "post.scheduled.v1",
        "post.updated.v1",
        "post.deleted.v1",
    ]
    assert events[0]["data"] == {"post": post}
    assert events[2]["data"] == {"post": updated}
    assert events[3]["data"] == {"post": updated}
    assert {e["organizationId"] for e in events} == {str(tenant.organization_id)}


async def test_a_rejected_request_writes_no_event(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    before = await count_rows(runtime, Event)
    response = await client.post(
        "/api/v1/posts",
        json=post_body(channel, text="x" * 301, scheduledAt=future()),
        headers=tenant.headers,
    )
    assert response.status_code == 400
    assert await count_rows(runtime, Event) == before


async def test_a_change_that_rolls_back_takes_its_events_with_it(
    runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    """The service writes the post and its events; the transaction then fails: neither stays."""
    posts_before = await count_rows(runtime, Post)
    events_before = await count_rows(runtime, Event)
    body = PostCreate.model_validate(post_body(channel, scheduledAt=future()))
    principal = _principal(tenant)

    async def create_then_fail() -> None:
        async with unit_of_work(runtime.sessions) as session:
            await create_post_service(session, runtime, principal, body)
            written = await session.scalar(select(func.count()).select_from(Event))
            assert written == events_before + 2
            raise RuntimeError("failure after the events were written")

    with pytest.raises(RuntimeError, match="after the events"):
        await create_then_fail()
    assert await count_rows(runtime, Post) == posts_before
    assert await count_rows(runtime, Event) == events_before


async def test_an_update_that_rolls_back_leaves_the_post_and_no_event(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    events_before = await count_rows(runtime, Event)
    body = PostUpdate.model_validate({"text": "Changed", "scheduledAt": future()})

    async def update_then_fail() -> None:
        async with unit_of_work(runtime.sessions) as session:
            view = await update_post_service(
                session, runtime, _principal(tenant), uuid.UUID(post["id"]), body
            )
            assert view.status == "scheduled"
            written = await session.scalar(select(func.count()).select_from(Event))
            assert written == events_before + 2  # post.updated.v1 and post.scheduled.v1
            raise RuntimeError("failure after the events were written")

    with pytest.raises(RuntimeError, match="after the events"):
        await update_then_fail()
    assert await count_rows(runtime, Event) == events_before
    assert await get_post(client, tenant, post["id"]) == post


async def test_a_disconnect_that_rolls_back_leaves_the_channel_and_no_event(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    events_before = await count_rows(runtime, Event)

    async def disconnect_then_fail() -> None:
        async with unit_of_work(runtime.sessions) as session:
            await disconnect_channel(session, runtime, tenant.organization_id, channel)
            raise RuntimeError("failure after the events were written")

    with pytest.raises(RuntimeError, match="after the events"):
        await disconnect_then_fail()
    assert await count_rows(runtime, Event) == events_before
    assert (
        await client.get(f"/api/v1/channels/{channel}", headers=tenant.headers)
    ).status_code == 200


async def test_published_event_carries_the_post_and_the_target(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    await publish_all_due(runtime)
    final = await get_post(client, tenant, post["id"])
    [event] = await events_of(runtime, tenant.organization_id, "post.published.v1")
    assert event["data"] == {"post": final, "targetId": post["targets"][0]["id"]}


def _principal(tenant: Tenant) -> Principal:
    from datetime import UTC
    from datetime import datetime

    now = datetime.now(UTC)
    return Principal(
        organization_id=tenant.organization_id,
        organization_name="Acme",
        organization_created_at=now,
        member_id=tenant.member_id,
        member_email="owner@example.com",
        member_role="owner",
        credential_id=tenant.key_id,
        credential_name="key",
        credential_prefix=tenant.key[:12],
        credential_created_at=now,
        credential_expires_at=None,
        scopes=frozenset({"posts:write"}),
    )
