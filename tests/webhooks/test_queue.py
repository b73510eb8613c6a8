"""The delivery queue: claims, leases, fairness, and recording only under a held lease."""

from __future__ import annotations

import uuid
from datetime import datetime
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import func
from sqlalchemy import select

from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.runtime import Runtime
from pressroom.webhooks import queue
from pressroom.webhooks.attempt import AttemptResult
from pressroom.webhooks.attempt import ClaimedDelivery
from pressroom.webhooks.models import DeliveryAttempt
from tests.factories import Tenant

from .factories import create_endpoint
from .factories import emit
from .factories import get_delivery
from .factories import settle_queue


@pytest.fixture(params=["claim", "claim_due"])
def claim_path(request: pytest.FixtureRequest) -> str:
    """The worker's claim (one statement on PostgreSQL) and the portable one it falls back to."""
    return str(request.param)


async def claim(
    runtime: Runtime,
    *,
    path: str = "claim",
    owner: str | None = None,
    now: datetime | None = None,
    limit: int = 1000,
    room: dict[uuid.UUID, int] | None = None,
    default_room: int = 1000,
    full: list[uuid.UUID] | None = None,
    lease: timedelta = timedelta(seconds=30),
) -> list[ClaimedDelivery]:
    now = now or utcnow()
    arguments = {
        "now": now,
        "lease_until": now + lease,
        "lease_owner": owner or f"test:{uuid.uuid4().hex[:8]}",
        "limit": limit,
        "room": room or {},
        "default_room": default_room,
        "full": full or [],
    }
    if path == "claim":
        return await queue.claim(runtime, **arguments)
    async with unit_of_work(runtime.sessions) as session:
        return await queue.claim_due(session, **arguments)


@pytest.fixture(params=["record", "record_results"])
def record_path(request: pytest.FixtureRequest) -> str:
    """The worker's record (one statement on PostgreSQL) and the portable one it falls back to."""
    return str(request.param)


async def record(
    runtime: Runtime, *results: AttemptResult, path: str = "record"
) -> list[queue.Recorded]:
    if path == "record":
        recorded, _ = await queue.record(runtime, list(results), delays=(1.0,), now=utcnow())
        return recorded
    async with unit_of_work(runtime.sessions) as session:
        return await queue.record_results(session, list(results), delays=(1.0,), now=utcnow())


async def release_lapsed(runtime: Runtime) -> int:
    async with unit_of_work(runtime.sessions) as session:
        return await queue.release_lapsed_leases(session, utcnow())


def ok(delivery: ClaimedDelivery) -> AttemptResult:
    return AttemptResult(delivery, utcnow(), 200, 12, None, None, False)


async def test_claim_marks_due_deliveries_processing_under_a_lease(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, claim_path: str
):
    await settle_queue(runtime)
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/q")
    event, (delivery,) = await emit(runtime, tenant)
    (claimed,) = await claim(runtime, path=claim_path, owner="w:1")
    assert claimed.delivery_id == delivery.id
    assert claimed.event_id == event.id
    assert claimed.number == 1
    assert claimed.trigger == "scheduled"
    assert claimed.body == event.body.encode()
    assert claimed.url == "https://hooks.example.com/q"
    assert (await get_delivery(client, tenant, endpoint["id"], delivery.id))["status"] == (
        "processing"
    )
    assert await claim(runtime, path=claim_path) == []  # held: nobody else gets it


async def test_deliveries_of_disabled_endpoints_are_held(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, claim_path: str
):
    await settle_queue(runtime)
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/held")
    _, (delivery,) = await emit(runtime, tenant)
    await client.patch(
        f"/api/v1/webhooks/{endpoint['id']}", json={"enabled": False}, headers=tenant.headers
    )
    assert await claim(runtime, path=claim_path) == []
    await client.patch(
        f"/api/v1/webhooks/{endpoint['id']}", json={"enabled": True}, headers=tenant.headers
    )
    assert [c.delivery_id for c in await claim(runtime, path=claim_path)] == [delivery.id]


async def test_claim_is_fair_across_endpoints(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, claim_path: str
):
    await settle_queue(runtime)
    busy = await create_endpoint(client, tenant, "https://hooks.example.com/busy")
    for _ in range(6):
        await emit(runtime, tenant)  # a backlog for `busy`, oldest first
    quiet = await create_endpoint(
        client, tenant, "https://hooks.example.com/quiet", events=["media.created.v1"]
    )
    _, (quiet_delivery,) = await emit(runtime, tenant, "media.created.v1", {"media": {}})
    busy_id = uuid.UUID(busy["id"])
    # The worker already holds as many of `busy` as it may: the claim skips it entirely.
    claimed = await claim(runtime, path=claim_path, limit=1, full=[busy_id])
    assert [c.delivery_id for c in claimed] == [quiet_delivery.id]
    # Room for two more of `busy`, however many are due.
    claimed = await claim(runtime, path=claim_path, limit=10, room={busy_id: 2})
    assert [str(c.endpoint_id) for c in claimed] == [busy["id"]] * 2
    assert quiet["id"] != busy["id"]


