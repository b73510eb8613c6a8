"""Every query of the webhook API (the delivery worker's own live in webhooks/queue.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import ColumnElement
from sqlalchemy import Select
from sqlalchemy import and_
from sqlalchemy import or_
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import DeliveryAttempt
from pressroom.webhooks.models import Event
from pressroom.webhooks.models import WebhookEndpoint


async def get_endpoint(
    session: AsyncSession, organization_id: uuid.UUID, endpoint_id: uuid.UUID
) -> WebhookEndpoint | None:
    """The endpoint if it belongs to the organization (another's looks missing)."""
    return await session.scalar(
        select(WebhookEndpoint).where(
            WebhookEndpoint.id == endpoint_id,
            WebhookEndpoint.organization_id == organization_id,
        )
    )


def endpoints_of(organization_id: uuid.UUID) -> Select[WebhookEndpoint]:
    return select(WebhookEndpoint).where(WebhookEndpoint.organization_id == organization_id)


async def get_delivery(
    session: AsyncSession, endpoint_id: uuid.UUID, delivery_id: uuid.UUID, *, fresh: bool = False
) -> Delivery | None:
    statement = select(Delivery).where(
        Delivery.id == delivery_id, Delivery.endpoint_id == endpoint_id
    )
    if fresh:
        # Read the committed row again, not the copy this session already holds.
        statement = statement.execution_options(populate_existing=True)
    return await session.scalar(statement)


def status_is(status: str, now: datetime) -> ColumnElement[bool]:
    """Rows that read as `status` at `now`: a row past its expiry reads as expired even
    before the sweeper has written that."""
    if status == "expired":
        return or_(Delivery.status == "expired", Delivery.expires_at <= now)
    return and_(Delivery.status == status, Delivery.expires_at > now)


def deliveries_of(
    endpoint_id: uuid.UUID, *, status: str | None, event_type: str | None, now: datetime
) -> Select[Delivery]:
    statement = select(Delivery).where(Delivery.endpoint_id == endpoint_id)
    if status is not None:
        statement = statement.where(status_is(status, now))
    if event_type is not None:
        statement = statement.where(Delivery.event_type == event_type)
    return statement


async def event_bodies(
    session: AsyncSession, event_ids: Iterable[uuid.UUID]
) -> dict[uuid.UUID, str]:
    ids = list(set(event_ids))
    if not ids:
        return {}
    rows = await session.execute(select(Event.id, Event.body).where(Event.id.in_(ids)))
    return {row.id: row.body for row in rows}


async def attempts_of(session: AsyncSession, delivery_id: uuid.UUID) -> list[DeliveryAttempt]:
    return list(
        await session.scalars(
            select(DeliveryAttempt)
            .where(DeliveryAttempt.delivery_id == delivery_id)
            .order_by(DeliveryAttempt.number)
        )
    )


async def queue_replay(session: AsyncSession, delivery_id: uuid.UUID, now: datetime) -> bool:
    """Queue one replay attempt if the delivery is still exhausted and unexpired.

    A conditional update, so of two racing replays exactly one matches: on PostgreSQL the
    second waits for the first's row lock and then finds the row no longer exhausted."""
    result = await session.execute(
        update(Delivery)
        .where(
            Delivery.id == delivery_id,
            Delivery.status == "exhausted",
            Delivery.expires_at > now,
        )
        .values(status="pending", next_trigger="replay", next_attempt_at=now, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0) or 0) == 1
