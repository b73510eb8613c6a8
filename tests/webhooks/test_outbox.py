"""The outbox: emit_event writes the event and its deliveries in the caller's transaction."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest
from sqlalchemy import func
from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.runtime import Runtime
from pressroom.webhooks import repository
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import Event
from pressroom.webhooks.models import WebhookEndpoint
from pressroom.webhooks.outbox import DELIVERIES_CHANNEL
from pressroom.webhooks.outbox import EVENT_TYPES
from pressroom.webhooks.outbox import emit_event
from tests.factories import Tenant

from .factories import create_endpoint
from .factories import emit
from .factories import requests_to
from .factories import settled_delivery
from .factories import unique_path
from .receiver import WebhookReceiver


async def test_event_body_is_compact_json_of_the_contract_shape(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    event, _ = await emit(runtime, tenant, data={"post": {"id": "p", "text": "ünïcode ✓"}})
    assert event.body == json.dumps(
        json.loads(event.body), separators=(",", ":"), ensure_ascii=False
    )
    body = json.loads(event.body)
    assert list(body) == ["id", "type", "createdAt", "organizationId", "data"]
    assert body["id"] == str(event.id)
    assert body["createdAt"].endswith("Z")
    assert body["data"]["post"]["text"] == "ünïcode ✓"


async def test_one_delivery_per_subscribed_enabled_endpoint_of_the_organization(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
):
    subscribed = await create_endpoint(client, tenant, "https://hooks.example.com/a")
    also = await create_endpoint(
        client, tenant, "https://hooks.example.com/b", events=["post.created.v1", "post.failed.v1"]
    )
    await create_endpoint(client, tenant, "https://hooks.example.com/c", events=["post.failed.v1"])
    await create_endpoint(client, tenant, "https://hooks.example.com/d", enabled=False)
    await create_endpoint(client, other_tenant, "https://hooks.example.com/e")
    event, deliveries = await emit(runtime, tenant, "post.created.v1")
    assert {str(d.endpoint_id) for d in deliveries} == {subscribed["id"], also["id"]}
    for delivery in deliveries:
        assert delivery.event_id == event.id
        assert delivery.status == "pending"
        assert delivery.next_trigger == "scheduled"
        assert delivery.expires_at == event.expires_at
        assert delivery.next_attempt_at == event.created_at


async def test_event_without_subscribers_is_still_recorded(runtime: Runtime, tenant: Tenant):
    event, deliveries = await emit(runtime, tenant, "channel.connected.v1", {"channel": {}})
    assert deliveries == []
    async with unit_of_work(runtime.sessions) as session:
        assert await session.get(Event, event.id) is not None


async def test_only_endpoint_ignores_filters(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    target = await create_endpoint(client, tenant, "https://hooks.example.com/t")
    await create_endpoint(client, tenant, "https://hooks.example.com/u", events=["webhook.test.v1"])
    async with unit_of_work(runtime.sessions) as session:
        _, deliveries = await emit_event(
            session,
            runtime.notifier,
            organization_id=tenant.organization_id,
            event_type="webhook.test.v1",
            data={"endpointId": target["id"]},
            retention_seconds=60,
            only_endpoint_id=uuid.UUID(target["id"]),
            trigger="test",
        )
    (delivery,) = deliveries
    assert str(delivery.endpoint_id) == target["id"]
    assert delivery.next_trigger == "test"


async def test_rolled_back_cause_leaves_no_event_and_no_delivery(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await create_endpoint(client, tenant, "https://hooks.example.com/r")

    class CauseFailed(Exception):
        pass

    async def cause_that_fails() -> None:
        async with unit_of_work(runtime.sessions) as session:
            await emit_event(
                session,
                runtime.notifier,
                organization_id=tenant.organization_id,
                event_type="post.created.v1",
                data={},
                retention_seconds=60,
            )
            raise CauseFailed

    with pytest.raises(CauseFailed):
        await cause_that_fails()
    async with unit_of_work(runtime.sessions) as session:
        for model in (Event, Delivery):
            count = await session.scalar(
                select(func.count()).where(model.organization_id == tenant.organization_id)
            )
            assert count == 0


@pytest.mark.usefixtures("worker")
async def test_event_emitted_by_a_failing_write_is_rolled_back_with_it(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    path = unique_path()
    endpoint = await create_endpoint(client, tenant, receiver.url_for(path), description="before")
    endpoint_id = uuid.UUID(endpoint["id"])
    emitted: list[tuple[Event, list[Delivery]]] = []

    async def change_then_refused_write() -> None:
        async with unit_of_work(runtime.sessions) as session:
            row = await repository.get_endpoint(session, tenant.organization_id, endpoint_id)
            assert row is not None
            row.description = "after"  # the change...
            emitted.append(  # ...its event, flushed with it...
                await emit_event(
                    session,
                    runtime.notifier,
                    organization_id=tenant.organization_id,
                    event_type="post.created.v1",
                    data={"post": {"id": "doomed"}},
                    retention_seconds=60,
                )
            )
            # ...and a write the database refuses (the endpoint's primary key, again).
            await session.execute(
                insert(WebhookEndpoint.__table__).values(
                    id=endpoint_id,
                    organization_id=tenant.organization_id,
                    url=endpoint["url"],
                    events={"events": ["post.created.v1"]},
                    enabled=True,
                    secret_encrypted="x",
                    secret_last4="xxxx",
                    secret_created_at=utcnow(),
                    created_at=utcnow(),
                    updated_at=utcnow(),
                )
            )

    with pytest.raises(IntegrityError):
        await change_then_refused_write()
    ((doomed, deliveries),) = emitted
    assert len(deliveries) == 1
    async with unit_of_work(runtime.sessions) as session:
        assert await session.get(Event, doomed.id) is None
        assert await session.get(Delivery, deliveries[0].id) is None
    read = await client.get(f"/api/v1/webhooks/{endpoint_id}", headers=tenant.headers)
    assert read.json()["description"] == "before"
    # The worker goes on delivering later events, and never the rolled-back one.
    marker, (delivery,) = await emit(runtime, tenant)
    await settled_delivery(client, tenant, endpoint_id, delivery.id, status="succeeded")
    listed = await client.get(f"/api/v1/webhooks/{endpoint_id}/deliveries", headers=tenant.headers)
    assert [item["id"] for item in listed.json()["items"]] == [str(delivery.id)]
    assert [r.headers["webhook-id"] for r in requests_to(receiver, path)] == [str(marker.id)]


async def test_workers_are_woken_on_commit_only(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await create_endpoint(client, tenant, "https://hooks.example.com/w")
    waiter = runtime.notifier.waiter(DELIVERIES_CHANNEL)
    try:
        async with unit_of_work(runtime.sessions) as session:
            await emit_event(
                session,
                runtime.notifier,
                organization_id=tenant.organization_id,
                event_type="post.created.v1",
                data={},
                retention_seconds=60,
            )
            assert not waiter.is_set()
        await asyncio.wait_for(waiter.wait(), 5)
    finally:
        runtime.notifier.forget(DELIVERIES_CHANNEL, waiter)


async def test_unknown_event_type_is_refused(runtime: Runtime, tenant: Tenant):
    async with unit_of_work(runtime.sessions) as session:
        with pytest.raises(ValueError, match="unknown event type"):
            await emit_event(
                session,
                runtime.notifier,
                organization_id=tenant.organization_id,
                event_type="post.exploded.v1",
                data={},
                retention_seconds=60,
            )


def test_event_kinds_are_the_specifications_eleven():
    assert len(EVENT_TYPES) == len(set(EVENT_TYPES)) == 11
    assert all(kind.endswith(".v1") for kind in EVENT_TYPES)


def test_the_api_event_type_lists_the_same_kinds():
    from typing import get_args

    from pressroom.webhooks.schemas import EventType

    assert get_args(EventType) == EVENT_TYPES
