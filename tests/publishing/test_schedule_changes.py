"""What a new schedule or a delete does to targets the publisher already holds.

A target whose publish is in flight (a worker holds a live lease) cannot be called back: it
keeps going and its outcome is recorded. Any other target moves with the post: a new schedule
bumps its schedule version, so a worker that claimed an earlier schedule and comes back late
(a stale lease) cannot record it, and the provider receives a new idempotency key. A deleted
post is never sent to a network again; a copy made by a publish in flight is reported."""

from __future__ import annotations

import uuid
from datetime import UTC
from datetime import datetime

import httpx
import pytest
from sqlalchemy import select

from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.posts.models import PostTarget
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishResult
from pressroom.publishing.queue import Outcome
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import claim_as
from tests.posts.factories import create_post
from tests.posts.factories import events_of
from tests.posts.factories import expire_leases
from tests.posts.factories import future
from tests.posts.factories import get_post
from tests.posts.factories import make_due
from tests.posts.factories import patch_post
from tests.posts.factories import post_body
from tests.posts.factories import publications_of
from tests.posts.factories import publish_all_due
from tests.posts.factories import publish_as
from tests.posts.factories import record_as


@pytest.fixture
async def channel(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    return await connect_channel(runtime, tenant.organization_id)


async def stored_target(runtime: Runtime, target_id: str) -> PostTarget:
    async with unit_of_work(runtime.sessions) as session:
        target = await session.get(PostTarget, uuid.UUID(target_id))
        assert target is not None
        return target


def late_result() -> PublishResult:
    return PublishResult(
        provider_post_id="from-an-old-schedule",
        url="https://sandbox.invalid/p/from-an-old-schedule",
        published_at=datetime.now(UTC),
    )


# --- rescheduling ---------------------------------------------------------------------------


async def test_rescheduling_bumps_the_schedule_so_a_stale_lease_cannot_publish_the_old_one(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, scheduledAt=future(3600)))
    await make_due(runtime)
    [stale] = await claim_as(runtime, "worker-a")
    await expire_leases(runtime)  # worker-a stops answering

    response = await patch_post(client, tenant, post["id"], {"scheduledAt": future(7200)})
    assert response.status_code == 200, response.text
    moved = response.json()
    assert moved["status"] == "scheduled"
    [target] = moved["targets"]
    assert (target["status"], target["attempts"], target["error"]) == ("scheduled", 0, None)

    # worker-a comes back with an outcome of the old schedule: it is not recorded, and
    # nothing is due before the new time.
    assert (await record_as(runtime, "worker-a", [Outcome(stale, result=late_result())])).lost
    assert await publish_all_due(runtime) == 0
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (target["status"], target["providerPostId"]) == ("scheduled", None)

    # At the new time the same worker claims the new schedule, under a new idempotency key;
    # its stale outcome still cannot take the place of the new one.
    await make_due(runtime)
    [fresh] = await claim_as(runtime, "worker-a")
    assert fresh.id == stale.id
    assert fresh.schedule_version == stale.schedule_version + 1
    assert fresh.idempotency_key != stale.idempotency_key
    assert fresh.attempt == 1
    assert (await record_as(runtime, "worker-a", [Outcome(stale, result=late_result())])).lost
    result = await publish_as(runtime, fresh, channel, tenant)
    assert (await record_as(runtime, "worker-a", [Outcome(fresh, result=result)])).published
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (target["status"], target["providerPostId"]) == ("published", result.provider_post_id)
    assert await publications_of(runtime, target["id"]) == 1


