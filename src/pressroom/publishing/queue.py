"""The publisher's side of the post targets: claiming due targets with a lease and recording
what the provider answered.

The target row is the queue entry. A claim takes due rows (`SKIP LOCKED` on PostgreSQL; SQLite
serializes writers) and leases them to one worker; the worker publishes outside any
transaction; the outcome is recorded only while the worker still holds the lease, for the
schedule it claimed. A crashed worker's lease expires and another worker takes the target
again, sending the same idempotency key, so the provider returns the post it already made."""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timedelta
from typing import Any

from sqlalchemy import func
from sqlalchemy import or_
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.db import dialect_name
from pressroom.kit.attributes import from_attributes
from pressroom.posts import views
from pressroom.posts.lifecycle import derive_status
from pressroom.posts.lifecycle import earliest_published
from pressroom.posts.models import Post
from pressroom.posts.models import PostTarget
from pressroom.posts.service import labels_of
from pressroom.posts.service import lock_with_targets
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishResult
from pressroom.runtime import Runtime
from pressroom.webhooks.outbox import emit

# A provider's Retry-After is honoured up to this many seconds.
MAX_RETRY_AFTER_SECONDS = 3600.0
_DUE_STATUSES = ("scheduled", "publishing")
_MAX_MESSAGE = 1000


@dataclass(frozen=True)
class ClaimedTarget:
    """A target leased to one worker, with everything needed to publish it."""

    id: uuid.UUID
    post_id: uuid.UUID
    organization_id: uuid.UUID
    channel_id: uuid.UUID
    content_kind: str
    text: str
    media_ids: list[uuid.UUID]
    options: dict[str, Any]
    # This attempt's number for the current schedule (1 for the first).
    attempt: int
    schedule_version: int
    # The previous holder's lease ran out without an outcome (its worker died or hung).
    abandoned: bool
    # The post was deleted while an earlier attempt was in flight: never publish it again.
    post_deleted: bool = False
    # The target's network, and when this attempt fell due (for the publisher's metrics).
    provider: str = "unknown"
    due_at: datetime | None = None

    @property
    def idempotency_key(self) -> str:
        """Stable for one target and one schedule: retries and takeovers send the same."""
        return f"{self.id}:{self.schedule_version}"


@dataclass
class Outcome:
    target: ClaimedTarget
    result: PublishResult | None = None
    error: ProviderError | None = None


@dataclass
class Recorded:
    published: list[uuid.UUID] = field(default_factory=list)
    failed: list[uuid.UUID] = field(default_factory=list)
    retrying: list[uuid.UUID] = field(default_factory=list)
    # Targets of posts deleted while their publish was in flight, ended unpublished.
    canceled: list[uuid.UUID] = field(default_factory=list)
    # Outcomes dropped because the lease was lost (another worker owns the target now).
    lost: list[uuid.UUID] = field(default_factory=list)


def _due(now: datetime) -> Any:
    return (
        PostTarget.status.in_(_DUE_STATUSES),
        PostTarget.next_attempt_at <= now,
        or_(PostTarget.lease_until.is_(None), PostTarget.lease_until <= now),
    )


async def claim_due_targets(
    session: AsyncSession, *, owner: str, lease_seconds: float, limit: int, now: datetime
) -> list[ClaimedTarget]:
    """Lease up to `limit` due targets to `owner`, earliest first."""
    statement = (
        select(PostTarget.id, PostTarget.lease_owner, PostTarget.next_attempt_at)
        .where(*_due(now))
        # A post's targets fall due together: taking them together lets one worker settle
        # the post, instead of several queueing for its row lock to record their outcomes.
        .order_by(PostTarget.next_attempt_at, PostTarget.post_id)
        .limit(limit)
    )
    if dialect_name(session) == "postgresql":
        statement = statement.with_for_update(skip_locked=True)
    rows = (await session.execute(statement)).all()
    if not rows:
        return []
    ids = [row_id for row_id, _, _ in rows]
    abandoned = {row_id for row_id, previous, _ in rows if previous is not None}
    due = {row_id: due_at for row_id, _, due_at in rows}
    await session.execute(
        update(PostTarget)
        .where(PostTarget.id.in_(ids))
        .values(
            status="publishing",
            lease_owner=owner,
            lease_until=now + timedelta(seconds=lease_seconds),
            attempts=PostTarget.attempts + 1,
            updated_at=now,
        )
        .execution_options(synchronize_session=False)
    )
    details = await session.execute(
        select(
            PostTarget.id,
            PostTarget.post_id,
            PostTarget.organization_id,
            PostTarget.channel_id,
            PostTarget.content_kind,
            PostTarget.provider,
            PostTarget.text_override,
            PostTarget.media_ids_override,
            PostTarget.options,
            PostTarget.attempts,
            PostTarget.schedule_version,
            Post.text,
            Post.media_ids,
            Post.deleted_at,
        )
        .join(Post, Post.id == PostTarget.post_id)
        .where(PostTarget.id.in_(ids))
        .order_by(PostTarget.next_attempt_at)
    )
    claimed = []
    rows = details.all()
    await _mark_posts_publishing(session, {row.post_id for row in rows}, now)
    for row in rows:
        text = row.text_override if row.text_override is not None else row.text
        media = row.media_ids_override if row.media_ids_override is not None else row.media_ids
        claimed.append(
            from_attributes(
                ClaimedTarget,
                row,
                text=text or "",
                media_ids=views.media_list(media),
                options=dict(row.options or {}),
                attempt=row.attempts,
                abandoned=row.id in abandoned,
                post_deleted=row.deleted_at is not None,
                due_at=due[row.id],
            )
        )
    return claimed


