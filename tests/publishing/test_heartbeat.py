"""The publisher renews the leases of its publishes in flight: a publish that takes longer than
the lease (a video a network processes for minutes) is never taken over by another worker while
it may still succeed, and a lease another worker took over is noticed and let go."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import httpx
import pytest

from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.posts.models import PostTarget
from pressroom.publishing.heartbeat import Heartbeat
from pressroom.publishing.worker import WORKER_ID
from pressroom.publishing.worker import publish_due_targets
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import claim_as
from tests.posts.factories import create_post
from tests.posts.factories import expire_leases
from tests.posts.factories import get_post
from tests.posts.factories import post_body
from tests.posts.factories import publications_of

LEASE_SECONDS = 2.0


@pytest.fixture
async def slow_network(settings: Settings) -> AsyncIterator[Runtime]:
    """A 2 s lease, and a network whose publish takes 6 s (the sandbox's round trip): the
    two-minute video processing of a real network against a one-minute lease, scaled down."""
    runtime = Runtime.build(
        settings.model_copy(
            update={"publisher_lease_seconds": LEASE_SECONDS, "sandbox_latency_ms": 6000.0}
        )
    )
    yield runtime
    await runtime.close()


async def lease_of(runtime: Runtime, target_id: uuid.UUID) -> tuple[str | None, datetime | None]:
    async with unit_of_work(runtime.sessions) as session:
        target = await session.get(PostTarget, target_id)
        assert target is not None
        return target.lease_owner, target.lease_until


async def test_a_publish_slower_than_its_lease_is_published_once_and_never_taken_over(
    client: httpx.AsyncClient, slow_network: Runtime, tenant: Tenant
):
    channel = await connect_channel(slow_network, tenant.organization_id)
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    target_id = uuid.UUID(post["targets"][0]["id"])
    publishing = asyncio.create_task(publish_due_targets(slow_network))
    while (await lease_of(slow_network, target_id))[0] != WORKER_ID:
        assert not publishing.done(), "the publisher did not claim the target"
        await asyncio.sleep(0.02)
    rival_claims = []
    # Another worker looks for due targets all along the 6 s publish: three leases' worth.
    while not publishing.done():
        rival_claims += await claim_as(slow_network, "rival-worker", lease_seconds=60)
        await asyncio.wait({publishing}, timeout=0.2)
    assert await publishing is True
    assert rival_claims == []
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (target["status"], target["attempts"], target["error"]) == ("published", 1, None)
    assert await publications_of(slow_network, target["id"]) == 1
    assert await lease_of(slow_network, uuid.UUID(target["id"])) == (None, None)


async def test_a_renewal_extends_the_lease_by_a_whole_lease(
    client: httpx.AsyncClient, slow_network: Runtime, tenant: Tenant
):
    channel = await connect_channel(slow_network, tenant.organization_id)
    await create_post(client, tenant, post_body(channel, publishNow=True))
    [claimed] = await claim_as(slow_network, "worker", lease_seconds=LEASE_SECONDS)
    heartbeat = Heartbeat(slow_network, "worker")
    assert heartbeat.interval == pytest.approx(LEASE_SECONDS / 3)
    heartbeat.hold(claimed.id)
    await expire_leases(slow_network)  # a stalled beat: the lease ran out, nobody took it
    before = datetime.now(UTC)
    await heartbeat.renew()
    owner, until = await lease_of(slow_network, claimed.id)
    assert owner == "worker"
    assert until is not None
    assert before + timedelta(seconds=LEASE_SECONDS - 0.5) < until
    assert until <= datetime.now(UTC) + timedelta(seconds=LEASE_SECONDS)


async def test_a_lease_taken_over_by_another_worker_is_let_go_not_renewed(
    client: httpx.AsyncClient, slow_network: Runtime, tenant: Tenant
):
    channel = await connect_channel(slow_network, tenant.organization_id)
    await create_post(client, tenant, post_body(channel, publishNow=True))
    [claimed] = await claim_as(slow_network, "stalled-worker", lease_seconds=LEASE_SECONDS)
    heartbeat = Heartbeat(slow_network, "stalled-worker")
    heartbeat.hold(claimed.id)
    await expire_leases(slow_network)
    [taken] = await claim_as(slow_network, "next-worker", lease_seconds=60)
    _, taken_until = await lease_of(slow_network, taken.id)
    await heartbeat.renew()
    # The new holder's lease is untouched, and the stalled worker stops renewing it.
    assert await lease_of(slow_network, taken.id) == ("next-worker", taken_until)
    assert heartbeat.held == frozenset()


async def test_the_heartbeat_beats_while_open_and_stops_when_closed(
    client: httpx.AsyncClient, slow_network: Runtime, tenant: Tenant
):
    channel = await connect_channel(slow_network, tenant.organization_id)
    await create_post(client, tenant, post_body(channel, publishNow=True))
    [claimed] = await claim_as(slow_network, "worker", lease_seconds=LEASE_SECONDS)
    _, first_until = await lease_of(slow_network, claimed.id)
    assert first_until is not None
    async with Heartbeat(slow_network, "worker") as heartbeat:
        heartbeat.hold(claimed.id)
        renewed = first_until
        deadline = asyncio.get_running_loop().time() + 5 * LEASE_SECONDS
        while renewed <= first_until and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.1)
            renewed = (await lease_of(slow_network, claimed.id))[1] or first_until
    assert renewed > first_until
    closed_at = datetime.now(UTC)
    # Closed (the worker stopped): the lease lapses within one lease.
    await asyncio.sleep(LEASE_SECONDS / 3 + 0.3)
    assert (await lease_of(slow_network, claimed.id))[1] == renewed
    assert renewed <= closed_at + timedelta(seconds=LEASE_SECONDS)
