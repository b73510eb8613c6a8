"""updatePost: a merge of top-level fields, the targets list with ids, schedule changes and
the approval decision, under the rule that what is publishing or published stays as it is."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.auth.scopes import MANAGER_ROLES
from pressroom.auth.service import Principal
from pressroom.http.access import insufficient_role
from pressroom.kit.clock import utcnow
from pressroom.kit.errors import FieldError, PressroomError, not_found, validation_error
from pressroom.kit.ids import uuid7
from pressroom.posts import repository, views
from pressroom.posts.checks import (
    ResolvedTarget,
    TargetDraft,
    check_labels,
    check_schedule,
    resolve_targets,
)
from pressroom.posts.lifecycle import apply_plan
from pressroom.posts.models import Post, PostTag, PostTarget, PostTopic
from pressroom.posts.schemas import Post as PostOut
from pressroom.posts.schemas import PostUpdate
from pressroom.posts.service import emit, wake_publisher
from pressroom.runtime import Runtime

# Targets whose published content is fixed: changing or removing them is a 409.
IMMUTABLE = frozenset({"publishing", "published"})
# Post statuses past the approval gate: a rejection can no longer stop them.
PAST_THE_GATE = frozenset({"publishing", "published", "partially_published", "failed"})


def decides_approval(body: PostUpdate) -> bool:
    """Whether the request carries an approval decision (owner or admin only)."""
    return body.approval is not None and body.approval.status is not None


def check_request(body: PostUpdate, now: datetime) -> list[FieldError]:
    """What can be said about the request without reading the post."""
    given = body.model_fields_set
    errors = []
    for name, wire in (
        ("media_ids", "mediaIds"),
        ("tags", "tags"),
        ("topics", "topics"),
        ("publish_now", "publishNow"),
        ("targets", "targets"),
        ("approval", "approval"),
    ):
        if name in given and getattr(body, name) is None:
            errors.append(FieldError(wire, "required", "must not be null"))
    if body.tags:
        errors += check_labels("tags", body.tags, allow_commas=False)
    if body.topics:
        errors += check_labels("topics", body.topics, allow_commas=True)
    errors += check_schedule(body.scheduled_at, bool(body.publish_now), now)
    rescheduling = bool(body.publish_now) or body.scheduled_at is not None
    if body.approval is not None and body.approval.status == "rejected" and rescheduling:
        errors.append(
            FieldError(
                "approval.status",
                "conflict",
                "a rejection returns the post to draft; it cannot be combined with "
                "publishNow or scheduledAt",
            )
        )
    seen: set[uuid.UUID] = set()
    for index, entry in enumerate(body.targets or []):
        if entry.id is None and entry.channel_id is None:
            errors.append(
                FieldError(
                    f"targets[{index}].channelId",
                    "required",
                    "is required for a new target (an entry without an id)",
                )
            )
        if entry.id is not None:
            if entry.id in seen:
                errors.append(FieldError(f"targets[{index}].id", "duplicate", "is listed twice"))
            seen.add(entry.id)
    return errors


async def update_post(
    session: AsyncSession,
    runtime: Runtime,
    principal: Principal,
    post_id: uuid.UUID,
    body: PostUpdate,
) -> PostOut:
    now = utcnow()
    errors = check_request(body, now)
    if errors:
        raise validation_error(errors)
    organization_id = principal.organization_id
    post = await repository.get_post(session, organization_id, post_id, for_update=True)
    if post is None:
        raise not_found("post")
    targets = (await repository.targets_of(session, [post.id], for_update=True))[post.id]
    approval = body.approval
    if (
        approval is not None
        and approval.required is False
        and post.approval_required
        and principal.member_role not in MANAGER_ROLES
    ):
        # Dropping the requirement would let the post past the gate without a decision.
        raise insufficient_role()

    given = body.model_fields_set
    old_status = post.status
    new_text = body.text if "text" in given else post.text
    new_media = body.media_ids if body.media_ids is not None else views.media_list(post.media_ids)
    # An explicit new schedule: it moves targets waiting for a retry, and (unless it makes a
    # draft) retries failed ones, which are then validated again.
    rescheduled = bool(body.publish_now) or "scheduled_at" in given
    retry_failed = bool(body.publish_now) or body.scheduled_at is not None
    drafts, removed = _drafts(body, targets, errors)
    for draft in drafts:
        draft.check = _needs_check(draft, retry_failed)
    resolved = await resolve_targets(
        session,
        organization_id,
        post_text=new_text,
        post_media=new_media,
        post_media_field="mediaIds" if body.media_ids is not None else None,
        drafts=drafts,
        errors=errors,
    )
    if approval is not None and approval.status == "approved":
        required = approval.required if approval.required is not None else post.approval_required
        if not required:
            errors.append(
                FieldError("approval.status", "not_required", "this post does not need approval")
            )
    if errors:
        raise validation_error(errors)
    _refuse_changes_to_published(post, resolved, removed, new_text, new_media)
    if approval is not None and approval.status == "rejected" and post.status in PAST_THE_GATE:
        raise PressroomError(
            "conflict",
            detail=f"The post is {post.status}; it is past the approval gate and can no longer "
            "be rejected.",
        )

    # Apply.
    content_changed = "text" in given and body.text != post.text
    content_changed |= body.media_ids is not None and new_media != views.media_list(post.media_ids)
    post.text = new_text
    post.media_ids = views.media_value(new_media)
    if "model" in given:
        post.model = body.model
    if body.tags is not None:
        await repository.replace_labels(session, PostTag, post, body.tags)
    if body.topics is not None:
        await repository.replace_labels(session, PostTopic, post, body.topics)
    for target in removed:
        await session.delete(target)
        content_changed = True
    current = [t for t in targets if t not in removed]
    for item in resolved:
        if item.draft.existing is None:
            target = _new_target(post, item, now)
            session.add(target)
            current.append(target)
            content_changed = True
        else:
            content_changed |= _merge_target(item, now)
    if body.publish_now:
        post.publish_mode, post.scheduled_at = "now", None
    elif "scheduled_at" in given:
        post.scheduled_at = body.scheduled_at
        post.publish_mode = "draft" if body.scheduled_at is None else "scheduled"
    _apply_approval(post, principal, body, content_changed, now)

    due_now = apply_plan(post, current, now, rescheduled=rescheduled)
    post.updated_at = now
    await session.flush()
    view = await views.load_view(session, post)
    await emit(session, runtime, "post.updated.v1", organization_id, view)
    if post.status == "scheduled" and old_status != "scheduled":
        await emit(session, runtime, "post.scheduled.v1", organization_id, view)
    if due_now:
        await wake_publisher(session, runtime)
    return view


def _drafts(
    body: PostUpdate, targets: Sequence[PostTarget], errors: list[FieldError]
) -> tuple[list[TargetDraft], list[PostTarget]]:
    """The target list after the request, and the stored targets it removes."""
    if body.targets is None:
        return [_draft_of(f"targets[{i}]", t) for i, t in enumerate(targets)], []
    by_id = {target.id: target for target in targets}
    drafts = []
    kept: set[uuid.UUID] = set()
    for index, entry in enumerate(body.targets):
        name = f"targets[{index}]"
        fields = entry.model_fields_set
        if entry.id is None:
            assert entry.channel_id is not None  # checked by check_request
            drafts.append(
                TargetDraft(
                    name=name,
                    existing=None,
                    channel_id=entry.channel_id,
                    content_kind=entry.content_kind,
                    text_override=entry.text,
                    media_override=entry.media_ids,
                    options=dict(entry.options or {}),
                )
            )
            continue
        existing = by_id.get(entry.id)
        if existing is None:
            errors.append(
                FieldError(f"{name}.id", "unknown_target", "is not a target of this post")
            )
            continue
        kept.add(existing.id)
        draft = _draft_of(name, existing)
        if entry.channel_id is not None:
            draft.channel_id = entry.channel_id
        if entry.content_kind is not None:
            draft.content_kind = entry.content_kind
        if "text" in fields:
            draft.text_override = entry.text
        if "media_ids" in fields:
            draft.media_override = entry.media_ids
        if entry.options is not None:
            draft.options = dict(entry.options)
        drafts.append(draft)
    return drafts, [t for t in targets if t.id not in kept]


def _draft_of(name: str, target: PostTarget) -> TargetDraft:
    return TargetDraft(
        name=name,
        existing=target,
        channel_id=target.channel_id,
        content_kind=target.content_kind,
        text_override=target.text_override,
        media_override=(
            views.media_list(target.media_ids_override)
            if target.media_ids_override is not None
            else None
        ),
        options=dict(target.options or {}),
    )


def _needs_check(draft: TargetDraft, retry_failed: bool) -> bool:
    """New and pending targets are validated; published and in-flight ones are fixed (a
    change to them is a 409); failed ones only when they are retried or edited."""
    target = draft.existing
    if target is None:
        return True
    if target.status in IMMUTABLE or target.status == "canceled":
        return False
    if target.status == "failed":
        return retry_failed or _target_fields_changed(draft)
    return True


def _target_fields_changed(draft: TargetDraft) -> bool:
    target = draft.existing
    assert target is not None
    media = (
        views.media_list(target.media_ids_override)
        if target.media_ids_override is not None
        else None
    )
    return (
        draft.channel_id != target.channel_id
        or (draft.content_kind or target.content_kind) != target.content_kind
        or draft.text_override != target.text_override
        or draft.media_override != media
        or draft.options != dict(target.options or {})
    )


def _refuse_changes_to_published(
    post: Post,
    resolved: Sequence[ResolvedTarget],
    removed: Sequence[PostTarget],
    new_text: str | None,
    new_media: list[uuid.UUID],
) -> None:
    for target in removed:
        if target.status in IMMUTABLE:
            raise PressroomError(
                "post_not_editable",
                detail=f"Target {target.id} is {target.status}; it cannot be removed.",
                extra={"targetId": str(target.id)},
            )
    for item in resolved:
        existing = item.draft.existing
        if existing is None or existing.status not in IMMUTABLE:
            continue
        target = existing
        draft = item.draft
        text = draft.text_override if draft.text_override is not None else new_text
        media = draft.media_override if draft.media_override is not None else new_media
        if (
            text != views.effective_text(post, target)
            or media != views.effective_media(post, target)
            or draft.channel_id != target.channel_id
            or item.content_kind != target.content_kind
            or draft.options != dict(target.options or {})
        ):
            raise PressroomError(
                "post_not_editable",
                detail=f"Target {target.id} is {target.status}; its text, media, channel and "
                "options can no longer change. Override the text or media on the other "
                "targets instead.",
                extra={"targetId": str(target.id)},
            )


def _new_target(post: Post, item: ResolvedTarget, now: datetime) -> PostTarget:
    draft = item.draft
    return PostTarget(
        id=uuid7(),
        organization_id=post.organization_id,
        post_id=post.id,
        channel_id=draft.channel_id,
        provider=item.provider,
        content_kind=item.content_kind,
        text_override=draft.text_override,
        media_ids_override=(
            views.media_value(draft.media_override) if draft.media_override is not None else None
        ),
        options=draft.options,
        status="draft",
        attempts=0,
        schedule_version=0,
        created_at=now,
        updated_at=now,
    )


def _merge_target(item: ResolvedTarget, now: datetime) -> bool:
    """Write the draft into its stored target; True if anything changed."""
    target = item.draft.existing
    assert target is not None
    draft = item.draft
    media = views.media_value(draft.media_override) if draft.media_override is not None else None
    values = {
        "channel_id": draft.channel_id,
        "provider": item.provider,
        "content_kind": item.content_kind,
        "text_override": draft.text_override,
        "media_ids_override": media,
        "options": draft.options,
    }
    changed = False
    for name, value in values.items():
        if getattr(target, name) != value:
            setattr(target, name, value)
            changed = True
    if changed:
        target.updated_at = now
    return changed


def _apply_approval(
    post: Post, principal: Principal, body: PostUpdate, content_changed: bool, now: datetime
) -> None:
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