async def _mark_posts_publishing(
    session: AsyncSession, post_ids: set[uuid.UUID], now: datetime
) -> None:
    """Scheduled posts whose targets were just claimed are now publishing. The claim holds
    target locks, so it must never wait for a post lock (whoever holds one may be waiting for
    these targets): a locked post is skipped, and its holder or the outcome settles it."""
    scheduled = select(Post.id).where(Post.id.in_(sorted(post_ids)), Post.status == "scheduled")
    if dialect_name(session) == "postgresql":
        scheduled = scheduled.with_for_update(skip_locked=True)
    await session.execute(
        update(Post)
        .where(Post.id.in_(scheduled.scalar_subquery()))
        .values(status="publishing", updated_at=now)
        .execution_options(synchronize_session=False)
    )


async def renew_leases(
    session: AsyncSession,
    *,
    owner: str,
    target_ids: Sequence[uuid.UUID],
    lease_seconds: float,
    now: datetime,
) -> set[uuid.UUID]:
    """Extend the leases `owner` still holds among `target_ids` to `now + lease_seconds`; the
    ids renewed. A target another worker took over (or that is no longer publishing) is left
    alone: its outcome will not be recorded by `owner`. Rows are locked in the order
    `lock_with_targets` uses, so a renewal never deadlocks with a recording."""
    if not target_ids:
        return set()
    held = (
        select(PostTarget.id)
        .where(
            PostTarget.id.in_(sorted(target_ids)),
            PostTarget.lease_owner == owner,
            PostTarget.status == "publishing",
        )
        .order_by(PostTarget.post_id, PostTarget.created_at, PostTarget.id)
    )
    if dialect_name(session) == "postgresql":
        held = held.with_for_update()
    kept = list((await session.scalars(held)).all())
    if kept:
        await session.execute(
            update(PostTarget)
            .where(PostTarget.id.in_(kept))
            .values(lease_until=now + timedelta(seconds=lease_seconds))
            .execution_options(synchronize_session=False)
        )
    return set(kept)


async def next_due_at(session: AsyncSession) -> datetime | None:
    """When the earliest unleased queued target falls due."""
    value: datetime | None = await session.scalar(
        select(func.min(PostTarget.next_attempt_at)).where(
            PostTarget.status.in_(_DUE_STATUSES), PostTarget.lease_owner.is_(None)
        )
    )
    return value


def retry_delay(delays: Sequence[float], attempt: int, retry_after: float | None) -> float:
    """Seconds before the retry that follows failed attempt `attempt` (1-based): the
    configured schedule, at least the provider's Retry-After (bounded), plus up to 10% jitter
    so that targets failing together do not all come back at the same instant."""
    base = delays[min(attempt - 1, len(delays) - 1)] if delays else 0.0
    if retry_after is not None and retry_after > 0:
        base = max(base, min(retry_after, MAX_RETRY_AFTER_SECONDS))
    return base * (1 + random.uniform(0, 0.1))


