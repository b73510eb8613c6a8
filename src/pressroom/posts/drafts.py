"""A target as a request leaves it (a draft), before and after it is checked against its
channel and provider, and the stored target rows drafts become."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from typing import Any

from pressroom.channels.models import Channel
from pressroom.kit.attributes import from_attributes
from pressroom.kit.ids import uuid7
from pressroom.posts import views
from pressroom.posts.models import Post
from pressroom.posts.models import PostTarget
from pressroom.posts.schemas import TargetCreate
from pressroom.posts.schemas import TargetUpdate
from pressroom.providers.schemas import ProviderDeclaration


@dataclass
class TargetDraft:
    """One target as it will be after the request: its fields merged from the request and
    the stored target (if any)."""

    name: str  # "targets[1]"
    existing: PostTarget | None
    channel_id: uuid.UUID
    content_kind: str | None
    text_override: str | None
    media_override: list[uuid.UUID] | None
    options: dict[str, Any] = field(default_factory=dict)
    # False for targets that are publishing or settled: they are not validated again.
    check: bool = True


@dataclass
class ResolvedTarget:
    draft: TargetDraft
    provider: str
    content_kind: str
    channel: Channel | None
    # What the target was checked against (the channel's own server's limits where it keeps
    # them); None for a stored target whose channel is gone.
    declaration: ProviderDeclaration | None = None


def requested_draft(name: str, entry: TargetCreate | TargetUpdate) -> TargetDraft:
    """A new target as the request entry `name` describes it."""
    assert entry.channel_id is not None  # updatePost: checked by check_request
    return TargetDraft(
        name=name,
        existing=None,
        channel_id=entry.channel_id,
        content_kind=entry.content_kind,
        text_override=entry.text,
        media_override=entry.media_ids,
        options=dict(entry.options or {}),
    )


def stored_draft(name: str, target: PostTarget) -> TargetDraft:
    """A stored target as a draft, before the request changes anything."""
    media = target.media_ids_override
    return from_attributes(
        TargetDraft,
        target,
        name=name,
        existing=target,
        media_override=views.media_list(media) if media is not None else None,
        options=dict(target.options or {}),
    )


def new_target(post: Post, item: ResolvedTarget, now: datetime) -> PostTarget:
    """The row of a new target of `post`, a draft until the post's plan moves it."""
    draft = item.draft
    return PostTarget(
        id=uuid7(),
        organization_id=post.organization_id,
        post_id=post.id,
        channel_id=draft.channel_id,
        provider=item.provider,
        content_kind=item.content_kind,
        text_override=draft.text_override,
        media_ids_override=_media_override(draft),
        options=draft.options,
        status="draft",
        attempts=0,
        # Bumped to 1 when the target first enters the queue.
        schedule_version=0,
        created_at=now,
        updated_at=now,
    )


def merge_target(item: ResolvedTarget, now: datetime) -> bool:
    """Write the draft into its stored target; True if anything changed."""
    target = item.draft.existing
    assert target is not None
    draft = item.draft
    values = {
        "channel_id": draft.channel_id,
        "provider": item.provider,
        "content_kind": item.content_kind,
        "text_override": draft.text_override,
        "media_ids_override": _media_override(draft),
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


def _media_override(draft: TargetDraft) -> dict[str, Any] | None:
    ids = draft.media_override
    return views.media_value(ids) if ids is not None else None
