"""Emitting events: written in the caller's transaction, fanned out to one delivery per
subscribed, enabled endpoint, and announced to the delivery workers on commit.

The outbox owns retention: use cases call `emit`, and the event and its deliveries expire
`webhook_retention_seconds` (a deployment setting) after they were written."""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING
from typing import Any
from typing import get_args

from sqlalchemy import Select
from sqlalchemy import bindparam
from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.db import table_of
from pressroom.kit.clock import utcnow
from pressroom.kit.ids import uuid7
from pressroom.kit.notify import Notifier
from pressroom.kit.schema import format_utc
from pressroom.kit.sqlite_connection import write_behind
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import Event
from pressroom.webhooks.models import WebhookEndpoint
from pressroom.webhooks.schemas import EventType

if TYPE_CHECKING:
    from pressroom.runtime import Runtime

# The event kinds are declared once, as the wire type; this is the same list as values.
EVENT_TYPES: tuple[str, ...] = get_args(EventType)

# Delivery workers listen here; a commit that queues deliveries wakes them at once.
DELIVERIES_CHANNEL = "pressroom_deliveries"


def event_body(
    event_id: uuid.UUID,
    event_type: str,
    created_at: Any,
    organization_id: uuid.UUID,
    data: dict[str, Any],
) -> str:
    """The compact JSON that is signed and sent, byte for byte, on every attempt."""
    return json.dumps(
        {
            "id": str(event_id),
            "type": event_type,
            "createdAt": format_utc(created_at),
            "organizationId": str(organization_id),
            "data": data,
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )


async def emit(
    session: AsyncSession,
    runtime: Runtime,
    *,
    organization_id: uuid.UUID,
    event_type: str,
    data: dict[str, Any],
    only_endpoint_id: uuid.UUID | None = None,
    trigger: str = "scheduled",
) -> tuple[Event, list[Delivery]]:
    """Emit an event from a use case: the deployment's retention
    (`webhook_retention_seconds`) decides when it and its deliveries expire."""
    return await emit_event(
        session,
        runtime.notifier,
        organization_id=organization_id,
        event_type=event_type,
        data=data,
        retention_seconds=runtime.settings.webhook_retention_seconds,
        only_endpoint_id=only_endpoint_id,
        trigger=trigger,
    )


async def emit_event(
    session: AsyncSession,
    notifier: Notifier,
    *,
    organization_id: uuid.UUID,
    event_type: str,
    data: dict[str, Any],
    retention_seconds: int,
    only_endpoint_id: uuid.UUID | None = None,
    trigger: str = "scheduled",
) -> tuple[Event, list[Delivery]]:
    """Write the event and its deliveries in the caller's transaction, kept for
    `retention_seconds` (use cases call `emit`, which takes the deployment's retention).

    `data` must already be JSON-ready (the API's camelCase shapes). `only_endpoint_id`
    sends to that endpoint regardless of its filters (sendWebhookTest)."""
    ((event, of_event),) = await _rows(
        session,
        organization_id=organization_id,
        events=[(event_type, data)],
        retention_seconds=retention_seconds,
        only_endpoint_id=only_endpoint_id,
        trigger=trigger,
    )
    written = Event(**event)
    deliveries = [Delivery(**row) for row in of_event]
    session.add(written)
    # The event first: its deliveries refer to it.
    await session.flush()
    if deliveries:
        session.add_all(deliveries)
        await session.flush()
        await notifier.notify(session, DELIVERIES_CHANNEL)
    return written, deliveries


@functools.cache
def _subscriptions() -> Select[tuple[uuid.UUID, dict[str, Any]]]:
    """The organization's enabled endpoints and what each subscribes to (built once, on
    first use: SQLAlchemy reuses its compiled form)."""
    endpoints = table_of(WebhookEndpoint)
    return select(endpoints.c.id, endpoints.c.events).where(
        endpoints.c.organization_id
        == bindparam("endpoints_organization_id", type_=endpoints.c.organization_id.type),
        endpoints.c.enabled.is_(True),
    )


# Sent with the transaction's next statement on SQLite (kit/sqlite_connection.py).
_INSERT_EVENTS = write_behind(insert(table_of(Event)))
_INSERT_DELIVERIES = write_behind(insert(table_of(Delivery)))


async def emit_many(
    session: AsyncSession,
    runtime: Runtime,
    *,
    organization_id: uuid.UUID,
    events: Sequence[tuple[str, dict[str, Any]]],
) -> None:
    """Emit several events of one organization, in order, as `emit` does each: the
    organization's endpoints are read once, the events written in one statement and their
    deliveries in another (Core statements: nothing enters the session)."""
    written = await _rows(
        session,
        organization_id=organization_id,
        events=events,
        retention_seconds=runtime.settings.webhook_retention_seconds,
    )
    # The events first: their deliveries refer to them.
    await session.execute(_INSERT_EVENTS, [event for event, _ in written])
    deliveries = [delivery for _, of_event in written for delivery in of_event]
    if deliveries:
        await session.execute(_INSERT_DELIVERIES, deliveries)
        await runtime.notifier.notify(session, DELIVERIES_CHANNEL)


async def _rows(
    session: AsyncSession,
    *,
    organization_id: uuid.UUID,
    events: Sequence[tuple[str, dict[str, Any]]],
    retention_seconds: int,
    only_endpoint_id: uuid.UUID | None = None,
    trigger: str = "scheduled",
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """The rows of each event and of its deliveries: one to every enabled endpoint of the
    organization that subscribes to its type (to `only_endpoint_id` alone, whatever it
    subscribes to, when given)."""
    for event_type, _ in events:
        if event_type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {event_type!r}")
    subscriptions = _subscriptions()
    if only_endpoint_id is not None:
        subscriptions = subscriptions.where(table_of(WebhookEndpoint).c.id == only_endpoint_id)
    endpoints = (
        await session.execute(subscriptions, {"endpoints_organization_id": organization_id})
    ).all()
    retention = timedelta(seconds=retention_seconds)
    written: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for event_type, data in events:
        now = utcnow()
        event_id = uuid7()
        expires_at = now + retention
        event = {
            "id": event_id,
            "organization_id": organization_id,
            "type": event_type,
            "body": event_body(event_id, event_type, now, organization_id, data),
            "created_at": now,
            "expires_at": expires_at,
        }
        deliveries = [
            {
                "id": uuid7(),
                "organization_id": organization_id,
                "endpoint_id": endpoint_id,
                "event_id": event_id,
                "event_type": event_type,
                "status": "pending",
                "next_trigger": trigger,
                "response_status": None,
                "latency_ms": None,
                "attempt_count": 0,
                "next_attempt_at": now,
                "lease_owner": None,
                "lease_until": None,
                "created_at": now,
                "updated_at": now,
                "expires_at": expires_at,
            }
            for endpoint_id, subscribed in endpoints
            if only_endpoint_id is not None or event_type in subscribed.get("events", [])
        ]
        written.append((event, deliveries))
    return written
