"""The post lifecycle: what the author asked for (draft, scheduled, now), the approval gate,
and the statuses of a post and its targets that follow from them.

A target's status is the source of truth; the post's status is derived from its targets:

    publishing > pending_approval > scheduled > draft > the settled summary
    (published / partially_published / failed)

Settled targets (`published`, `failed`, `canceled`) and targets whose publish is in flight (a
worker holds a live lease) are never moved by a change of plan. An explicit new schedule
(`publishNow: true`, a new `scheduledAt` or `scheduledAt: null`) also moves `publishing` targets
that are not in flight (waiting for a retry, or abandoned by a worker whose lease ran out) and
retries `failed` ones. Whenever a target enters the queue, or moves within it, its schedule
version is bumped: with its id it forms the idempotency key sent to the provider, so one
schedule is published at most once, and the outcome of a stale lease (a worker that claimed an
earlier schedule) is never recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pressroom.posts.models import Post
from pressroom.posts.models import PostTarget

# Targets a change of plan moves.
MOVABLE = frozenset({"draft", "pending_approval", "scheduled"})
QUEUED = frozenset({"scheduled", "publishing"})
SETTLED = frozenset({"published", "failed", "canceled"})
# Targets not yet settled: a deletion cancels them, a lost channel fails them.
UNSETTLED = MOVABLE | {"publishing"}


def gate_closed(post: Post) -> bool:
    """The post needs an approval it does not have."""
    return post.approval_required and post.approval_status != "approved"


def derive_status(mode: str, statuses: Sequence[str]) -> str:
    active = [status for status in statuses if status != "canceled"]
    for status in ("publishing", "pending_approval", "scheduled"):
        if status in active:
            return status
    published = "published" in active
    if "draft" in active or (mode == "draft" and not published):
        return "draft"
    if published and "failed" in active:
        return "partially_published"
    if published:
        return "published"
    if "failed" in active:
        return "failed"
    return "draft"


def plan_for(post: Post, now: datetime) -> tuple[str, datetime | None]:
    """The status (and queue time) an unpublished target of `post` should have now."""
    if post.publish_mode == "draft":
        return "draft", None
    if gate_closed(post):
        return "pending_approval", None
    scheduled_at = post.scheduled_at
    if post.publish_mode == "scheduled" and scheduled_at is not None and scheduled_at > now:
        return "scheduled", scheduled_at
    return "publishing", now


def in_flight(target: PostTarget, now: datetime) -> bool:
    """A worker holds a live lease on the target: its publish may be on its way right now."""
    return (
        target.status == "publishing"
        and target.lease_until is not None
        and target.lease_until > now
    )


def stoppable(target: PostTarget, now: datetime) -> bool:
    """Unsettled, and no worker is publishing it right now: it can be canceled or failed."""
    return target.status in UNSETTLED and not in_flight(target, now)


def place(target: PostTarget, status: str, next_attempt_at: datetime | None = None) -> None:
    """Give the target `status` (and its time in the queue), out of any worker's hands."""
    target.status = status
    target.next_attempt_at = next_attempt_at
    target.lease_owner = None
    target.lease_until = None


def set_error(
    target: PostTarget, code: str | None, message: str | None, retryable: bool | None
) -> None:
    """Record why the target failed (all None: it has no error)."""
    target.error_code = code
    target.error_message = message
    target.error_retryable = retryable


def apply_plan(
    post: Post, targets: Sequence[PostTarget], now: datetime, *, rescheduled: bool
) -> bool:
    """Move the post's movable targets to what its plan says, and derive the post's status.
    `rescheduled` (an explicit new schedule) also moves its publishing targets that are not in
    flight and, unless the post becomes a draft, retries its failed ones. True if a target is
    now due at once."""
    status, queue_at = plan_for(post, now)
    if status == "pending_approval" and post.approval_status == "rejected":
        # Submitted again after a rejection: awaiting a new decision.
        post.approval_status = "pending"
    due_now = False
    for target in targets:
        restart = rescheduled and (
            (target.status == "failed" and status != "draft")
            or (target.status == "publishing" and not in_flight(target, now))
        )
        if target.status not in MOVABLE and not restart:
            continue
        if status in QUEUED and (
            target.status not in QUEUED or target.next_attempt_at != queue_at or restart
        ):
            target.schedule_version += 1
            target.attempts = 0
        if restart:
            # A new schedule starts afresh: the last schedule's attempts and error are history.
            target.attempts = 0
            set_error(target, None, None, None)
        place(target, status, queue_at)
        due_now = due_now or status == "publishing"
    post.status = derive_status(post.publish_mode, [t.status for t in targets])
    return due_now


def earliest_published(targets: Sequence[PostTarget]) -> datetime | None:
    times = [t.published_at for t in targets if t.published_at is not None]
    return min(times) if times else None