async def test_result_is_recorded_only_while_the_lease_is_held(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, record_path: str
):
    await settle_queue(runtime)
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/lease")
    _, (delivery,) = await emit(runtime, tenant)
    (slow,) = await claim(runtime, owner="slow:1", lease=timedelta(seconds=-1))
    # The lease ran out: the delivery goes back to the queue and another worker takes it.
    assert await release_lapsed(runtime) >= 1
    (fast,) = await claim(runtime, owner="fast:1")
    assert fast.delivery_id == slow.delivery_id == delivery.id
    assert await record(runtime, ok(slow), path=record_path) == []
    recorded = await record(runtime, ok(fast), path=record_path)
    assert len(recorded) == 1
    read = await get_delivery(client, tenant, endpoint["id"], delivery.id)
    assert read["status"] == "succeeded"
    assert len(read["attempts"]) == 1
    # A late duplicate of the same result changes nothing either.
    assert await record(runtime, ok(fast), path=record_path) == []
    async with unit_of_work(runtime.sessions) as session:
        count = await session.scalar(
            select(func.count()).where(DeliveryAttempt.delivery_id == delivery.id)
        )
    assert count == 1


async def test_a_batch_of_results_records_each_delivery_and_its_attempt(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, record_path: str
):
    await settle_queue(runtime)
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/batch")
    for _ in range(3):
        await emit(runtime, tenant)
    succeeded, retried, refused = await claim(runtime)
    started = utcnow()
    results = [
        AttemptResult(succeeded, started, 204, 7, None, None, False),
        AttemptResult(retried, started, 503, 9, "http_error", "the endpoint answered 503", True),
        AttemptResult(refused, started, None, None, "redirect", "no redirects", False),
    ]
    recorded = await record(runtime, *results, path=record_path)
    assert {item.result.claimed.delivery_id: item.state.status for item in recorded} == {
        succeeded.delivery_id: "succeeded",
        retried.delivery_id: "pending",
        refused.delivery_id: "exhausted",
    }
    read = await get_delivery(client, tenant, endpoint["id"], retried.delivery_id)
    assert read["status"] == "pending"
    assert read["attemptCount"] == 1
    assert read["responseStatus"] == 503
    (attempt,) = read["attempts"]
    assert attempt["number"] == 1
    assert attempt["trigger"] == "scheduled"
    assert attempt["outcome"] == "failed"
    assert attempt["error"]["code"] == "http_error"
    assert (attempt["responseStatus"], attempt["latencyMs"]) == (503, 9)
    # The retry is claimable once due, under a new lease.
    (again,) = await claim(runtime, now=utcnow() + timedelta(seconds=2))
    assert (again.delivery_id, again.number) == (retried.delivery_id, 2)


async def test_live_leases_are_not_taken_back(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await settle_queue(runtime)
    await create_endpoint(client, tenant, "https://hooks.example.com/live")
    await emit(runtime, tenant)
    (claimed,) = await claim(runtime, lease=timedelta(minutes=1))
    assert await release_lapsed(runtime) == 0
    assert await claim(runtime) == []
    assert claimed.number == 1


async def test_unsent_claims_are_given_back(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await settle_queue(runtime)
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/back")
    _, (delivery,) = await emit(runtime, tenant)
    claimed = await claim(runtime)
    async with unit_of_work(runtime.sessions) as session:
        await queue.release_claims(session, claimed)
    read = await get_delivery(client, tenant, endpoint["id"], delivery.id)
    assert read["status"] == "pending"
    assert [c.delivery_id for c in await claim(runtime)] == [delivery.id]


async def test_deliveries_that_are_not_due_or_expired_are_not_claimed(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, claim_path: str
):
    await settle_queue(runtime)
    await create_endpoint(client, tenant, "https://hooks.example.com/due")
    event, _ = await emit(runtime, tenant)
    assert await claim(runtime, path=claim_path, now=event.created_at - timedelta(seconds=1)) == []
    assert await claim(runtime, path=claim_path, now=event.expires_at) == []
    assert len(await claim(runtime, path=claim_path)) == 1
