"""createPost: a logical post with 1-20 targets, validated, then drafted, held for approval,
scheduled or queued for publishing at once."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.auth.service import Principal
from pressroom.kit.clock import utcnow
from pressroom.kit.errors import FieldError
from pressroom.kit.errors import validation_error
from pressroom.kit.ids import uuid7
from pressroom.posts import repository
from pressroom.posts import views
from pressroom.posts.checks import check_labels
from pressroom.posts.checks import check_schedule
from pressroom.posts.checks import resolve_targets
from pressroom.posts.drafts import ResolvedTarget
from pressroom.posts.drafts import new_target
from pressroom.posts.drafts import requested_draft
from pressroom.posts.lifecycle import apply_plan
from pressroom.posts.models import Post
from pressroom.posts.schemas import PostCreate
from pressroom.posts.service import announce
from pressroom.runtime import Runtime


async def create_post(
    session: AsyncSession, runtime: Runtime, principal: Principal, body: PostCreate
) -> views.PostView:
    now = utcnow()
    resolved, errors = await check_post(session, principal.organization_id, body, now)
    if errors:
        raise validation_error(errors)
    post = _new_post(principal, body, now)
    targets = [new_target(post, item, now) for item in resolved]
    due_now = apply_plan(post, targets, now, rescheduled=False)
    await repository.insert_new_post(session, post, targets, body.tags, body.topics)

    view = views.post_view(post, targets, body.tags, body.topics)
    await announce(
        session, runtime, "post.created.v1", post, view, was_scheduled=False, due_now=due_now
    )
    return view


async def check_post(
    session: AsyncSession, organization_id: uuid.UUID, body: PostCreate, now: datetime
) -> tuple[list[ResolvedTarget], list[FieldError]]:
    """The request's targets with their channels and providers, and every problem of the
    request, in the order createPost reports them (the preflight reports the same list)."""
    errors: list[FieldError] = []
    errors += check_labels("tags", body.tags, allow_commas=False)
    errors += check_labels("topics", body.topics, allow_commas=True)
    errors += check_schedule(body.scheduled_at, body.publish_now, now)
    resolved = await resolve_targets(
        session,
        organization_id,
        post_text=body.text,
        post_media=body.media_ids,
        post_media_field="mediaIds",
        drafts=[requested_draft(f"targets[{i}]", e) for i, e in enumerate(body.targets)],
        errors=errors,
    )
    return resolved, errors


def _new_post(principal: Principal, body: PostCreate, now: datetime) -> Post:
    if body.publish_now:
        mode = "now"
    elif body.scheduled_at is not None:
        mode = "scheduled"
    else:
        mode = "draft"
    required = body.approval.required
    return Post(
        id=uuid7(),
        organization_id=principal.organization_id,
        text=body.text,
        media_ids=views.media_value(body.media_ids),
        scheduled_at=body.scheduled_at,
        status="draft",
        publish_mode=mode,
        model=body.model,
        approval_required=required,
        approval_status="pending" if required else "not_required",
        created_by=principal.member_id,
        created_at=now,
        updated_at=now,
    )
