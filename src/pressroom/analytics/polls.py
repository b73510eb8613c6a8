"""The metrics poller's queue: which published targets it follows, which are due, and what
it learnt. Rows are claimed with a lease (`SKIP LOCKED` on PostgreSQL; SQLite serializes
writers), so several workers never fetch the same target at once."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from datetime import timedelta
from typing import NamedTuple

from sqlalchemy import and_
from sqlalchemy import case
from sqlalchemy import exists
from sqlalchemy import func
from sqlalchemy import or_
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.analytics.models import MetricChannelState
from pressroom.analytics.models import MetricPoll
from pressroom.analytics.schedule import POLL_HORIZON
from pressroom.analytics.schedule import channel_pause
from pressroom.analytics.schedule import first_poll_at
from pressroom.analytics.schedule import next_poll_at
from pressroom.channels.models import Channel
from pressroom.db import dialect_name
from pressroom.posts.models import Post
from pressroom.posts.models import PostTarget

# Targets followed per discovery; a discovery that fills it is repeated on the next batch.
DISCOVERY_LIMIT = 5000


class DuePoll(NamedTuple):
    target_id: uuid.UUID
    organization_id: uuid.UUID
    channel_id: uuid.UUID
    provider_post_id: str
    published_at: datetime


def _insert(session: AsyncSession):  # type: ignore[no-untyped-def]
    return pg_insert if dialect_name(session) == "postgresql" else sqlite_insert


async def discover(session: AsyncSession, now: datetime, since: datetime) -> int:
    """Follow the published targets (with a provider post id) published since `since`
    that are not followed yet; returns how many were added."""
    since = max(since, now - POLL_HORIZON)
    source = (
        select(
            PostTarget.id,
            PostTarget.organization_id,
            PostTarget.channel_id,
            PostTarget.published_at,
        )
        .where(
            PostTarget.status == "published",
            PostTarget.published_at >= since,
            PostTarget.published_at <= now,
            PostTarget.provider_post_id.is_not(None),
            ~exists().where(MetricPoll.target_id == PostTarget.id),
        )
        .order_by(PostTarget.published_at)
        .limit(DISCOVERY_LIMIT)
    )
    rows = (await session.execute(source)).all()
    if not rows:
        return 0
    values = [
        {
            "target_id": row.id,
            "organization_id": row.organization_id,
            "channel_id": row.channel_id,
            "published_at": row.published_at,
            "next_poll_at": first_poll_at(row.published_at, now),
            "polls": 0,
        }
        for row in rows
    ]
    # Two workers may discover the same target: the first insert wins, quietly.
    statement = _insert(session)(MetricPoll).values(values).on_conflict_do_nothing()
    await session.execute(statement)
    return len(values)


async def retire(session: AsyncSession, now: datetime) -> None:
    """Stop following targets that can no longer be fetched: no longer published, of a
    deleted post, or of a disconnected channel."""
    gone = or_(
        ~exists().where(PostTarget.id == MetricPoll.target_id, PostTarget.status == "published"),
        exists().where(
            PostTarget.id == MetricPoll.target_id,
            Post.id == PostTarget.post_id,
            Post.deleted_at.is_not(None),
        ),
        exists().where(Channel.id == MetricPoll.channel_id, Channel.disconnected_at.is_not(None)),
    )
    await session.execute(
        update(MetricPoll)
        .where(MetricPoll.next_poll_at.is_not(None), MetricPoll.next_poll_at <= now, gone)
        .values(next_poll_at=None, stop_reason="not_published")
        .execution_options(synchronize_session=False)
    )


def _channel_ready(now: datetime) -> list[object]:
    """The channel may be polled: connected, not waiting for reconnection, not paused, and
    not stopped on auth_expired unless the channel changed since (it was reconnected)."""
    state = MetricChannelState
    return [
        Channel.disconnected_at.is_(None),
        Channel.health_state != "reconnect_required",
        ~exists().where(
            state.channel_id == MetricPoll.channel_id,
            or_(
                state.paused_until > now,
                and_(state.stopped_at.is_not(None), Channel.updated_at <= state.stopped_at),
            ),
        ),
    ]


async def claim_due(
    session: AsyncSession, *, owner: str, now: datetime, lease: timedelta, limit: int
) -> list[DuePoll]:
    """Lease up to `limit` due polls of ready channels, oldest due first."""
    statement = (
        select(
            MetricPoll.target_id,
            MetricPoll.organization_id,
            MetricPoll.channel_id,
            MetricPoll.published_at,
            PostTarget.provider_post_id,
        )
        .join(PostTarget, PostTarget.id == MetricPoll.target_id)
        .join(Post, Post.id == PostTarget.post_id)
        .join(Channel, Channel.id == MetricPoll.channel_id)
        .where(
            MetricPoll.next_poll_at <= now,
            or_(MetricPoll.lease_until.is_(None), MetricPoll.lease_until < now),
            PostTarget.provider_post_id.is_not(None),
            # Deleted and unpublished ones wait for `retire` without being fetched.
            PostTarget.status == "published",
            Post.deleted_at.is_(None),
            *_channel_ready(now),  # type: ignore[arg-type]
        )
        .order_by(MetricPoll.next_poll_at)
        .limit(limit)
    )
    if dialect_name(session) == "postgresql":
        statement = statement.with_for_update(of=MetricPoll, skip_locked=True)
    rows = (await session.execute(statement)).all()
    if not rows:
        return []
    await session.execute(
        update(MetricPoll)
        .where(MetricPoll.target_id.in_([row.target_id for row in rows]))
        .values(lease_owner=owner, lease_until=now + lease)
        .execution_options(synchronize_session=False)
    )
    return [
        DuePoll(
            target_id=row.target_id,
            organization_id=row.organization_id,
            channel_id=row.channel_id,
            provider_post_id=str(row.provider_post_id),
            published_at=row.published_at,
        )
        for row in rows
    ]


def _mine(owner: str, target_id: uuid.UUID) -> object:
    return and_(MetricPoll.target_id == target_id, MetricPoll.lease_owner == owner)


async def mark_polled(
    session: AsyncSession, owner: str, poll: DuePoll, polled_at: datetime
) -> None:
    """A successful fetch: the next slot of the schedule (none after 30 days)."""
    await session.execute(
        update(MetricPoll)
        .where(_mine(owner, poll.target_id))  # type: ignore[arg-type]
        .values(
            polls=MetricPoll.polls + 1,
            last_polled_at=polled_at,
            next_poll_at=next_poll_at(poll.published_at, polled_at),
            lease_owner=None,
            lease_until=None,
        )
        .execution_options(synchronize_session=False)
    )


async def stop_polling(session: AsyncSession, owner: str, poll: DuePoll, reason: str) -> None:
    """A permanent error for this target (the network deleted the post, for one)."""
    await session.execute(
        update(MetricPoll)
        .where(_mine(owner, poll.target_id))  # type: ignore[arg-type]
        .values(next_poll_at=None, stop_reason=reason, lease_owner=None, lease_until=None)
        .execution_options(synchronize_session=False)
    )


async def release(
    session: AsyncSession, owner: str, polls: Iterable[DuePoll], not_before: datetime | None
) -> None:
    """Give leased polls back unfetched (their channel is paused or stopped); with
    `not_before`, they wait at least until then, so claims do not keep meeting them."""
    ids = [poll.target_id for poll in polls]
    if not ids:
        return
    values: dict[str, object] = {"lease_owner": None, "lease_until": None}
    if not_before is not None:
        values["next_poll_at"] = case(
            (MetricPoll.next_poll_at < not_before, not_before), else_=MetricPoll.next_poll_at
        )
    await session.execute(
        update(MetricPoll)
        .where(MetricPoll.target_id.in_(ids), MetricPoll.lease_owner == owner)
        .values(**values)
        .execution_options(synchronize_session=False)
    )


async def channel_succeeded(session: AsyncSession, channel_ids: Iterable[uuid.UUID]) -> None:
    """Channels that answered: their backoff is over."""
    ids = list(channel_ids)
    if ids:
        await session.execute(
            update(MetricChannelState)
            .where(MetricChannelState.channel_id.in_(ids))
            .values(failures=0, paused_until=None, stopped_at=None, last_error_code=None)
            .execution_options(synchronize_session=False)
        )


async def channel_failed(
    session: AsyncSession,
    *,
    channel_id: uuid.UUID,
    organization_id: uuid.UUID,
    now: datetime,
    code: str,
    retry_after: float | None = None,
    stopped: bool = False,
) -> datetime | None:
    """Record a channel-wide failure: a pause after a retryable one (returned), or a stop
    until the channel changes (reconnection) after `auth_expired`."""
    state = await session.get(MetricChannelState, channel_id, with_for_update=True)
    if state is None:
        state = MetricChannelState(
            channel_id=channel_id, organization_id=organization_id, failures=0, updated_at=now
        )
        session.add(state)
    state.failures = (state.failures or 0) + 1
    state.last_error_code = code
    state.updated_at = now
    if stopped:
        state.stopped_at = now
        state.paused_until = None
    else:
        state.paused_until = now + channel_pause(state.failures, retry_after)
    await session.flush()
    return state.paused_until


async def oldest_due_at(session: AsyncSession, now: datetime) -> datetime | None:
    """When the longest-waiting due poll of a pollable channel fell due (the poller's lag)."""
    value: datetime | None = await session.scalar(
        select(func.min(MetricPoll.next_poll_at))
        .join(Channel, Channel.id == MetricPoll.channel_id)
        .where(
            MetricPoll.next_poll_at <= now,
            or_(MetricPoll.lease_until.is_(None), MetricPoll.lease_until < now),
            *_channel_ready(now),  # type: ignore[arg-type]
        )
    )
    return value