async def record_outcomes(
    session: AsyncSession,
    runtime: Runtime,
    *,
    owner: str,
    outcomes: Sequence[Outcome],
    now: datetime,
) -> Recorded:
    """Record each outcome whose lease `owner` still holds; settle the posts; emit
    post.published.v1 and post.failed.v1. Posts are locked before their targets, in id
    order, as everywhere else."""
    recorded = Recorded()
    if not outcomes:
        return recorded
    delays = runtime.settings.publisher_retry_delays
    max_attempts = len(delays) + 1
    posts, targets = await lock_with_targets(session, {o.target.post_id for o in outcomes})
    by_id = {target.id: target for group in targets.values() for target in group}
    events: list[tuple[Post, PostTarget, str]] = []
    for outcome in outcomes:
        claimed = outcome.target
        target = by_id.get(claimed.id)
        if (
            target is None
            or target.lease_owner != owner
            or target.status != "publishing"
            or target.schedule_version != claimed.schedule_version
        ):
            # Another worker took it over (or the post changed): its outcome is that one's.
            recorded.lost.append(claimed.id)
            continue
        post = posts[target.post_id]
        if post.deleted_at is not None:
            values, event_type, bucket = _outcome_of_deleted(outcome)
        else:
            values, event_type, bucket = _outcome_values(
                outcome, now, delays=delays, max_attempts=max_attempts
            )
        for name, value in {
            **values,
            "lease_owner": None,
            "lease_until": None,
            "updated_at": now,
        }.items():
            setattr(target, name, value)
        getattr(recorded, bucket).append(claimed.id)
        if event_type is not None:
            events.append((post, target, event_type))
    for post in posts.values():
        post_targets = targets[post.id]
        status = derive_status(post.publish_mode, [t.status for t in post_targets])
        first = earliest_published(post_targets)
        if status != post.status or first != post.first_published_at:
            post.status = status
            post.first_published_at = first
            post.updated_at = now
    await session.flush()
    await _emit_settled(session, runtime, events, targets)
    return recorded


async def _emit_settled(
    session: AsyncSession,
    runtime: Runtime,
    events: Sequence[tuple[Post, PostTarget, str]],
    targets: dict[uuid.UUID, list[PostTarget]],
) -> None:
    """post.published.v1 / post.failed.v1 per settled target, each with its post as it is
    now; a post settled several times in one batch is rendered once."""
    if not events:
        return
    post_ids = list(dict.fromkeys(post.id for post, _, _ in events))
    tags, topics = await labels_of(session, post_ids)
    rendered: dict[uuid.UUID, dict[str, Any]] = {}
    for post, target, event_type in events:
        if post.id not in rendered:
            view = views.post_view(post, targets[post.id], tags[post.id], topics[post.id])
            rendered[post.id] = views.event_data(view)
        await emit(
            session,
            runtime,
            organization_id=post.organization_id,
            event_type=event_type,
            data={**rendered[post.id], "targetId": str(target.id)},
        )


def _published_values(result: PublishResult) -> dict[str, Any]:
    """A published target; its error says why its first comment was not posted, or something
    else asked for with it was not done (a YouTube thumbnail), if it was refused (the post is
    live: never a failure, never retried)."""
    refusal = result.comment_error or result.warning
    return {
        "status": "published",
        "published_at": result.published_at,
        "provider_post_id": result.provider_post_id,
        "url": result.url,
        "next_attempt_at": None,
        **(
            _error_values(refusal)
            if refusal is not None
            else {"error_code": None, "error_message": None, "error_retryable": None}
        ),
    }


def _error_values(error: ProviderError) -> dict[str, Any]:
    return {
        "error_code": error.code,
        "error_message": error.message[:_MAX_MESSAGE],
        "error_retryable": error.retryable,
    }


def _outcome_of_deleted(outcome: Outcome) -> tuple[dict[str, Any], str | None, str]:
    """The post was deleted while this publish was in flight. A copy the network made is
    recorded and reported (post.published.v1 carries its url, so that it can be removed);
    anything else cancels the target, which is never tried again."""
    if outcome.result is not None:
        return _published_values(outcome.result), "post.published.v1", "published"
    values: dict[str, Any] = {"status": "canceled", "next_attempt_at": None}
    if outcome.error is not None:
        values.update(_error_values(outcome.error))
    return values, None, "canceled"


def _outcome_values(
    outcome: Outcome, now: datetime, *, delays: Sequence[float], max_attempts: int
) -> tuple[dict[str, Any], str | None, str]:
    """(columns to write, the event to emit or None, the Recorded bucket)."""
    result, error = outcome.result, outcome.error
    if result is not None:
        return _published_values(result), "post.published.v1", "published"
    assert error is not None
    values = _error_values(error)
    attempt = outcome.target.attempt
    if error.retryable and attempt < max_attempts:
        delay = retry_delay(delays, attempt, error.retry_after)
        values.update(status="publishing", next_attempt_at=now + timedelta(seconds=delay))
        return values, None, "retrying"
    values.update(status="failed", next_attempt_at=None)
    return values, "post.failed.v1", "failed"