async def test_a_new_schedule_moves_a_target_waiting_for_a_retry(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    body = post_body(
        channel,
        publishNow=True,
        targets=[{"channelId": str(channel), "options": {"simulate": "provider_unavailable"}}],
    )
    post = await create_post(client, tenant, body)
    await publish_all_due(runtime)
    [waiting] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (waiting["status"], waiting["error"]["code"]) == ("publishing", "provider_unavailable")
    version = (await stored_target(runtime, waiting["id"])).schedule_version

    moved = (await patch_post(client, tenant, post["id"], {"scheduledAt": future()})).json()
    assert moved["status"] == "scheduled"
    [target] = moved["targets"]
    assert (target["status"], target["attempts"], target["error"]) == ("scheduled", 0, None)
    assert (await stored_target(runtime, waiting["id"])).schedule_version == version + 1
    assert len(await events_of(runtime, tenant.organization_id, "post.scheduled.v1")) == 1


async def test_schedule_null_stops_a_target_waiting_for_a_retry(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    body = post_body(
        channel,
        publishNow=True,
        targets=[{"channelId": str(channel), "options": {"simulate": "provider_unavailable"}}],
    )
    post = await create_post(client, tenant, body)
    await publish_all_due(runtime)
    stopped = (await patch_post(client, tenant, post["id"], {"scheduledAt": None})).json()
    assert stopped["status"] == "draft"
    assert [t["status"] for t in stopped["targets"]] == ["draft"]
    await make_due(runtime)
    assert await publish_all_due(runtime) == 0


async def test_publish_now_retries_a_waiting_target_at_once(
    client: httpx.AsyncClient, settings: Settings, tenant: Tenant, channel: uuid.UUID
):
    # Retries an hour apart: only publishNow can bring the second attempt forward.
    slow = Runtime.build(settings.model_copy(update={"publisher_retry_schedule": "3600"}))
    try:
        body = post_body(
            channel,
            publishNow=True,
            targets=[{"channelId": str(channel), "options": {"simulate": "provider_unavailable"}}],
        )
        post = await create_post(client, tenant, body)
        assert await publish_all_due(slow) == 1
        target_id = post["targets"][0]["id"]
        version = (await stored_target(slow, target_id)).schedule_version
        assert await publish_all_due(slow) == 0  # waiting an hour for its retry

        again = (await patch_post(client, tenant, post["id"], {"publishNow": True})).json()
        assert [(t["status"], t["attempts"]) for t in again["targets"]] == [("publishing", 0)]
        assert await publish_all_due(slow) == 1  # attempted at once, as a new schedule
        stored = await stored_target(slow, target_id)
        assert (stored.schedule_version, stored.attempts) == (version + 1, 1)
        assert stored.error_code == "provider_unavailable"
    finally:
        await slow.close()


async def test_a_publish_in_flight_keeps_going_when_the_post_is_rescheduled(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    [claimed] = await claim_as(runtime, "busy-worker")
    response = await patch_post(client, tenant, post["id"], {"scheduledAt": future()})
    assert response.status_code == 200
    # The network may have it already: the target stays with its worker.
    assert [t["status"] for t in response.json()["targets"]] == ["publishing"]
    result = await publish_as(runtime, claimed, channel, tenant)
    assert (await record_as(runtime, "busy-worker", [Outcome(claimed, result=result)])).published
    final = await get_post(client, tenant, post["id"])
    assert final["status"] == "published"
    assert final["targets"][0]["providerPostId"] == result.provider_post_id


async def test_an_abandoned_target_is_moved_by_a_new_schedule(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    await claim_as(runtime, "dead-worker")
    await expire_leases(runtime)
    moved = (await patch_post(client, tenant, post["id"], {"scheduledAt": future()})).json()
    assert [t["status"] for t in moved["targets"]] == ["scheduled"]
    stored = await stored_target(runtime, moved["targets"][0]["id"])
    assert (stored.lease_owner, stored.lease_until) == (None, None)


# --- deleting a post while a target is publishing -----------------------------------------


async def test_delete_cancels_a_target_waiting_for_a_retry(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    body = post_body(
        channel,
        publishNow=True,
        targets=[{"channelId": str(channel), "options": {"simulate": "provider_unavailable"}}],
    )
    post = await create_post(client, tenant, body)
    await publish_all_due(runtime)
    deleted = await client.delete(f"/api/v1/posts/{post['id']}", headers=tenant.headers)
    assert deleted.status_code == 200
    assert (await stored_target(runtime, post["targets"][0]["id"])).status == "canceled"
    await make_due(runtime)
    assert await publish_all_due(runtime) == 0


async def test_a_copy_published_while_the_post_was_deleted_is_recorded_and_reported(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    [claimed] = await claim_as(runtime, "busy-worker")
    deleted = await client.delete(f"/api/v1/posts/{post['id']}", headers=tenant.headers)
    assert deleted.status_code == 200
    [deleted_event] = await events_of(runtime, tenant.organization_id, "post.deleted.v1")
    assert [t["status"] for t in deleted_event["data"]["post"]["targets"]] == ["publishing"]

    # The network had it already; the worker records what it answered.
    result = await publish_as(runtime, claimed, channel, tenant)
    assert (await record_as(runtime, "busy-worker", [Outcome(claimed, result=result)])).published

    stored = await stored_target(runtime, str(claimed.id))
    assert (stored.status, stored.provider_post_id) == ("published", result.provider_post_id)
    [published] = await events_of(runtime, tenant.organization_id, "post.published.v1")
    assert published["data"]["targetId"] == str(claimed.id)
    [target] = published["data"]["post"]["targets"]
    assert (target["status"], target["url"]) == ("published", result.url)
    # The post stays deleted.
    response = await client.get(f"/api/v1/posts/{post['id']}", headers=tenant.headers)
    assert response.status_code == 404


async def test_a_failed_publish_of_a_deleted_post_is_canceled_not_retried(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    [claimed] = await claim_as(runtime, "busy-worker")
    await client.delete(f"/api/v1/posts/{post['id']}", headers=tenant.headers)
    error = ProviderError("provider_unavailable", "try again later")
    assert (await record_as(runtime, "busy-worker", [Outcome(claimed, error=error)])).canceled
    assert (await stored_target(runtime, str(claimed.id))).status == "canceled"
    await make_due(runtime)
    assert await publish_all_due(runtime) == 0
    assert await events_of(runtime, tenant.organization_id, "post.failed.v1") == []


async def test_a_deleted_posts_target_left_by_a_dead_worker_is_never_published(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    await claim_as(runtime, "doomed-worker")
    await client.delete(f"/api/v1/posts/{post['id']}", headers=tenant.headers)
    await expire_leases(runtime)  # the worker died before reaching the network
    await publish_all_due(runtime)  # another worker takes the target over
    target_id = post["targets"][0]["id"]
    assert (await stored_target(runtime, target_id)).status == "canceled"
    assert await publications_of(runtime, target_id) == 0
    async with unit_of_work(runtime.sessions) as session:
        queued = await session.scalars(
            select(PostTarget.id).where(
                PostTarget.post_id == uuid.UUID(post["id"]),
                PostTarget.status.in_(("scheduled", "publishing")),
            )
        )
        assert queued.all() == []
