"""Helpers for post tests: bodies, API calls, events and the publisher driven by hand."""

from __future__ import annotations

import json
import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy import func
from sqlalchemy import select

from pressroom.db import unit_of_work
from pressroom.posts.models import PostTarget
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.sandbox.models import SandboxPublication
from pressroom.providers.schemas import ContentKind
from pressroom.publishing import queue
from pressroom.publishing.queue import ClaimedTarget
from pressroom.publishing.queue import Outcome
from pressroom.publishing.queue import Recorded
from pressroom.publishing.worker import publish_due_targets
from pressroom.runtime import Runtime
from pressroom.webhooks.models import Event
from tests.factories import Tenant
from tests.providers.test_validation import valid_media


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def future(seconds: float = 3600) -> str:
    return iso(datetime.now(UTC) + timedelta(seconds=seconds))


def post_body(channel_id: uuid.UUID, **fields: Any) -> dict[str, Any]:
    """A create body with one target on `channel_id`; `fields` override or add."""
    body: dict[str, Any] = {
        "text": "Hello from Pressroom",
        "targets": [{"channelId": str(channel_id)}],
    }
    body.update(fields)
    return body


async def create_post(
    client: httpx.AsyncClient, tenant: Tenant, body: dict[str, Any], status: int = 201
) -> dict[str, Any]:
    response = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
    assert response.status_code == status, response.text
    return response.json()  # type: ignore[no-any-return]


async def get_post(client: httpx.AsyncClient, tenant: Tenant, post_id: str) -> dict[str, Any]:
    response = await client.get(f"/api/v1/posts/{post_id}", headers=tenant.headers)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


async def patch_post(
    client: httpx.AsyncClient, tenant: Tenant, post_id: str, body: dict[str, Any]
) -> httpx.Response:
    return await client.patch(f"/api/v1/posts/{post_id}", json=body, headers=tenant.headers)


async def publish_all_due(runtime: Runtime, *, rounds: int = 20) -> int:
    """Run the publisher loop's batches until it finds nothing due; how many ran."""
    ran = 0
    for _ in range(rounds):
        if not await publish_due_targets(runtime):
            break
        ran += 1
    return ran


async def make_due(runtime: Runtime, target_ids: list[str] | None = None) -> None:
    """Move queued targets' next attempt to now (instead of waiting for their time)."""
    from sqlalchemy import update

    async with unit_of_work(runtime.sessions) as session:
        statement = update(PostTarget).where(PostTarget.status.in_(("scheduled", "publishing")))
        if target_ids is not None:
            statement = statement.where(PostTarget.id.in_([uuid.UUID(t) for t in target_ids]))
        await session.execute(
            statement.values(next_attempt_at=datetime.now(UTC) - timedelta(seconds=1))
        )


async def events_of(
    runtime: Runtime, organization_id: uuid.UUID, event_type: str | None = None
) -> list[dict[str, Any]]:
    """The organization's events in the order they were written, as their JSON bodies."""
    async with unit_of_work(runtime.sessions) as session:
        statement = select(Event.body).where(Event.organization_id == organization_id)
        if event_type is not None:
            statement = statement.where(Event.type == event_type)
        bodies = (await session.scalars(statement.order_by(Event.id))).all()
    return [json.loads(body) for body in bodies]


async def publications_of(runtime: Runtime, target_id: str) -> int:
    """How many posts the sandbox network holds for one target."""
    async with unit_of_work(runtime.sessions) as session:
        count = await session.scalar(
            select(func.count())
            .select_from(SandboxPublication)
            .where(SandboxPublication.target_id == uuid.UUID(target_id))
        )
    return int(count or 0)


async def add_media(
    runtime: Runtime,
    organization_id: uuid.UUID,
    *,
    kind: str = "image",
    mime_type: str = "image/jpeg",
    size_bytes: int = 1000,
    width: int | None = 1000,
    height: int | None = 1000,
    duration_seconds: float | None = None,
    page_count: int | None = None,
) -> uuid.UUID:
    """An inspected media asset row, as the media domain stores one after an upload."""
    from pressroom.kit.ids import uuid7
    from pressroom.media.models import MediaAsset

    async with unit_of_work(runtime.sessions) as session:
        asset = MediaAsset(
            id=uuid7(),
            organization_id=organization_id,
            kind=kind,
            mime_type=mime_type,
            filename=f"file.{mime_type.rsplit('/', 1)[-1]}",
            size_bytes=size_bytes,
            sha256="0" * 64,
            width=width,
            height=height,
            duration_seconds=duration_seconds,
            page_count=page_count,
            storage_key=f"test/{uuid.uuid4().hex}",
            created_at=datetime.now(UTC),
        )
        session.add(asset)
    return asset.id


async def valid_media_ids(
    runtime: Runtime, organization_id: uuid.UUID, kind: ContentKind
) -> list[str]:
    """Ids of new assets making the least media `kind` accepts (`valid_media`)."""
    ids = []
    for facts in valid_media(kind):
        media_id = await add_media(
            runtime,
            organization_id,
            kind=facts.kind,
            mime_type=facts.mime_type,
            size_bytes=facts.size_bytes,
            width=facts.width,
            height=facts.height,
            duration_seconds=facts.duration_seconds,
        )
        ids.append(str(media_id))
    return ids


