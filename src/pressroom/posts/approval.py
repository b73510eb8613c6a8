"""The approval part of updatePost: who may decide or drop the requirement, which decisions
make sense for the post as it is, and what a decision (or a change of content) does to it."""

from __future__ import annotations

import uuid
from datetime import datetime

from pressroom.auth.scopes import MANAGER_ROLES
from pressroom.auth.service import Principal
from pressroom.http.access import insufficient_role
from pressroom.kit.errors import FieldError
from pressroom.kit.errors import PressroomError
from pressroom.posts.models import Post
from pressroom.posts.schemas import PostUpdate

# Post statuses past the approval gate: a rejection can no longer stop them.
PAST_THE_GATE = frozenset({"publishing", "published", "partially_published", "failed"})


def decides_approval(body: PostUpdate) -> bool:
    """Whether the request carries an approval decision (owner or admin only)."""
    return body.approval is not None and body.approval.status is not None


def rejection_conflict(body: PostUpdate) -> FieldError | None:
    """A rejection together with a new schedule, which it would undo at once."""
    rescheduling = bool(body.publish_now) or body.scheduled_at is not None
    if body.approval is not None and body.approval.status == "rejected" and rescheduling:
        return FieldError(
            "approval.status",
            "conflict",
            "a rejection returns the post to draft; it cannot be combined with "
            "publishNow or scheduledAt",
        )
    return None


def check_requirement_change(post: Post, principal: Principal, body: PostUpdate) -> None:
    """Only an owner or admin may drop the post's approval requirement."""
    approval = body.approval
    if (
        approval is not None
        and approval.required is False
        and post.approval_required
        and principal.member_role not in MANAGER_ROLES
    ):
        # Dropping the requirement would let the post past the gate without a decision.
        raise insufficient_role()


def approval_errors(post: Post, body: PostUpdate) -> list[FieldError]:
    """An approval of a post that, after the request, needs none."""
    approval = body.approval
    if approval is not None and approval.status == "approved":
        required = approval.required if approval.required is not None else post.approval_required
        if not required:
            return [
                FieldError("approval.status", "not_required", "this post does not need approval")
            ]
    return []


def check_rejection(post: Post, body: PostUpdate) -> None:
    """A rejection comes too late once the post is publishing or settled (a 409)."""
    approval = body.approval
    if approval is not None and approval.status == "rejected" and post.status in PAST_THE_GATE:
        raise PressroomError(
            "conflict",
            detail=f"The post is {post.status}; it is past the approval gate and can no longer "
            "be rejected.",
        )


def apply_approval(
    post: Post, principal: Principal, body: PostUpdate, content_changed: bool, now: datetime
) -> None:
    """Write the requirement and the decision of the request into the post; a change of
    content takes back an earlier approval."""
    approval = body.approval
    decision = approval.status if approval is not None else None
    if approval is not None and approval.required is not None:
        if approval.required and not post.approval_required:
            post.approval_required = True
            _set_approval(post, "pending", None, None)
        elif not approval.required and post.approval_required:
            post.approval_required = False
            _set_approval(post, "not_required", None, None)
    if (
        content_changed
        and post.approval_required
        and post.approval_status == "approved"
        and decision != "approved"
    ):
        # What was approved is not what would be published any more.
        _set_approval(post, "pending", None, None)
    if decision == "approved" and post.approval_status != "approved":
        _set_approval(post, "approved", principal.member_id, now)
    elif decision == "rejected":
        _set_approval(post, "rejected", principal.member_id, now)
        post.publish_mode, post.scheduled_at = "draft", None


def _set_approval(
    post: Post, status: str, decided_by: uuid.UUID | None, decided_at: datetime | None
) -> None:
    post.approval_status = status
    post.approval_decided_by = decided_by
    post.approval_decided_at = decided_at
