"""Replay (replayWebhookDelivery): every refusal in the contract's order, the race, and the
one extra attempt with the original event id."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest

from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.runtime import Runtime
from pressroom.webhooks import queue
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.outbox import emit_event
from pressroom.workers.runner import WorkerRunner
from tests.factories import Tenant

from .factories import create_endpoint
from .factories import emit
from .factories import eventually
from .factories import get_delivery
from .factories import requests_arriving
from .factories import requests_to
from .factories import settled_delivery
from .factories import unique_path
from .receiver import WebhookReceiver


def replay_url(endpoint_id: object, delivery_id: object) -> str:
    return f"/api/v1/webhooks/{endpoint_id}/deliveries/{delivery_id}/replay"


async def exhausted_delivery(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
) -> tuple[dict[str, Any], str, Delivery]:
    """A delivery the receiver refused for good (400), with the worker running."""
    path = unique_path()
    endpoint = await create_endpoint(client, tenant, receiver.url_for(path))
    receiver.respond(400, path=path)
    _, deliveries = await emit(runtime, tenant)
    (delivery,) = [d for d in deliveries if str(d.endpoint_id) == endpoint["id"]]
    settled = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    assert settled["status"] == "exhausted"
    return endpoint, path, delivery


async def replay(
    client: httpx.AsyncClient, tenant: Tenant, endpoint: Any, delivery: Any
) -> httpx.Response:
    return await client.post(replay_url(endpoint, delivery), headers=tenant.headers)


def assert_not_replayable(response: httpx.Response, reason: str) -> None:
    assert response.status_code == 409, response.text
    body = response.json()
    assert body["code"] == "delivery_not_replayable"
    assert body["reason"] == reason


@pytest.mark.usefixtures("worker")
async def test_replay_of_exhausted_delivery_queues_one_attempt_with_the_same_event_id(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path, delivery = await exhausted_delivery(client, runtime, tenant, receiver)
    response = await replay(client, tenant, endpoint["id"], delivery.id)
    assert response.status_code == 202
    body = response.json()
    assert body["id"] == str(delivery.id)
    assert body["status"] in ("pending", "processing", "succeeded")
    first, second = await requests_arriving(receiver, path, 2)
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == str(delivery.event_id)
    assert first.body == second.body
    settled = await settled_delivery(
        client, tenant, endpoint["id"], delivery.id, status="succeeded"
    )
    assert [(a["number"], a["trigger"], a["outcome"]) for a in settled["attempts"]] == [
        (1, "scheduled", "failed"),
        (2, "replay", "succeeded"),
    ]
    assert settled["attemptCount"] == 2
    assert len(requests_to(receiver, path)) == 2


async def test_replay_answers_the_delivery_now_pending(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    worker: WorkerRunner,
):
    endpoint, _, delivery = await exhausted_delivery(client, runtime, tenant, receiver)
    await worker.stop()
    response = await replay(client, tenant, endpoint["id"], delivery.id)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "pending"
    assert body["eventId"] == str(delivery.event_id)
    assert body["nextAttemptAt"] is not None
    assert len(body["attempts"]) == 1


@pytest.mark.usefixtures("worker")
async def test_failed_replay_is_not_retried_and_may_be_replayed_again(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path, delivery = await exhausted_delivery(client, runtime, tenant, receiver)
    receiver.respond(503, times=5, path=path)  # retryable, yet a replay is one attempt only
    assert (await replay(client, tenant, endpoint["id"], delivery.id)).status_code == 202

    async def exhausted_again() -> dict[str, Any] | None:
        current = await get_delivery(client, tenant, endpoint["id"], delivery.id)
        done = current["status"] == "exhausted" and current["attemptCount"] == 2
        return current if done else None

    settled = await eventually(exhausted_again, what="the replay to fail")
    assert settled["attempts"][-1]["trigger"] == "replay"
    assert settled["attempts"][-1]["responseStatus"] == 503
    assert settled["nextAttemptAt"] is None
    assert (await replay(client, tenant, endpoint["id"], delivery.id)).status_code == 202


async def test_replay_while_a_replay_is_queued_is_409_replay_in_progress(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    worker: WorkerRunner,
):
    endpoint, _, delivery = await exhausted_delivery(client, runtime, tenant, receiver)
    await worker.stop()
    assert (await replay(client, tenant, endpoint["id"], delivery.id)).status_code == 202
    again = await replay(client, tenant, endpoint["id"], delivery.id)
    assert again.status_code == 409
    assert again.json()["code"] == "replay_in_progress"


async def test_replay_while_the_replay_attempt_runs_is_409_replay_in_progress(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    worker: WorkerRunner,
):
    endpoint, _, delivery = await exhausted_delivery(client, runtime, tenant, receiver)
    await worker.stop()
    assert (await replay(client, tenant, endpoint["id"], delivery.id)).status_code == 202
    await claim_everything(runtime)
    assert (await get_delivery(client, tenant, endpoint["id"], delivery.id))["status"] == (
        "processing"
    )
    again = await replay(client, tenant, endpoint["id"], delivery.id)
    assert again.status_code == 409
    assert again.json()["code"] == "replay_in_progress"


async def test_two_concurrent_replays_exactly_one_wins(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    worker: WorkerRunner,
):
    exhausted = [await exhausted_delivery(client, runtime, tenant, receiver) for _ in range(3)]
    await worker.stop()  # the replays stay queued while they race
    for endpoint, _, delivery in exhausted:
        responses = await asyncio.gather(
            *(replay(client, tenant, endpoint["id"], delivery.id) for _ in range(2))
        )
        assert sorted(r.status_code for r in responses) == [202, 409]
        (loser,) = [r for r in responses if r.status_code == 409]
        assert loser.json()["code"] == "replay_in_progress"
    from pressroom.workers.loops import webhook_loops

    restarted = WorkerRunner(runtime, webhook_loops(), grace_seconds=5)
    await restarted.start()
    try:
        for endpoint, path, delivery in exhausted:
            settled = await settled_delivery(
                client, tenant, endpoint["id"], delivery.id, status="succeeded"
            )
            assert [a["trigger"] for a in settled["attempts"]] == ["scheduled", "replay"]
            sent = [
                r
                for r in requests_to(receiver, path)
                if r.headers["webhook-id"] == str(delivery.event_id)
            ]
            assert len(sent) == 2
    finally:
        await restarted.stop()


@pytest.mark.usefixtures("worker")
async def test_replay_of_succeeded_delivery_is_409(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint = await create_endpoint(client, tenant, receiver.url_for(unique_path()))
    _, (delivery,) = await emit(runtime, tenant)
    await settled_delivery(client, tenant, endpoint["id"], delivery.id, status="succeeded")
    assert_not_replayable(await replay(client, tenant, endpoint["id"], delivery.id), "succeeded")


async def test_replay_of_pending_delivery_is_409(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/pending")
    _, (delivery,) = await emit(runtime, tenant)  # no worker runs: it stays pending
    assert_not_replayable(await replay(client, tenant, endpoint["id"], delivery.id), "pending")


async def claim_everything(runtime: Runtime) -> None:
    """Claim due deliveries the way a worker does (and then, here, sit on them)."""
    now = utcnow()
    await queue.claim(
        runtime,
        now=now,
        lease_until=now + timedelta(minutes=5),
        lease_owner=f"test:{uuid.uuid4().hex[:8]}",
        limit=1000,
        room={},
        default_room=1000,
        full=[],
    )


async def test_replay_of_processing_delivery_is_409(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/processing")
    _, (delivery,) = await emit(runtime, tenant)
    await claim_everything(runtime)
    assert (await get_delivery(client, tenant, endpoint["id"], delivery.id))["status"] == (
        "processing"
    )
    assert_not_replayable(await replay(client, tenant, endpoint["id"], delivery.id), "processing")


@pytest.mark.usefixtures("worker")
async def test_replay_of_expired_delivery_is_409(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    path = unique_path()
    endpoint = await create_endpoint(client, tenant, receiver.url_for(path))
    receiver.respond(400, path=path)
    async with unit_of_work(runtime.sessions) as session:
        _, (delivery,) = await emit_event(
            session,
            runtime.notifier,
            organization_id=tenant.organization_id,
            event_type="post.created.v1",
            data={"post": {"id": "p"}},
            # Long enough for its one attempt to end it `exhausted` first on a loaded machine.
            retention_seconds=4,
        )
    await settled_delivery(client, tenant, endpoint["id"], delivery.id, status="exhausted")
    await settled_delivery(client, tenant, endpoint["id"], delivery.id, status="expired")
    assert_not_replayable(await replay(client, tenant, endpoint["id"], delivery.id), "expired")


@pytest.mark.usefixtures("worker")
async def test_replay_for_a_disabled_endpoint_is_409(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, _, delivery = await exhausted_delivery(client, runtime, tenant, receiver)
    await client.patch(
        f"/api/v1/webhooks/{endpoint['id']}", json={"enabled": False}, headers=tenant.headers
    )
    response = await replay(client, tenant, endpoint["id"], delivery.id)
    assert_not_replayable(response, "endpoint_disabled")


async def test_disabled_endpoint_is_reported_before_the_delivery_state(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/order")
    _, (delivery,) = await emit(runtime, tenant)  # pending, which would be refused too
    await client.patch(
        f"/api/v1/webhooks/{endpoint['id']}", json={"enabled": False}, headers=tenant.headers
    )
    assert_not_replayable(
        await replay(client, tenant, endpoint["id"], delivery.id), "endpoint_disabled"
    )


async def test_expiry_is_reported_before_the_delivery_state(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/order")
    async with unit_of_work(runtime.sessions) as session:
        _, (delivery,) = await emit_event(
            session,
            runtime.notifier,
            organization_id=tenant.organization_id,
            event_type="post.created.v1",
            data={},
            retention_seconds=0,  # expired at once, still pending underneath
        )
    assert_not_replayable(await replay(client, tenant, endpoint["id"], delivery.id), "expired")


async def test_disabled_endpoint_is_reported_before_expiry(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/order")
    async with unit_of_work(runtime.sessions) as session:
        _, (delivery,) = await emit_event(
            session,
            runtime.notifier,
            organization_id=tenant.organization_id,
            event_type="post.created.v1",
            data={},
            retention_seconds=0,
        )
    await client.patch(
        f"/api/v1/webhooks/{endpoint['id']}", json={"enabled": False}, headers=tenant.headers
    )
    assert_not_replayable(
        await replay(client, tenant, endpoint["id"], delivery.id), "endpoint_disabled"
    )


@pytest.mark.usefixtures("worker")
async def test_expiry_is_reported_before_success(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint = await create_endpoint(client, tenant, receiver.url_for(unique_path()))
    _, (delivery,) = await emit(runtime, tenant)
    await settled_delivery(client, tenant, endpoint["id"], delivery.id, status="succeeded")
    async with unit_of_work(runtime.sessions) as session:
        row = await session.get(Delivery, delivery.id)
        assert row is not None
        row.expires_at = utcnow() - timedelta(seconds=1)  # 72 hours later, as far as it knows
    await settled_delivery(client, tenant, endpoint["id"], delivery.id, status="expired")
    assert_not_replayable(await replay(client, tenant, endpoint["id"], delivery.id), "expired")


@pytest.mark.usefixtures("worker")
async def test_replay_across_organizations_is_404(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    other_tenant: Tenant,
    receiver: WebhookReceiver,
):
    endpoint, path, delivery = await exhausted_delivery(client, runtime, tenant, receiver)
    response = await replay(client, other_tenant, endpoint["id"], delivery.id)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    # Their own endpoint with our delivery id is no better.
    theirs = await create_endpoint(client, other_tenant, "https://hooks.example.com/theirs")
    assert (await replay(client, other_tenant, theirs["id"], delivery.id)).status_code == 404
    assert len(requests_to(receiver, path)) == 1


async def test_replay_of_unknown_delivery_is_404(client: httpx.AsyncClient, tenant: Tenant):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/x")
    assert (await replay(client, tenant, endpoint["id"], uuid.uuid4())).status_code == 404


async def test_replay_accepts_an_empty_object_as_its_body(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    worker: WorkerRunner,
):
    endpoint, _, delivery = await exhausted_delivery(client, runtime, tenant, receiver)
    await worker.stop()
    response = await client.post(
        replay_url(endpoint["id"], delivery.id), json={}, headers=tenant.headers
    )
    assert response.status_code == 202
    assert response.json()["status"] == "pending"


async def test_replay_with_a_body_other_than_empty_object_is_400(
    client: httpx.AsyncClient, tenant: Tenant
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/x")
    response = await client.post(
        replay_url(endpoint["id"], uuid.uuid4()), json={"force": True}, headers=tenant.headers
    )
    assert response.status_code == 400


async def test_replay_that_lost_the_race_after_reading_is_replay_in_progress(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    """The conditional update decides, not the state read before it."""
    from pressroom.kit.errors import PressroomError
    from pressroom.webhooks import repository
    from pressroom.webhooks.replay import replay_delivery

    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/race")
    _, (queued,) = await emit(runtime, tenant)
    async with unit_of_work(runtime.sessions) as session:
        row = await session.get(Delivery, queued.id)
        assert row is not None
        row.status = "exhausted"  # as the worker leaves a delivery whose attempts all failed
    endpoint_id = uuid.UUID(endpoint["id"])
    async with unit_of_work(runtime.sessions) as session:
        endpoint_row = await repository.get_endpoint(session, tenant.organization_id, endpoint_id)
        stale = await repository.get_delivery(session, endpoint_id, queued.id)
    assert endpoint_row is not None and stale is not None and stale.status == "exhausted"
    async with unit_of_work(runtime.sessions) as session:
        winner = await repository.get_delivery(session, endpoint_id, queued.id)
        assert winner is not None
        await replay_delivery(session, runtime, endpoint_row, winner)
    async with unit_of_work(runtime.sessions) as session:
        with pytest.raises(PressroomError) as lost:
            await replay_delivery(session, runtime, endpoint_row, stale)
    assert lost.value.code == "replay_in_progress"


async def test_racing_replays_in_concurrent_transactions_exactly_one_wins(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    worker: WorkerRunner,
    is_postgres: bool,
):
    """Several transactions on PostgreSQL all read the delivery as exhausted before any of them
    writes; the row lock and the conditional update let exactly one queue the replay."""
    if not is_postgres:
        pytest.skip("SQLite runs one writing transaction at a time: there is no race to lose")
    from pressroom.kit.errors import PressroomError
    from pressroom.webhooks import repository
    from pressroom.webhooks.replay import replay_delivery

    endpoint, path, exhausted = await exhausted_delivery(client, runtime, tenant, receiver)
    await worker.stop()
    endpoint_id = uuid.UUID(endpoint["id"])
    racers = 6
    all_read = asyncio.Barrier(racers)

    async def race() -> str:
        async with unit_of_work(runtime.sessions) as session:
            endpoint_row = await repository.get_endpoint(
                session, tenant.organization_id, endpoint_id
            )
            delivery = await repository.get_delivery(session, endpoint_id, exhausted.id)
            assert endpoint_row is not None and delivery is not None
            assert delivery.status == "exhausted"
            await all_read.wait()
            try:
                await replay_delivery(session, runtime, endpoint_row, delivery)
            except PressroomError as refused:
                return refused.code
            return "queued"

    outcomes = await asyncio.wait_for(asyncio.gather(*(race() for _ in range(racers))), 30)
    assert sorted(outcomes) == ["queued"] + ["replay_in_progress"] * (racers - 1)
    queued = await get_delivery(client, tenant, endpoint["id"], exhausted.id)
    assert queued["status"] == "pending"
    assert len(queued["attempts"]) == 1

    from pressroom.workers.loops import webhook_loops

    restarted = WorkerRunner(runtime, webhook_loops(), grace_seconds=5)
    await restarted.start()
    try:
        settled = await settled_delivery(
            client, tenant, endpoint["id"], exhausted.id, status="succeeded"
        )
    finally:
        await restarted.stop()
    assert [a["trigger"] for a in settled["attempts"]] == ["scheduled", "replay"]
    assert len(requests_to(receiver, path)) == 2
