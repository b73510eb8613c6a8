"""The retention sweeper: deliveries expire `webhook_retention_seconds` after their event was
created (status `expired`, never sent again), and events, deliveries and attempts are purged
one further retention period after that, at most 24 hours later, so an expired delivery stays
visible in the logs for a while before it disappears."""

from __future__ import annotations

import logging
from datetime import datetime
from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy import delete
from sqlalchemy import select
from sqlalchemy import update

from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import Event

if TYPE_CHECKING:
    from pressroom.runtime import Runtime

log = logging.getLogger(__name__)

SWEEP_INTERVAL_SECONDS = 30.0
MAX_PURGE_GRACE_SECONDS = 86400
BATCH = 1000


def purge_grace(retention_seconds: int) -> timedelta:
    """How long expired records are kept before they are deleted."""
    return timedelta(seconds=min(retention_seconds, MAX_PURGE_GRACE_SECONDS))


async def expire_deliveries(runtime: Runtime, now: datetime, batch: int = BATCH) -> int:
    """Mark deliveries past their expiry `expired`; one whose attempt is under way (a live
    lease) is left to its worker, which records the attempt, and is marked on a later sweep."""
    async with unit_of_work(runtime.sessions) as session:
        due = (
            select(Delivery.id)
            .where(
                Delivery.status.in_(("pending", "processing", "succeeded", "exhausted")),
                Delivery.expires_at <= now,
            )
            .where((Delivery.status != "processing") | (Delivery.lease_until <= now))
            .limit(batch)
            # Rows being recorded or replayed right now are skipped, not waited for.
            .with_for_update(skip_locked=True)
        )
        result = await session.execute(
            update(Delivery)
            .where(Delivery.id.in_(due))
            .values(
                status="expired",
                next_attempt_at=None,
                lease_owner=None,
                lease_until=None,
                updated_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        return int(getattr(result, "rowcount", 0) or 0)


async def purge_expired(runtime: Runtime, cutoff: datetime, batch: int = BATCH) -> int:
    """Delete events that expired before `cutoff` with their deliveries and attempts (ON
    DELETE CASCADE, via the indexes on the foreign keys); one batch, its size returned."""
    async with unit_of_work(runtime.sessions) as session:
        deliveries = await session.execute(
            delete(Delivery)
            .where(
                Delivery.id.in_(
                    select(Delivery.id).where(Delivery.expires_at <= cutoff).limit(batch)
                )
            )
            .execution_options(synchronize_session=False)
        )
        events = await session.execute(
            delete(Event)
            .where(Event.id.in_(select(Event.id).where(Event.expires_at <= cutoff).limit(batch)))
            .execution_options(synchronize_session=False)
        )
        return max(
            int(getattr(deliveries, "rowcount", 0) or 0), int(getattr(events, "rowcount", 0) or 0)
        )


async def sweep_webhooks(runtime: Runtime) -> bool:
    """One batch of expiry and purge; True if a batch was full (run again at once)."""
    now = utcnow()
    expired = await expire_deliveries(runtime, now)
    cutoff = now - purge_grace(runtime.settings.webhook_retention_seconds)
    purged = await purge_expired(runtime, cutoff)
    if expired or purged:
        log.info("webhook retention sweep", extra={"expired": expired, "purged": purged})
    return expired >= BATCH or purged >= BATCH
