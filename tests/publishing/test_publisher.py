"""The publisher loop, driven one batch at a time through its run_once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy import update

from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.posts.models import PostTarget
from pressroom.providers.adapter import ProviderError
from pressroom.providers.sandbox.models import SandboxPublication
from pressroom.publishing import queue
from pressroom.publishing.queue import Outcome
from pressroom.publishing.worker import publish_due_targets
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import claim_as
from tests.posts.factories import create_post
from tests.posts.factories import events_of
from tests.posts.factories import expire_leases
from tests.posts.factories import future
from tests.posts.factories import get_post
from tests.posts.factories import iso
from tests.posts.factories import make_due
from tests.posts.factories import post_body
from tests.posts.factories import publications_of
from tests.posts.factories import publish_all_due
from tests.posts.factories import publish_as


@pytest.fixture
async def channel(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    return await connect_channel(runtime, tenant.organization_id)


@pytest.fixture
async def quick_retries(settings: Settings) -> AsyncIterator[Runtime]:
    """A publisher whose retries come at once: 3 attempts in all."""
    runtime = Runtime.build(settings.model_copy(update={"publisher_retry_schedule": "0,0"}))
    yield runtime
    await runtime.close()


def simulate(channel: uuid.UUID, how: str, **more: object) -> dict[str, object]:
    options = {"simulate": how, **more}
    return post_body(
        channel, publishNow=True, targets=[{"channelId": str(channel), "options": options}]
    )


async def test_publish_now_is_published_with_the_providers_id_and_url(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    assert await publish_due_targets(runtime) is True
    published = await get_post(client, tenant, post["id"])
    assert published["status"] == "published"
    [target] = published["targets"]
    assert target["status"] == "published"
    assert target["url"] == f"https://sandbox.invalid/p/{target['providerPostId']}"
    assert target["publishedAt"].endswith("Z")
    assert (target["attempts"], target["error"]) == (1, None)
    assert published["publishedAt"] == target["publishedAt"]
    assert await publications_of(runtime, target["id"]) == 1
    events = await events_of(runtime, tenant.organization_id, "post.published.v1")
    assert [e["data"]["targetId"] for e in events] == [target["id"]]


async def test_a_scheduled_post_waits_for_its_time(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, scheduledAt=future(3600)))
    assert await publish_all_due(runtime) == 0
    assert (await get_post(client, tenant, post["id"]))["status"] == "scheduled"
    await make_due(runtime)
    await publish_all_due(runtime)
    assert (await get_post(client, tenant, post["id"]))["status"] == "published"


async def test_a_post_due_within_a_second_goes_out_on_time(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    # Due before the publisher's lookahead (1 s) ends. A machine busy enough to answer
    # createPost only once that instant is past has it refused (`in_the_past`): ask again.
    for _ in range(5):
        due = datetime.now(UTC) + timedelta(seconds=0.8)
        answer = await client.post(
            "/api/v1/posts",
            json=post_body(channel, scheduledAt=iso(due)),
            headers=tenant.headers,
        )
        if answer.status_code == 201:
            break
        assert answer.json()["errors"][0]["code"] == "in_the_past", answer.text
    assert answer.status_code == 201, answer.text
    post = answer.json()
    # The idle publisher sleeps until the target is due instead of a whole poll interval.
    assert await publish_due_targets(runtime) is True
    await publish_all_due(runtime)
    target = (await get_post(client, tenant, post["id"]))["targets"][0]
    assert target["status"] == "published"
    published_at = datetime.fromisoformat(target["publishedAt"])
    # Never early; how late is measured in bench/bench_publisher.py, not here: the bound only
    # catches a publisher that waits for a later poll instead of the target's due time.
    assert timedelta(0) <= published_at - due < timedelta(seconds=3)


async def test_several_targets_are_published_in_one_batch(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channels = [await connect_channel(runtime, tenant.organization_id) for _ in range(5)]
    body = post_body(
        channels[0], publishNow=True, targets=[{"channelId": str(c)} for c in channels]
    )
    post = await create_post(client, tenant, body)
    assert await publish_due_targets(runtime) is True
    published = await get_post(client, tenant, post["id"])
    assert {t["status"] for t in published["targets"]} == {"published"}
    assert published["status"] == "published"


async def test_retryable_errors_are_retried_then_fail_with_the_error(
    client: httpx.AsyncClient,
    runtime: Runtime,
    quick_retries: Runtime,
    tenant: Tenant,
    channel: uuid.UUID,
):
    post = await create_post(client, tenant, simulate(channel, "provider_unavailable"))
    await publish_all_due(quick_retries)
    failed = await get_post(client, tenant, post["id"])
    [target] = failed["targets"]
    assert failed["status"] == "failed"
    assert target["status"] == "failed"
    assert target["attempts"] == 3
    assert set(target["error"]) == {"code", "message", "retryable"}
    assert target["error"]["code"] == "provider_unavailable"
    assert target["error"]["retryable"] is True
    assert "unavailable" in target["error"]["message"]
    assert target["publishedAt"] is None and target["providerPostId"] is None
    events = await events_of(runtime, tenant.organization_id, "post.failed.v1")
    assert [e["data"]["targetId"] for e in events] == [target["id"]]
    assert events[0]["data"]["post"] == failed


async def test_a_retry_waits_for_the_backoff(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, simulate(channel, "provider_unavailable"))
    assert await publish_all_due(runtime) == 1
    target = (await get_post(client, tenant, post["id"]))["targets"][0]
    # Waiting for its retry (10 s by default): still publishing, with the last error.
    assert (target["status"], target["attempts"]) == ("publishing", 1)
    assert target["error"]["code"] == "provider_unavailable"
    assert (await get_post(client, tenant, post["id"]))["status"] == "publishing"


async def test_a_provider_that_recovers_gets_the_post_published(
    client: httpx.AsyncClient, quick_retries: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, simulate(channel, "provider_unavailable", failTimes=2))
    await publish_all_due(quick_retries)
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (target["status"], target["attempts"], target["error"]) == ("published", 3, None)


async def test_the_providers_retry_after_is_honoured(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    async with unit_of_work(runtime.sessions) as session:
        [claimed] = await queue.claim_due_targets(
            session, owner="w", lease_seconds=60, limit=10, now=datetime.now(UTC)
        )
    error = ProviderError("rate_limited", "slow down", retry_after=120)
    async with unit_of_work(runtime.sessions) as session:
        await queue.record_outcomes(
            session,
            runtime,
            owner="w",
            outcomes=[Outcome(claimed, error=error)],
            now=datetime.now(UTC),
        )
    async with unit_of_work(runtime.sessions) as session:
        stored = await session.get(PostTarget, uuid.UUID(post["targets"][0]["id"]))
        assert stored is not None and stored.next_attempt_at is not None
        wait = stored.next_attempt_at - datetime.now(UTC)
    assert timedelta(seconds=115) < wait < timedelta(seconds=135)


async def test_a_permanent_error_fails_at_once(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, simulate(channel, "text_rejected"))
    await publish_all_due(runtime)
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (target["status"], target["attempts"]) == ("failed", 1)
    assert target["error"]["code"] == "text_rejected"
    assert target["error"]["retryable"] is False


async def test_some_targets_failing_leave_the_post_partially_published(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    other = await connect_channel(runtime, tenant.organization_id)
    body = post_body(
        channel,
        publishNow=True,
        targets=[
            {"channelId": str(channel)},
            {"channelId": str(other), "options": {"simulate": "text_rejected"}},
        ],
    )
    post = await create_post(client, tenant, body)
    await publish_all_due(runtime)
    final = await get_post(client, tenant, post["id"])
    assert final["status"] == "partially_published"
    assert [t["status"] for t in final["targets"]] == ["published", "failed"]


async def test_publish_now_retries_the_failed_targets(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, simulate(channel, "text_rejected"))
    await publish_all_due(runtime)
    target_id = post["targets"][0]["id"]
    response = await client.patch(
        f"/api/v1/posts/{post['id']}",
        json={"publishNow": True, "targets": [{"id": target_id, "options": {}}]},
        headers=tenant.headers,
    )
    assert response.status_code == 200, response.text
    assert response.json()["targets"][0]["status"] == "publishing"
    assert response.json()["targets"][0]["error"] is None
    await publish_all_due(runtime)
    assert (await get_post(client, tenant, post["id"]))["status"] == "published"


async def test_auth_expired_requires_reconnecting_the_channel_with_one_event(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    first = await create_post(client, tenant, simulate(channel, "auth_expired"))
    second = await create_post(client, tenant, simulate(channel, "auth_expired"))
    await publish_all_due(runtime)
    for post in (first, second):
        [target] = (await get_post(client, tenant, post["id"]))["targets"]
        assert (target["status"], target["error"]["code"]) == ("failed", "auth_expired")
    form = (await client.get(f"/api/v1/channels/{channel}", headers=tenant.headers)).json()
    assert form["health"]["state"] == "reconnect_required"
    assert form["health"]["reason"]
    events = await events_of(runtime, tenant.organization_id, "channel.reconnect-required.v1")
    assert [e["data"] for e in events] == [{"channel": form}]


async def test_a_channel_needing_reconnection_is_not_called(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    await create_post(client, tenant, simulate(channel, "auth_expired"))
    await publish_all_due(runtime)
    later = await create_post(client, tenant, post_body(channel, publishNow=True))
    await publish_all_due(runtime)
    [target] = (await get_post(client, tenant, later["id"]))["targets"]
    assert (target["status"], target["error"]["code"]) == ("failed", "auth_expired")
    assert await publications_of(runtime, target["id"]) == 0
    assert (
        len(await events_of(runtime, tenant.organization_id, "channel.reconnect-required.v1")) == 1
    )


async def test_a_crashed_workers_target_is_taken_over_and_published_once(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    # A worker claims the target and reaches the network, then dies before recording.
    [claimed] = await claim_as(runtime, "crashed-worker", lease_seconds=60)
    reached = await publish_as(runtime, claimed, channel, tenant)
    # Until its lease runs out, nobody else takes the target.
    assert await publish_all_due(runtime) == 0
    await expire_leases(runtime)
    await publish_all_due(runtime)
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert target["status"] == "published"
    assert target["providerPostId"] == reached.provider_post_id
    assert target["attempts"] == 2
    async with unit_of_work(runtime.sessions) as session:
        calls = (
            await session.scalars(
                select(SandboxPublication.calls).where(SandboxPublication.target_id == claimed.id)
            )
        ).all()
    # One post on the network, reached twice with the same idempotency key.
    assert calls == [2]


async def test_an_outcome_after_the_lease_was_lost_is_not_recorded(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    [stale] = await claim_as(runtime, "slow-worker", lease_seconds=60)
    await expire_leases(runtime)
    await publish_all_due(runtime)  # another worker takes over and publishes
    async with unit_of_work(runtime.sessions) as session:
        recorded = await queue.record_outcomes(
            session,
            runtime,
            owner="slow-worker",
            outcomes=[Outcome(stale, error=ProviderError("text_rejected", "late answer"))],
            now=datetime.now(UTC),
        )
    assert recorded.lost == [stale.id]
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (target["status"], target["error"]) == ("published", None)


async def test_a_target_abandoned_on_every_attempt_ends_failed(
    client: httpx.AsyncClient, quick_retries: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    for number in range(3):  # every worker that took it died
        assert len(await claim_as(quick_retries, f"dead-{number}", lease_seconds=60)) == 1
        await expire_leases(quick_retries)
    await publish_all_due(quick_retries)
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (target["status"], target["error"]["code"]) == ("failed", "timeout")
    assert await publications_of(quick_retries, target["id"]) == 0


async def test_a_publish_in_flight_when_its_channel_goes_records_the_truth(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    [claimed] = await claim_as(runtime, "busy-worker", lease_seconds=60)
    await client.delete(f"/api/v1/channels/{channel}", headers=tenant.headers)
    result = await publish_as(runtime, claimed, channel, tenant)
    async with unit_of_work(runtime.sessions) as session:
        await queue.record_outcomes(
            session,
            runtime,
            owner="busy-worker",
            outcomes=[Outcome(claimed, result=result)],
            now=datetime.now(UTC),
        )
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (target["status"], target["providerPostId"]) == ("published", result.provider_post_id)


async def test_a_queued_target_whose_channel_went_fails_channel_disconnected(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    [claimed] = await claim_as(runtime, "busy-worker", lease_seconds=60)
    await client.delete(f"/api/v1/channels/{channel}", headers=tenant.headers)
    await expire_leases(runtime)  # the worker died: the next one finds the channel gone
    await publish_all_due(runtime)
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (target["status"], target["error"]["code"]) == ("failed", "channel_disconnected")
    assert await publications_of(runtime, str(claimed.id)) == 0


async def test_concurrent_batches_publish_each_target_once(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channels = [await connect_channel(runtime, tenant.organization_id) for _ in range(10)]
    body = post_body(
        channels[0], publishNow=True, targets=[{"channelId": str(c)} for c in channels]
    )
    posts = [await create_post(client, tenant, body) for _ in range(3)]

    async def loop() -> None:
        while await publish_due_targets(runtime):
            pass

    await asyncio.gather(loop(), loop(), loop())
    async with unit_of_work(runtime.sessions) as session:
        rows = (
            await session.execute(select(SandboxPublication.target_id, SandboxPublication.calls))
        ).all()
    targets = {t["id"] for p in posts for t in p["targets"]}
    ours = sorted(str(target) for target, calls in rows if str(target) in targets)
    assert ours == sorted(targets)
    assert {calls for target, calls in rows if str(target) in targets} == {1}


async def test_credentials_the_server_key_cannot_read_fail_the_target_not_the_batch(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    from pressroom.channels.models import Channel

    broken = await connect_channel(
        runtime, tenant.organization_id, credentials={"accessToken": "t"}
    )
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(Channel).where(Channel.id == broken).values(credentials_encrypted="garbage")
        )
    body = post_body(
        channel,
        publishNow=True,
        targets=[{"channelId": str(channel)}, {"channelId": str(broken)}],
    )
    post = await create_post(client, tenant, body)
    await publish_all_due(runtime)
    final = await get_post(client, tenant, post["id"])
    assert [t["status"] for t in final["targets"]] == ["published", "failed"]
    assert final["targets"][1]["error"]["code"] == "auth_expired"
    # The channel's health says what its targets' errors say: it must be reconnected.
    health = (await client.get(f"/api/v1/channels/{broken}", headers=tenant.headers)).json()
    assert health["health"]["state"] == "reconnect_required"
    events = await events_of(runtime, tenant.organization_id, "channel.reconnect-required.v1")
    assert [e["data"]["channel"]["id"] for e in events] == [str(broken)]


async def test_auth_expired_recorded_in_separate_batches_emits_one_event(
    client: httpx.AsyncClient, settings: Settings, tenant: Tenant, channel: uuid.UUID
):
    # One publish at a time: each failure is recorded in a transaction of its own.
    one_by_one = Runtime.build(settings.model_copy(update={"publisher_concurrency": 1}))
    try:
        posts = [
            await create_post(client, tenant, simulate(channel, "auth_expired")) for _ in range(2)
        ]
        assert await publish_all_due(one_by_one) >= 1
        for post in posts:
            [target] = (await get_post(client, tenant, post["id"]))["targets"]
            assert (target["status"], target["error"]["code"]) == ("failed", "auth_expired")
        events = await events_of(
            one_by_one, tenant.organization_id, "channel.reconnect-required.v1"
        )
        assert len(events) == 1
    finally:
        await one_by_one.close()


async def test_an_outcome_whose_transaction_fails_leaves_neither_change_nor_event(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    [claimed] = await claim_as(runtime, "worker")
    result = await publish_as(runtime, claimed, channel, tenant)

    async def record_then_fail() -> None:
        async with unit_of_work(runtime.sessions) as session:
            await queue.record_outcomes(
                session,
                runtime,
                owner="worker",
                outcomes=[Outcome(claimed, result=result)],
                now=datetime.now(UTC),
            )
            raise RuntimeError("failure after the outcome and its event were written")

    with pytest.raises(RuntimeError, match="after the outcome"):
        await record_then_fail()
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (target["status"], target["providerPostId"]) == ("publishing", None)
    assert await events_of(runtime, tenant.organization_id, "post.published.v1") == []
    # The lease still stands: the same worker (or, once it runs out, another) records it.
    async with unit_of_work(runtime.sessions) as session:
        stored = await session.get(PostTarget, claimed.id)
        assert stored is not None and stored.lease_owner == "worker"


async def test_a_target_locked_by_another_transaction_is_skipped_not_waited_for(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    channel: uuid.UUID,
    is_postgres: bool,
):
    if not is_postgres:
        pytest.skip("SKIP LOCKED is PostgreSQL's; SQLite serializes writers")
    held = await create_post(client, tenant, post_body(channel, publishNow=True))
    free = await create_post(client, tenant, post_body(channel, publishNow=True))
    held_id = uuid.UUID(held["targets"][0]["id"])
    async with runtime.sessions() as locker, locker.begin():
        await locker.execute(
            select(PostTarget.id).where(PostTarget.id == held_id).with_for_update()
        )
        # Another worker's claim neither blocks on the locked row nor takes it.
        claimed = await asyncio.wait_for(claim_as(runtime, "other-worker"), timeout=5)
        assert [str(c.id) for c in claimed] == [free["targets"][0]["id"]]
    [later] = await claim_as(runtime, "other-worker")
    assert later.id == held_id
