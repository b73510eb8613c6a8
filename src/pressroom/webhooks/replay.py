"""Replaying a delivery and sending a test event: the two ways a person queues an attempt."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.kit.clock import utcnow
from pressroom.kit.errors import PressroomError
from pressroom.webhooks import repository
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import Event
from pressroom.webhooks.models import WebhookEndpoint
from pressroom.webhooks.outbox import DELIVERIES_CHANNEL
from pressroom.webhooks.outbox import emit

if TYPE_CHECKING:
    from pressroom.runtime import Runtime


def effective_status(delivery: Delivery, now: datetime) -> str:
    """The status a reader sees: past its expiry a delivery is expired, swept or not."""
    if delivery.expires_at <= now:
        return "expired"
    return delivery.status


def _replay_refusal(
    endpoint: WebhookEndpoint, delivery: Delivery, now: datetime
) -> PressroomError | None:
    """Why this delivery cannot be replayed now, checked in the contract's order."""
    reason: str | None = None
    status = effective_status(delivery, now)
    if not endpoint.enabled:
        reason = "endpoint_disabled"
    elif status == "expired":
        reason = "expired"
    elif status == "succeeded":
        reason = "succeeded"
    elif status in ("pending", "processing") and delivery.next_trigger == "replay":
        return PressroomError(
            "replay_in_progress",
            detail="A replay of this delivery is already queued or running.",
        )
    elif status in ("pending", "processing"):
        reason = status
    if reason is None:
        return None
    return PressroomError(
        "delivery_not_replayable",
        detail=f"Only an exhausted, unexpired delivery of an enabled endpoint can be replayed "
        f"(reason: {reason}).",
        extra={"reason": reason},
    )


async def replay_delivery(
    session: AsyncSession, runtime: Runtime, endpoint: WebhookEndpoint, delivery: Delivery
) -> Delivery:
    """Queue one more attempt (trigger `replay`, same event id); it is not retried."""
    now = utcnow()
    refusal = _replay_refusal(endpoint, delivery, now)
    if refusal is not None:
        raise refusal
    if not await repository.queue_replay(session, delivery.id, now):
        # Another request (or the sweeper) changed it since we read it: explain what it is now.
        current = await repository.get_delivery(session, endpoint.id, delivery.id, fresh=True)
        refusal = None if current is None else _replay_refusal(endpoint, current, utcnow())
        raise refusal or PressroomError(
            "replay_in_progress", detail="A replay of this delivery is already queued."
        )
    await runtime.notifier.notify(session, DELIVERIES_CHANNEL)
    replayed = await repository.get_delivery(session, endpoint.id, delivery.id, fresh=True)
    assert replayed is not None  # we hold its row lock until commit
    return replayed


async def send_test(
    session: AsyncSession, runtime: Runtime, endpoint: WebhookEndpoint
) -> tuple[Event, Delivery]:
    """Queue a webhook.test.v1 event for this endpoint alone, whatever its filters."""
    if not endpoint.enabled:
        raise _endpoint_disabled()
    event, deliveries = await emit(
        session,
        runtime,
        organization_id=endpoint.organization_id,
        event_type="webhook.test.v1",
        data={"endpointId": str(endpoint.id)},
        only_endpoint_id=endpoint.id,
        trigger="test",
    )
    if not deliveries:
        # Disabled by a request that committed after we read the endpoint.
        raise _endpoint_disabled()
    return event, deliveries[0]


def _endpoint_disabled() -> PressroomError:
    return PressroomError(
        "endpoint_disabled",
        detail="This webhook endpoint is disabled; enable it with PATCH to send a test.",
    )
