"""The ten webhook operations: endpoints, their secrets, delivery logs, tests and replay."""

from __future__ import annotations

import json
import uuid
from typing import Annotated
from typing import Any

from fastapi import APIRouter
from fastapi import Body
from fastapi import Depends
from fastapi import Path
from fastapi import Query
from fastapi import Request
from fastapi import Response

from pressroom.http.access import WebhooksManage
from pressroom.http.access import WebhooksRead
from pressroom.http.routing import Audit
from pressroom.http.routing import PressroomRoute
from pressroom.http.routing import RuntimeDep
from pressroom.http.routing import Session
from pressroom.kit.attributes import from_attributes
from pressroom.kit.clock import utcnow
from pressroom.kit.errors import found
from pressroom.kit.pagination import Collection
from pressroom.kit.pagination import Pagination
from pressroom.kit.pagination import paginate
from pressroom.webhooks import repository
from pressroom.webhooks import service
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import DeliveryAttempt as AttemptRow
from pressroom.webhooks.models import WebhookEndpoint as EndpointRow
from pressroom.webhooks.replay import effective_status
from pressroom.webhooks.replay import replay_delivery
from pressroom.webhooks.replay import send_test
from pressroom.webhooks.schemas import AttemptError
from pressroom.webhooks.schemas import DeletedWebhookEndpoint
from pressroom.webhooks.schemas import DeliveryAttempt
from pressroom.webhooks.schemas import DeliveryStatus
from pressroom.webhooks.schemas import EventType
from pressroom.webhooks.schemas import QueuedTest
from pressroom.webhooks.schemas import RotateSecretInput
from pressroom.webhooks.schemas import SecretMetadata
from pressroom.webhooks.schemas import SendTestInput
from pressroom.webhooks.schemas import WebhookDelivery
from pressroom.webhooks.schemas import WebhookDeliveryDetail
from pressroom.webhooks.schemas import WebhookEndpoint
from pressroom.webhooks.schemas import WebhookEndpointCreate
from pressroom.webhooks.schemas import WebhookEndpointUpdate
from pressroom.webhooks.schemas import WebhookEndpointWithSecret

router = APIRouter(prefix="/api/v1", route_class=PressroomRoute, tags=["Webhooks"])

EndpointId = Annotated[
    uuid.UUID, Path(alias="webhookEndpointId", description="The webhook endpoint's id.")
]
DeliveryId = Annotated[uuid.UUID, Path(alias="webhookDeliveryId", description="The delivery's id.")]

_MANAGERS = (
    "Scope `webhooks:write`, and the member must be an owner or admin (else 403 "
    "`insufficient_role`)."
)
_NO_STORE = {
    "Cache-Control": {
        "description": "`no-store`: the response holds the one-time signing secret.",
        "schema": {"type": "string"},
    }
}
_SIGNING = (
    "Every delivery is an HTTP/1.1 POST of the event's exact bytes (`Content-Type: "
    "application/json`) with `Webhook-Id` (the event id, the same on every attempt and "
    "endpoint), `Webhook-Timestamp` (Unix seconds of the attempt) and `Webhook-Signature`: "
    "`v1=` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`, keyed with the "
    "base64-decoded part of the `whsec_` secret; during a rotation grace one value per live "
    "secret, space-separated. Verify before parsing and reject timestamps more than five "
    "minutes off (`pressroom.webhooks.verify` does both)."
)

_DELIVERY_RULES = (
    "Delivery is at least once: deduplicate on `Webhook-Id`. Each attempt resolves the name "
    "again and refuses any non-public answer (`destination_blocked`), times out after "
    "PRESSROOM_WEBHOOK_TIMEOUT_SECONDS (10) and never follows redirects. A 2xx succeeds. "
    "Connection, DNS and TLS errors, timeouts, blocked destinations, 408, 425, 429 and 5xx are "
    "retried after each delay of PRESSROOM_WEBHOOK_RETRY_SCHEDULE (default 5 s, 1 min, 5 min, "
    "30 min, 2 h, 5 h, 10 h: 8 attempts), each lengthened by up to 20% of jitter and by "
    "`Retry-After` up to one hour; a retry that would fall after the delivery's expiry ends it "
    "instead. Any other answer (3xx, other 4xx) ends the delivery `exhausted` at once. At most "
    "8 requests are in flight per endpoint per worker; response bodies are read (up to 64 KiB) "
    "and discarded, never stored."
)


