"""Published history for analytics tests, inserted as rows (as an import would create it)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime

from pressroom.analytics.recording import Observation
from pressroom.analytics.recording import record
from pressroom.channels.models import Channel
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.posts.models import Post
from pressroom.posts.models import PostTag
from pressroom.posts.models import PostTarget
from pressroom.posts.models import PostTopic
from pressroom.runtime import Runtime


async def make_channel(
    runtime: Runtime,
    organization_id: uuid.UUID,
    *,
    name: str = "Sandbox",
    provider: str = "sandbox",
    disconnected: bool = False,
    health: str = "healthy",
) -> uuid.UUID:
    async with unit_of_work(runtime.sessions) as session:
        channel = Channel(
            organization_id=organization_id,
            provider=provider,
            name=name,
            handle=name.lower().replace(" ", ""),
            health_state=health,
            connected_at=utcnow(),
            disconnected_at=utcnow() if disconnected else None,
        )
        session.add(channel)
        await session.flush()
        return channel.id


@dataclass
class Target:
    channel_id: uuid.UUID
    published_at: datetime | None
    metrics: dict[str, int] | None = field(default_factory=dict)
    content_kind: str = "post"
    status: str = "published"
    provider_post_id: str | None = None


@dataclass
class Published:
    post_id: uuid.UUID
    target_ids: list[uuid.UUID]


async def publish(
    runtime: Runtime,
    organization_id: uuid.UUID,
    targets: list[Target],
    *,
    tags: tuple[str, ...] = (),
    topics: tuple[str, ...] = (),
    model: str | None = None,
    approval: str = "not_required",
    deleted: bool = False,
    text: str = "hello",
) -> Published:
    """One logical post with its targets; `metrics` of a target become its latest snapshot
    (None: no snapshot at all)."""
    published = [t.published_at for t in targets if t.published_at and t.status == "published"]
    async with unit_of_work(runtime.sessions) as session:
        post = Post(
            organization_id=organization_id,
            text=text,
            media_ids={"ids": []},
            status="published",
            model=model,
            approval_required=approval != "not_required",
            approval_status=approval,
            first_published_at=min(published) if published else None,
            deleted_at=utcnow() if deleted else None,
        )
        session.add(post)
        await session.flush()
        for position, value in enumerate(tags):
            session.add(
                PostTag(
                    post_id=post.id,
                    value=value,
                    organization_id=organization_id,
                    position=position,
                )
            )
        for position, value in enumerate(topics):
            session.add(
                PostTopic(
                    post_id=post.id,
                    value=value,
                    organization_id=organization_id,
                    position=position,
                )
            )
        rows = []
        for spec in targets:
            channel = await session.get(Channel, spec.channel_id)
            assert channel is not None
            row = PostTarget(
                organization_id=organization_id,
                post_id=post.id,
                channel_id=spec.channel_id,
                provider=channel.provider,
                content_kind=spec.content_kind,
                options={},
                status=spec.status,
                published_at=spec.published_at,
                provider_post_id=spec.provider_post_id,
            )
            session.add(row)
            rows.append(row)
        await session.flush()
        await record(
            session,
            [
                Observation(
                    organization_id=organization_id,
                    target_id=row.id,
                    published_at=spec.published_at or utcnow(),
                    captured_at=utcnow(),
                    values=spec.metrics,
                    source="import",
                )
                for row, spec in zip(rows, targets, strict=True)
                if spec.metrics is not None
            ],
        )
        return Published(post.id, [row.id for row in rows])
