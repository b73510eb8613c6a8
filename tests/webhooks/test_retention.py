"""Retention: deliveries expire with their event, are never sent afterwards, and are purged
(events, deliveries, attempts) one further retention period later, at most a day."""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import func
from sqlalchemy import select

from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.runtime import Runtime
from pressroom.webhooks import retention
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import DeliveryAttempt
from pressroom.webhooks.models import Event
from pressroom.webhooks.outbox import emit_event
from pressroom.webhooks.retention import expire_deliveries
from pressroom.webhooks.retention import purge_expired
from pressroom.webhooks.retention import purge_grace
from pressroom.webhooks.retention import sweep_webhooks
from tests.factories import Tenant

from .factories import create_endpoint
from .factories import emit
from .factories import get_delivery
from .factories import requests_to
from .factories import settled_delivery
from .factories import unique_path
from .receiver import WebhookReceiver


async def emit_expiring(runtime: Runtime, tenant: Tenant, seconds: int) -> tuple[Event, Delivery]:
    async with unit_of_work(runtime.sessions) as session:
        event, (delivery,) = await emit_event(
            session,
            runtime.notifier,
            organization_id=tenant.organization_id,
            event_type="post.created.v1",
            data={},
            retention_seconds=seconds,
        )
    return event, delivery


async def stored_status(runtime: Runtime, delivery: Delivery) -> str | None:
    async with unit_of_work(runtime.sessions) as session:
        row = await session.get(Delivery, delivery.id)
        return None if row is None else row.status


async def test_delivery_past_its_expiry_reads_expired_at_once(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/exp")
    _, delivery = await emit_expiring(runtime, tenant, 0)
    read = await get_delivery(client, tenant, endpoint["id"], delivery.id)
    assert read["status"] == "expired"
    assert read["nextAttemptAt"] is None
    listed = await client.get(
        f"/api/v1/webhooks/{endpoint['id']}/deliveries?status=expired", headers=tenant.headers
    )
    assert [item["id"] for item in listed.json()["items"]] == [str(delivery.id)]
    pending = await client.get(
        f"/api/v1/webhooks/{endpoint['id']}/deliveries?status=pending", headers=tenant.headers
    )
    assert pending.json()["items"] == []


async def test_sweeper_marks_expired_deliveries(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await create_endpoint(client, tenant, "https://hooks.example.com/sweep")
    _, expired = await emit_expiring(runtime, tenant, 0)
    _, live = await emit_expiring(runtime, tenant, 3600)
    while await expire_deliveries(runtime, utcnow(), batch=100):
        pass
    assert await stored_status(runtime, expired) == "expired"
    assert await stored_status(runtime, live) == "pending"


@pytest.mark.usefixtures("worker")
async def test_expired_delivery_is_never_sent(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    path = unique_path()
    await create_endpoint(client, tenant, receiver.url_for(path))
    await emit_expiring(runtime, tenant, 0)
    # A later event to the same endpoint is sent: the worker ran past the expired one.
    _, live = await emit_expiring(runtime, tenant, 3600)
    await settled_delivery(client, tenant, live.endpoint_id, live.id, status="succeeded")
    requests = requests_to(receiver, path)
    assert [r.headers["webhook-id"] for r in requests] == [str(live.event_id)]


async def test_purge_removes_events_deliveries_and_attempts_after_the_grace(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/purge")
    old_event, old = await emit_expiring(runtime, tenant, 0)
    async with unit_of_work(runtime.sessions) as session:
        session.add(
            DeliveryAttempt(
                delivery_id=old.id,
                number=1,
                trigger="scheduled",
                started_at=utcnow(),
                response_status=500,
                latency_ms=3,
                outcome="failed",
                error_code="http_error",
                error_message="the endpoint answered 500",
            )
        )
    kept_event, kept = await emit(runtime, tenant)
    # Within the grace nothing goes; past it (here: a clock a day ahead) the expired go.
    await purge_expired(runtime, old_event.expires_at - timedelta(seconds=1))
    async with unit_of_work(runtime.sessions) as session:
        assert await session.get(Event, old_event.id) is not None
    while await purge_expired(runtime, old_event.expires_at + timedelta(seconds=1)):
        pass
    async with unit_of_work(runtime.sessions) as session:
        assert await session.get(Event, old_event.id) is None
        assert await session.get(Delivery, old.id) is None
        attempts = await session.scalar(
            select(func.count()).where(DeliveryAttempt.delivery_id == old.id)
        )
        assert attempts == 0
        assert await session.get(Event, kept_event.id) is not None
        assert await session.get(Delivery, kept[0].id) is not None
    gone = await client.get(
        f"/api/v1/webhooks/{endpoint['id']}/deliveries/{old.id}", headers=tenant.headers
    )
    assert gone.status_code == 404


def test_purge_grace_is_one_retention_period_at_most_a_day():
    assert purge_grace(5) == timedelta(seconds=5)
    assert purge_grace(259200) == timedelta(days=1)


async def test_sweeper_expires_after_72_hours_and_purges_a_day_later(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    monkeypatch: pytest.MonkeyPatch,
):
    """The sweeper loop with the default retention, its clock moved forward."""
    assert runtime.settings.webhook_retention_seconds == 72 * 3600
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/loop")
    event, (delivery,) = await emit(runtime, tenant)
    read = await get_delivery(client, tenant, endpoint["id"], delivery.id)
    assert datetime.fromisoformat(read["expiresAt"]) - datetime.fromisoformat(
        read["createdAt"]
    ) == timedelta(hours=72)

    async def sweep_at(moment: datetime) -> None:
        monkeypatch.setattr(retention, "utcnow", lambda: moment)
        while await sweep_webhooks(runtime):
            pass

    await sweep_at(event.created_at + timedelta(hours=72) - timedelta(seconds=1))
    assert await stored_status(runtime, delivery) == "pending"
    await sweep_at(event.created_at + timedelta(hours=72))
    assert await stored_status(runtime, delivery) == "expired"
    # Expired deliveries stay readable (as expired) for one more retention period, a day at most.
    await sweep_at(event.created_at + timedelta(hours=96) - timedelta(seconds=1))
    assert await stored_status(runtime, delivery) == "expired"
    await sweep_at(event.created_at + timedelta(hours=96))
    assert await stored_status(runtime, delivery) is None
    async with unit_of_work(runtime.sessions) as session:
        assert await session.get(Event, event.id) is None
    gone = await client.get(
        f"/api/v1/webhooks/{endpoint['id']}/deliveries/{delivery.id}", headers=tenant.headers
    )
    assert gone.status_code == 404
