"""updatePost: a merge of top-level fields, the targets list with ids, schedule changes and
the approval decision, under the rule that what is publishing or published stays as it is."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.auth.service import Principal
from pressroom.db import row_with_id
from pressroom.kit.clock import utcnow
from pressroom.kit.errors import FieldError
from pressroom.kit.errors import PressroomError
from pressroom.kit.errors import found
from pressroom.kit.errors import validation_error
from pressroom.posts import repository
from pressroom.posts import views
from pressroom.posts.approval import apply_approval
from pressroom.posts.approval import approval_errors
from pressroom.posts.approval import check_rejection
from pressroom.posts.approval import check_requirement_change
from pressroom.posts.approval import rejection_conflict
from pressroom.posts.checks import check_labels
from pressroom.posts.checks import check_schedule
from pressroom.posts.checks import resolve_targets
from pressroom.posts.drafts import ResolvedTarget
from pressroom.posts.drafts import TargetDraft
from pressroom.posts.drafts import merge_target
from pressroom.posts.drafts import new_target
from pressroom.posts.drafts import requested_draft
from pressroom.posts.drafts import stored_draft
from pressroom.posts.lifecycle import apply_plan
from pressroom.posts.models import Post
from pressroom.posts.models import PostTag
from pressroom.posts.models import PostTarget
from pressroom.posts.models import PostTopic
from pressroom.posts.schemas import Post as PostOut
from pressroom.posts.schemas import PostUpdate
from pressroom.posts.service import announce
from pressroom.runtime import Runtime

# Targets whose published content is fixed: changing or removing them is a 409.
IMMUTABLE = frozenset({"publishing", "published"})


@dataclass
class _Change:
    """The request checked against the post: what the post and its targets become."""

    resolved: list[ResolvedTarget]
    removed: list[PostTarget]
    text: str | None
    media: list[uuid.UUID]
    # An explicit new schedule (publishNow, or scheduledAt given, even as null).
    rescheduled: bool


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
    conflict = rejection_conflict(body)
    if conflict is not None:
        errors.append(conflict)
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
    live = repository.live_posts(principal.organization_id)
    post = found(await row_with_id(session, live, post_id, lock=True), "post")
    targets = (await repository.targets_of(session, [post.id], for_update=True))[post.id]
    check_requirement_change(post, principal, body)
    change = await _check_change(session, post, targets, body)

    old_status = post.status
    content_changed, current = await _apply_content(session, post, targets, body, change, now)
    _apply_schedule(post, body)
    apply_approval(post, principal, body, content_changed, now)
    due_now = apply_plan(post, current, now, rescheduled=change.rescheduled)
    post.updated_at = now
    await session.flush()
    view = await views.load_view(session, post)
    await announce(
        session,
        runtime,
        "post.updated.v1",
        post,
        view,
        was_scheduled=old_status == "scheduled",
        due_now=due_now,
    )
    return PostOut.model_validate(view)


async def _check_change(
    session: AsyncSession,
    post: Post,
    targets: Sequence[PostTarget],
    body: PostUpdate,
) -> _Change:
    """The request against the post and its targets: a 400 with every problem found, then a
    409 if it would change what is published or reject a post past the approval gate."""
    errors: list[FieldError] = []
    given = body.model_fields_set
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
        post.organization_id,
        post_text=new_text,
        post_media=new_media,
        post_media_field="mediaIds" if body.media_ids is not None else None,
        drafts=drafts,
        errors=errors,
    )
    errors += approval_errors(post, body)
    if errors:
        raise validation_error(errors)
    _refuse_changes_to_published(post, resolved, removed, new_text, new_media)
    check_rejection(post, body)
    return _Change(resolved, removed, new_text, new_media, rescheduled)


async def _apply_content(
    session: AsyncSession,
    post: Post,
    targets: Sequence[PostTarget],
    body: PostUpdate,
    change: _Change,
    now: datetime,
) -> tuple[bool, list[PostTarget]]:
    """Write the text, media, model, labels and targets of the request into the post: whether
    its content changed, and its targets after the request."""
    given = body.model_fields_set
    content_changed = "text" in given and body.text != post.text
    content_changed |= body.media_ids is not None and change.media != views.media_list(
        post.media_ids
    )
    post.text = change.text
    post.media_ids = views.media_value(change.media)
    if "model" in given:
        post.model = body.model
    if body.tags is not None:
        await repository.replace_labels(session, PostTag, post, body.tags)
    if body.topics is not None:
        await repository.replace_labels(session, PostTopic, post, body.topics)
    for target in change.removed:
        await session.delete(target)
        content_changed = True
    current = [t for t in targets if t not in change.removed]
    for item in change.resolved:
        if item.draft.existing is None:
            target = new_target(post, item, now)
            session.add(target)
            current.append(target)
            content_changed = True
        else:
            content_changed |= merge_target(item, now)
    return content_changed, current


def _apply_schedule(post: Post, body: PostUpdate) -> None:
    if body.publish_now:
        post.publish_mode, post.scheduled_at = "now", None
    elif "scheduled_at" in body.model_fields_set:
        post.scheduled_at = body.scheduled_at
        post.publish_mode = "draft" if body.scheduled_at is None else "scheduled"


def _drafts(
    body: PostUpdate, targets: Sequence[PostTarget], errors: list[FieldError]
) -> tuple[list[TargetDraft], list[PostTarget]]:
    """The target list after the request, and the stored targets it removes."""
    if body.targets is None:
        return [stored_draft(f"targets[{i}]", t) for i, t in enumerate(targets)], []
    by_id = {target.id: target for target in targets}
    drafts = []
    kept: set[uuid.UUID] = set()
    for index, entry in enumerate(body.targets):
        name = f"targets[{index}]"
        fields = entry.model_fields_set
        if entry.id is None:
            drafts.append(requested_draft(name, entry))
            continue
        existing = by_id.get(entry.id)
        if existing is None:
            errors.append(
                FieldError(f"{name}.id", "unknown_target", "is not a target of this post")
            )
            continue
        kept.add(existing.id)
        draft = stored_draft(name, existing)
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
    stored = stored_draft(draft.name, target)
    return (
        draft.channel_id != stored.channel_id
        or (draft.content_kind or stored.content_kind) != stored.content_kind
        or draft.text_override != stored.text_override
        or draft.media_override != stored.media_override
        or draft.options != stored.options
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