def endpoint_view(row: EndpointRow) -> WebhookEndpoint:
    now = utcnow()
    previous_expires = row.previous_expires_at
    return WebhookEndpoint(
        id=row.id,
        url=row.url,
        events=list(row.events.get("events", [])),
        enabled=row.enabled,
        description=row.description,
        secret=SecretMetadata(
            last4=row.secret_last4,
            created_at=row.secret_created_at,
            previous_expires_at=previous_expires
            if previous_expires is not None and previous_expires > now
            else None,
        ),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _with_secret(issued: service.IssuedSecret) -> WebhookEndpointWithSecret:
    view = endpoint_view(issued.endpoint)
    return WebhookEndpointWithSecret(**dict(view), signing_secret=issued.secret)


async def _reveals_secret(request: Request, response: Response) -> Response:
    """The response of an operation that shows a secret once: never cached, and stored
    encrypted by the idempotency layer, like the secret itself."""
    response.headers["Cache-Control"] = "no-store"
    request.state.secret_response = True
    return response


SecretReveal = Annotated[Response, Depends(_reveals_secret)]


def delivery_view(row: Delivery, body: str | None) -> dict[str, Any]:
    now = utcnow()
    status = effective_status(row, now)
    return {
        "id": row.id,
        "endpoint_id": row.endpoint_id,
        "event_id": row.event_id,
        "event_type": row.event_type,
        "status": status,
        "response_status": row.response_status,
        "latency_ms": row.latency_ms,
        "attempt_count": row.attempt_count,
        "next_attempt_at": row.next_attempt_at if status == "pending" else None,
        "created_at": row.created_at,
        "expires_at": row.expires_at,
        "payload": json.loads(body) if body is not None else {},
    }


def attempt_view(row: AttemptRow) -> DeliveryAttempt:
    error = None
    if row.error_code is not None:
        error = AttemptError(code=row.error_code, message=row.error_message or row.error_code)
    return from_attributes(DeliveryAttempt, row, error=error)


async def _endpoint(
    session: Session, organization_id: uuid.UUID, endpoint_id: uuid.UUID
) -> EndpointRow:
    endpoint = await repository.get_endpoint(session, organization_id, endpoint_id)
    return found(endpoint, "webhook endpoint")


async def _delivery(
    session: Session, organization_id: uuid.UUID, endpoint_id: uuid.UUID, delivery_id: uuid.UUID
) -> tuple[EndpointRow, Delivery]:
    endpoint = await _endpoint(session, organization_id, endpoint_id)
    delivery = await repository.get_delivery(session, endpoint.id, delivery_id)
    return endpoint, found(delivery, "webhook delivery")


async def _detail(session: Session, delivery: Delivery) -> WebhookDeliveryDetail:
    bodies = await repository.event_bodies(session, [delivery.event_id])
    attempts = await repository.attempts_of(session, delivery.id)
    return WebhookDeliveryDetail(
        **delivery_view(delivery, bodies.get(delivery.event_id)),
        attempts=[attempt_view(a) for a in attempts],
    )


@router.get(
    "/webhooks",
    operation_id="listWebhookEndpoints",
    description="Scope `webhooks:read`. Newest first; keyset pagination (`pageSize`, `cursor`). "
    "Secrets appear only as masked metadata.",
)
async def list_webhook_endpoints(
    principal: WebhooksRead, session: Session, runtime: RuntimeDep, page: Pagination
) -> Collection[WebhookEndpoint]:
    """List webhook endpoints."""
    found = await paginate(
        session,
        repository.endpoints_of(principal.organization_id),
        model=EndpointRow,
        params=page,
        box=runtime.box,
        collection="webhook-endpoints",
    )
    return Collection[WebhookEndpoint].page(found, endpoint_view)


@router.post(
    "/webhooks",
    operation_id="createWebhookEndpoint",
    status_code=201,
    responses={
        201: {"description": "The endpoint and its one-time secret.", "headers": _NO_STORE},
    },
    description=f"{_MANAGERS} Returns the endpoint with `signingSecret`, shown this once "
    "(`Cache-Control: no-store`; a repeat with the same Idempotency-Key returns the same "
    "secret, stored encrypted). Unknown or repeated `events` entries and destinations that "
    f"break the URL rules are 400 naming the field. {_SIGNING} {_DELIVERY_RULES}",
)
async def create_webhook_endpoint(
    body: WebhookEndpointCreate,
    principal: WebhooksManage,
    session: Session,
    audit: Audit,
    runtime: RuntimeDep,
    response: SecretReveal,
) -> WebhookEndpointWithSecret:
    """Subscribe a webhook endpoint."""
    issued = await service.create_endpoint(session, runtime, principal.organization_id, body)
    endpoint = issued.endpoint
    audit.set(
        "webhookEndpoint",
        endpoint.id,
        {
            "url": endpoint.url,
            "events": list(body.events),
            "description": endpoint.description,
            "enabled": endpoint.enabled,
        },
    )
    response.headers["Location"] = f"/api/v1/webhooks/{endpoint.id}"
    return _with_secret(issued)


@router.get(
    "/webhooks/{webhookEndpointId}",
    operation_id="getWebhookEndpoint",
    description="Scope `webhooks:read`. The secret appears only as masked metadata.",
)
async def get_webhook_endpoint(
    endpoint_id: EndpointId, principal: WebhooksRead, session: Session
) -> WebhookEndpoint:
    """Read a webhook endpoint."""
    return endpoint_view(await _endpoint(session, principal.organization_id, endpoint_id))


@router.patch(
    "/webhooks/{webhookEndpointId}",
    operation_id="updateWebhookEndpoint",
    description=f"{_MANAGERS} A merge of `url`, `events`, `description` and `enabled`. "
    "Disabling holds the endpoint's pending deliveries (not sent, expiry unchanged, not "
    "replayable) and creates no new ones; enabling sends the held ones at once. A new `url` "
    "applies to every later attempt, pending ones included; new `events` to later events.",
)
async def update_webhook_endpoint(
    endpoint_id: EndpointId,
    body: WebhookEndpointUpdate,
    principal: WebhooksManage,
    session: Session,
    audit: Audit,
    runtime: RuntimeDep,
) -> WebhookEndpoint:
    """Change a webhook endpoint."""
    service.check_update(body, runtime.settings)
    endpoint = await _endpoint(session, principal.organization_id, endpoint_id)
    changes = await service.update_endpoint(session, runtime, endpoint, body)
    audit.set("webhookEndpoint", endpoint.id, changes)
    return endpoint_view(endpoint)


@router.delete(
    "/webhooks/{webhookEndpointId}",
    operation_id="deleteWebhookEndpoint",
    description=f"{_MANAGERS} Its deliveries and their attempts are deleted with it and "
    "nothing more is sent to it.",
)
async def delete_webhook_endpoint(
    endpoint_id: EndpointId, principal: WebhooksManage, session: Session, audit: Audit
) -> DeletedWebhookEndpoint:
    """Delete a webhook endpoint."""
    endpoint = await _endpoint(session, principal.organization_id, endpoint_id)
    await service.delete_endpoint(session, endpoint)
    audit.set("webhookEndpoint", endpoint_id, {"deleted": True})
    return DeletedWebhookEndpoint(id=endpoint_id)


@router.post(
    "/webhooks/{webhookEndpointId}/rotate",
    operation_id="rotateWebhookEndpointSecret",
    responses={
        200: {"description": "The endpoint and its new one-time secret.", "headers": _NO_STORE},
    },
    description=f"{_MANAGERS} Issues a new secret, shown once (`Cache-Control: no-store`). The "
    "body is optional (none, `{}`, or `expireCurrentInSeconds` 0-604800, default 0): while "
    "the replaced secret's grace lasts, deliveries carry both signatures, the new one first.",
)
async def rotate_webhook_endpoint_secret(
    endpoint_id: EndpointId,
    principal: WebhooksManage,
    session: Session,
    audit: Audit,
    runtime: RuntimeDep,
    response: SecretReveal,
    body: Annotated[RotateSecretInput | None, Body()] = None,
) -> WebhookEndpointWithSecret:
    """Rotate a webhook endpoint's signing secret."""
    grace = body.expire_current_in_seconds if body is not None else 0
    endpoint = await _endpoint(session, principal.organization_id, endpoint_id)
    issued = await service.rotate_secret(session, runtime, endpoint, grace)
    audit.set("webhookEndpoint", endpoint.id, {"expireCurrentInSeconds": grace})
    return _with_secret(issued)


@router.get(
    "/webhooks/{webhookEndpointId}/deliveries",
    operation_id="listWebhookDeliveries",
    description="Scope `webhooks:read`. Newest first; keyset pagination. Filters: `status`, "
    "`eventType`. A delivery past `expiresAt` reads as `expired` at once (the sweeper purges "
    "expired deliveries, their attempts and events one further retention period later, at "
    "most 24 hours). No signatures, secrets, leases or response bodies.",
)
async def list_webhook_deliveries(
    endpoint_id: EndpointId,
    principal: WebhooksRead,
    session: Session,
    runtime: RuntimeDep,
    page: Pagination,
    status: Annotated[
        DeliveryStatus | None, Query(description="Only deliveries in this status.")
    ] = None,
    event_type: Annotated[
        EventType | None,
        Query(alias="eventType", description="Only deliveries of this event kind."),
    ] = None,
) -> Collection[WebhookDelivery]:
    """List an endpoint's deliveries."""
    endpoint = await _endpoint(session, principal.organization_id, endpoint_id)
    rows, next_cursor = await paginate(
        session,
        repository.deliveries_of(endpoint.id, status=status, event_type=event_type, now=utcnow()),
        model=Delivery,
        params=page,
        box=runtime.box,
        collection=f"webhook-deliveries:{endpoint.id}",
    )
    bodies = await repository.event_bodies(session, [row.event_id for row in rows])
    return Collection[WebhookDelivery](
        items=[WebhookDelivery(**delivery_view(row, bodies.get(row.event_id))) for row in rows],
        next_cursor=next_cursor,
    )


@router.get(
    "/webhooks/{webhookEndpointId}/deliveries/{webhookDeliveryId}",
    operation_id="getWebhookDelivery",
    description="Scope `webhooks:read`. The retained event as `payload`, and every attempt "
    "with its trigger, response status, latency, outcome and error. A delivery of another "
    "endpoint, or of another organization's, is 404 like a missing one.",
)
async def get_webhook_delivery(
    endpoint_id: EndpointId, delivery_id: DeliveryId, principal: WebhooksRead, session: Session
) -> WebhookDeliveryDetail:
    """Read a delivery with its attempts."""
    _, delivery = await _delivery(session, principal.organization_id, endpoint_id, delivery_id)
    return await _detail(session, delivery)


@router.post(
    "/webhooks/{webhookEndpointId}/test",
    operation_id="sendWebhookTest",
    status_code=202,
    description=f'{_MANAGERS} Body exactly `{{"event": "webhook.test.v1"}}`. Queues a '
    '`webhook.test.v1` event (`data: {"endpointId"}`) for this endpoint alone, whatever '
    "its `events`; it is retried like any delivery (its first attempt's trigger is `test`). "
    "409 `endpoint_disabled` for a disabled endpoint. With the same Idempotency-Key, the "
    "same event.",
)
async def send_webhook_test(
    endpoint_id: EndpointId,
    body: SendTestInput,
    principal: WebhooksManage,
    session: Session,
    audit: Audit,
    runtime: RuntimeDep,
) -> QueuedTest:
    """Send a test event to an endpoint."""
    endpoint = await _endpoint(session, principal.organization_id, endpoint_id)
    event, delivery = await send_test(session, runtime, endpoint)
    audit.set(
        "webhookEndpoint",
        endpoint.id,
        {"event": body.event, "eventId": str(event.id), "deliveryId": str(delivery.id)},
    )
    return QueuedTest(delivery_id=delivery.id, event_id=event.id)


@router.post(
    "/webhooks/{webhookEndpointId}/deliveries/{webhookDeliveryId}/replay",
    operation_id="replayWebhookDelivery",
    status_code=202,
    description=f"{_MANAGERS} No body (or `{{}}`). Queues one more attempt with trigger "
    "`replay` and the original event id, and answers 202 with the delivery, now `pending`. "
    "The attempt leaves it `succeeded`, or `exhausted` again (and replayable again); a "
    "failed replay attempt is not retried. Only an `exhausted`, unexpired delivery of an "
    "enabled endpoint can be replayed: otherwise 409 `delivery_not_replayable` with "
    "`reason`, checked in this order: `endpoint_disabled`, `expired`, `succeeded`, "
    "`pending`, `processing`. While a replay is queued or running, 409 "
    "`replay_in_progress`; of two racing replays exactly one is accepted.",
)
async def replay_webhook_delivery(
    endpoint_id: EndpointId,
    delivery_id: DeliveryId,
    principal: WebhooksManage,
    session: Session,
    audit: Audit,
    runtime: RuntimeDep,
) -> WebhookDeliveryDetail:
    """Replay an exhausted delivery."""
    endpoint, delivery = await _delivery(
        session, principal.organization_id, endpoint_id, delivery_id
    )
    replayed = await replay_delivery(session, runtime, endpoint, delivery)
    audit.set("webhookDelivery", delivery.id, {"replay": True, "eventId": str(delivery.event_id)})
    return await _detail(session, replayed)
