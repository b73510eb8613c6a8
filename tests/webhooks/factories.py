"""Plain functions for webhook tests: subscribe endpoints, emit events, wait for outcomes."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any
from typing import TypeVar

import httpx
from sqlalchemy import update

from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import Event
from pressroom.webhooks.outbox import emit_event
from tests.factories import Tenant

from .receiver import RecordedRequest
from .receiver import WebhookReceiver

T = TypeVar("T")


def unique_path() -> str:
    """A receiver path of one's own, so a test reads only its requests."""
    return f"/hook/{uuid.uuid4().hex[:12]}"


async def create_endpoint(
    client: httpx.AsyncClient,
    tenant: Tenant,
    url: str,
    events: list[str] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """Subscribe an endpoint through the API; the response includes `signingSecret`."""
    response = await client.post(
        "/api/v1/webhooks",
        json={"url": url, "events": events or ["post.created.v1"], **fields},
        headers=tenant.headers,
    )
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


async def emit(
    runtime: Runtime,
    tenant: Tenant,
    event_type: str = "post.created.v1",
    data: dict[str, Any] | None = None,
) -> tuple[Event, list[Delivery]]:
    """An event of the tenant's organization, as another domain's service would emit it."""
    async with unit_of_work(runtime.sessions) as session:
        return await emit_event(
            session,
            runtime.notifier,
            organization_id=tenant.organization_id,
            event_type=event_type,
            data=data if data is not None else {"post": {"id": str(uuid.uuid4())}},
            retention_seconds=runtime.settings.webhook_retention_seconds,
        )


async def settle_queue(runtime: Runtime) -> None:
    """Mark every queued delivery exhausted. The test database lives for the whole session:
    deliveries other tests left queued must not be claimed (or wake a worker) in this one."""
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(Delivery)
            .where(Delivery.status.in_(("pending", "processing")))
            .values(status="exhausted", lease_owner=None, lease_until=None)
        )


async def get_delivery(
    client: httpx.AsyncClient, tenant: Tenant, endpoint_id: object, delivery_id: object
) -> dict[str, Any]:
    response = await client.get(
        f"/api/v1/webhooks/{endpoint_id}/deliveries/{delivery_id}", headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


async def eventually(
    probe: Callable[[], Awaitable[T | None]],
    *,
    timeout: float = 10.0,  # noqa: ASYNC109 (a polling deadline)
    what: str = "condition",
) -> T:
    """Poll `probe` until it returns something other than None (or fail after `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def settled_delivery(
    client: httpx.AsyncClient,
    tenant: Tenant,
    endpoint_id: object,
    delivery_id: object,
    *,
    status: str | tuple[str, ...] = ("succeeded", "exhausted"),
    timeout: float = 10.0,  # noqa: ASYNC109 (a polling deadline)
) -> dict[str, Any]:
    """The delivery once it reads as `status` (by default: done, either way)."""
    wanted = (status,) if isinstance(status, str) else status

    async def probe() -> dict[str, Any] | None:
        delivery = await get_delivery(client, tenant, endpoint_id, delivery_id)
        return delivery if delivery["status"] in wanted else None

    return await eventually(probe, timeout=timeout, what=f"delivery {delivery_id} {wanted}")


def requests_to(receiver: WebhookReceiver, path: str) -> list[RecordedRequest]:
    return [request for request in receiver.requests if request.path == path]


async def requests_arriving(
    receiver: WebhookReceiver,
    path: str,
    count: int,
    timeout: float = 10.0,  # noqa: ASYNC109 (a polling deadline)
) -> list[RecordedRequest]:
    async def probe() -> list[RecordedRequest] | None:
        found = requests_to(receiver, path)
        return found if len(found) >= count else None

    return await eventually(probe, timeout=timeout, what=f"{count} requests to {path}")
