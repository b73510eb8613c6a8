"""createPost: a logical post with 1-20 targets, validated, then drafted, held for approval,
scheduled or queued for publishing at once."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.auth.service import Principal
from pressroom.kit.clock import utcnow
from pressroom.kit.errors import FieldError, validation_error
from pressroom.kit.ids import uuid7
from pressroom.posts import repository, views
from pressroom.posts.checks import TargetDraft, check_labels, check_schedule, resolve_targets
from pressroom.posts.lifecycle import apply_plan
from pressroom.posts.models import Post, PostTag, PostTarget, PostTopic
from pressroom.posts.schemas import Post as PostOut
from pressroom.posts.schemas import PostCreate
from pressroom.posts.service import emit, wake_publisher
from pressroom.runtime import Runtime


async def create_post(
    session: AsyncSession, runtime: Runtime, principal: Principal, body: PostCreate
) -> PostOut:
    now = utcnow()
    organization_id = principal.organization_id
    errors: list[FieldError] = []
    errors += check_labels("tags", body.tags, allow_commas=False)
    errors += check_labels("topics", body.topics, allow_commas=True)
    errors += check_schedule(body.scheduled_at, body.publish_now, now)
    drafts = [
        TargetDraft(
            name=f"targets[{index}]",
            existing=None,
            channel_id=entry.channel_id,
            content_kind=entry.content_kind,
            text_override=entry.text,
            media_override=entry.media_ids,
            options=dict(entry.options),
        )
        for index, entry in enumerate(body.targets)
    ]
    resolved = await resolve_targets(
        session,
        organization_id,
        post_text=body.text,
        post_media=body.media_ids,
        post_media_field="mediaIds",
        drafts=drafts,
        errors=errors,
    )
    if errors:
        raise validation_error(errors)

    if body.publish_now:
        mode = "now"
    elif body.scheduled_at is not None:
        mode = "scheduled"
    else:
        mode = "draft"
    required = body.approval.required
    post = Post(
        id=uuid7(),
        organization_id=organization_id,
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
    session.add(post)
    targets = [
        PostTarget(
            id=uuid7(),
            organization_id=organization_id,
            post_id=post.id,
            channel_id=item.draft.channel_id,
            provider=item.provider,
            content_kind=item.content_kind,
            text_override=item.draft.text_override,
            media_ids_override=(
                views.media_value(item.draft.media_override)
                if item.draft.media_override is not None
                else None
            ),
            options=item.draft.options,
            status="draft",
            attempts=0,
            # Bumped to 1 when the target first enters the queue.
            schedule_version=0,
            created_at=now,
            updated_at=now,
        )
        for item in resolved
    ]
    session.add_all(targets)
    due_now = apply_plan(post, targets, now, rescheduled=False)
    await session.flush()
    await repository.replace_labels(session, PostTag, post, body.tags)
    await repository.replace_labels(session, PostTopic, post, body.topics)

    view = views.post_view(post, targets, body.tags, body.topics)
    await emit(session, runtime, "post.created.v1", organization_id, view)
    if post.status == "scheduled":
        await emit(session, runtime, "post.scheduled.v1", organization_id, view)
    if due_now:
        await wake_publisher(session, runtime)
    return view