async def cancel_queued_targets(runtime: Runtime) -> None:
    """Take every queued target of earlier tests out of the queue. The test database is
    shared by the whole session and the publisher serves every organization, so a test that
    drives the publisher must not find another test's work in it."""
    from sqlalchemy import update

    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(PostTarget)
            .where(PostTarget.status.in_(("scheduled", "publishing")))
            .values(status="canceled", next_attempt_at=None, lease_owner=None, lease_until=None)
        )


async def insert_scheduled_posts(
    runtime: Runtime,
    organization_id: uuid.UUID,
    channels: list[uuid.UUID],
    due: list[datetime],
) -> None:
    """One scheduled sandbox post per time in `due`, with one target on the channels in turn,
    stored as createPost stores them but inserted in bulk: for tests and benchmarks that need
    thousands of queued targets and measure the publisher, not post creation."""
    from sqlalchemy import insert

    from pressroom.kit.ids import uuid7
    from pressroom.posts.models import Post

    now = datetime.now(UTC)
    posts, targets = [], []
    for number, moment in enumerate(due):
        post_id = uuid7()
        posts.append(
            {
                "id": post_id,
                "organization_id": organization_id,
                "text": f"Post number {number}",
                "media_ids": {"ids": []},
                "scheduled_at": moment,
                "status": "scheduled",
                "publish_mode": "scheduled",
                "approval_required": False,
                "approval_status": "not_required",
                "created_at": now,
                "updated_at": now,
            }
        )
        targets.append(
            {
                "id": uuid7(),
                "organization_id": organization_id,
                "post_id": post_id,
                "channel_id": channels[number % len(channels)],
                "provider": "sandbox",
                "content_kind": "post",
                "options": {},
                "status": "scheduled",
                "attempts": 0,
                "next_attempt_at": moment,
                "schedule_version": 1,
                "created_at": now,
                "updated_at": now,
            }
        )
    async with unit_of_work(runtime.sessions) as session:
        for start in range(0, len(posts), 2000):
            await session.execute(insert(Post), posts[start : start + 2000])
            await session.execute(insert(PostTarget), targets[start : start + 2000])


async def claim_as(runtime: Runtime, owner: str, lease_seconds: float = 60) -> list[ClaimedTarget]:
    """Claim every due target as the worker `owner` would (a lease, attempts + 1), without
    publishing: the test then plays that worker's part."""
    async with unit_of_work(runtime.sessions) as session:
        return await queue.claim_due_targets(
            session, owner=owner, lease_seconds=lease_seconds, limit=100, now=datetime.now(UTC)
        )


async def expire_leases(runtime: Runtime) -> None:
    """Every lease runs out: the workers holding them stopped answering."""
    from sqlalchemy import update

    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(PostTarget)
            .where(PostTarget.lease_owner.is_not(None))
            .values(lease_until=datetime.now(UTC) - timedelta(seconds=1))
        )


async def record_as(runtime: Runtime, owner: str, outcomes: list[Outcome]) -> Recorded:
    """Record outcomes as the worker `owner` does after its publishes answered."""
    async with unit_of_work(runtime.sessions) as session:
        return await queue.record_outcomes(
            session, runtime, owner=owner, outcomes=outcomes, now=datetime.now(UTC)
        )


def sandbox_context(channel: uuid.UUID, tenant: Tenant) -> ChannelContext:
    return ChannelContext(
        id=channel,
        organization_id=tenant.organization_id,
        provider="sandbox",
        handle=None,
        simulated=False,
    )


def request_for(claimed: ClaimedTarget, channel: uuid.UUID, tenant: Tenant) -> PublishRequest:
    """What the worker that claimed `claimed` sends to the network."""
    return PublishRequest(
        channel=sandbox_context(channel, tenant),
        target_id=claimed.id,
        content_kind=claimed.content_kind,
        text=claimed.text,
        media=(),
        options=claimed.options,
        idempotency_key=claimed.idempotency_key,
        attempt=claimed.attempt,
    )


async def publish_as(
    runtime: Runtime, claimed: ClaimedTarget, channel: uuid.UUID, tenant: Tenant
) -> PublishResult:
    """The sandbox network receives the claimed target's publish."""
    from pressroom.channels.adapters import adapter_for

    context = sandbox_context(channel, tenant)
    return await adapter_for(context, runtime).publish(request_for(claimed, channel, tenant))


async def audit_entries_of(
    runtime: Runtime, organization_id: uuid.UUID, operation_id: str
) -> list[tuple[str | None, int]]:
    """The organization's audit entries of one operation: (resource id, outcome status)."""
    from pressroom.audit.models import AuditEntry

    async with unit_of_work(runtime.sessions) as session:
        rows = await session.execute(
            select(AuditEntry.resource_id, AuditEntry.outcome_status)
            .where(
                AuditEntry.organization_id == organization_id,
                AuditEntry.operation_id == operation_id,
            )
            .order_by(AuditEntry.sequence)
        )
        return [(resource_id, status) for resource_id, status in rows]
