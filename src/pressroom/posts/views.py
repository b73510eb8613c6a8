"""A post as the API and its events show it (the getPost form)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.kit.schema import format_utc
from pressroom.posts import repository
from pressroom.posts.models import Post
from pressroom.posts.models import PostTarget

# A post in its wire form: the JSON object getPost answers and the post events carry.
PostView = dict[str, Any]


def media_list(value: dict[str, Any] | None) -> list[uuid.UUID]:
    """Media ids as stored (`{"ids": [...]}`)."""
    if not value:
        return []
    return [uuid.UUID(str(item)) for item in value.get("ids", [])]


def media_value(ids: Sequence[uuid.UUID]) -> dict[str, Any]:
    return {"ids": [str(item) for item in ids]}


def effective_text(post: Post, target: PostTarget) -> str | None:
    return target.text_override if target.text_override is not None else post.text


def effective_media(post: Post, target: PostTarget) -> list[uuid.UUID]:
    if target.media_ids_override is not None:
        return media_list(target.media_ids_override)
    return media_list(post.media_ids)


def _time(value: datetime | None) -> str | None:
    return None if value is None else format_utc(value)


def _id(value: uuid.UUID | None) -> str | None:
    return None if value is None else str(value)


def target_view(post: Any, target: Any) -> dict[str, Any]:
    """A target in its wire form (the `PostTarget` schema), from its row and its post's."""
    error = None
    if target.error_code is not None:
        error = {
            "code": target.error_code,
            "message": target.error_message or "",
            "retryable": bool(target.error_retryable),
        }
    text = target.text_override if target.text_override is not None else post.text
    media = target.media_ids_override
    if media is None:
        media = post.media_ids
    return {
        "id": str(target.id),
        "channelId": str(target.channel_id),
        "provider": target.provider,
        "contentKind": target.content_kind,
        "text": text,
        "mediaIds": [str(item) for item in media_list(media)],
        "options": dict(target.options or {}),
        "status": target.status,
        "publishedAt": _time(target.published_at),
        "providerPostId": target.provider_post_id,
        "url": target.url,
        "attempts": target.attempts,
        "error": error,
    }


def post_view(
    post: Any, targets: Sequence[Any], tags: Sequence[str], topics: Sequence[str]
) -> PostView:
    """A post in its wire form (the `Post` schema, which documents it), built from its row and
    its targets' (ORM objects or Core rows alike) without a model: a page of posts is the
    hottest read, and validating each view against the schema cost more than building it."""
    return {
        "id": str(post.id),
        "text": post.text,
        "mediaIds": [str(item) for item in media_list(post.media_ids)],
        "scheduledAt": _time(post.scheduled_at),
        "tags": list(tags),
        "topics": list(topics),
        "model": post.model,
        "status": post.status,
        "approval": {
            "required": post.approval_required,
            "status": post.approval_status,
            "decidedBy": _id(post.approval_decided_by),
            "decidedAt": _time(post.approval_decided_at),
        },
        "publishedAt": _time(post.first_published_at),
        "createdBy": _id(post.created_by),
        "createdAt": format_utc(post.created_at),
        "updatedAt": format_utc(post.updated_at),
        "targets": [target_view(post, target) for target in targets],
    }


async def load_views(session: AsyncSession, posts: Sequence[Any]) -> list[PostView]:
    """The views of several posts (ORM objects or rows) with three queries, whatever their
    number; the targets and labels are read as plain rows."""
    ids = [post.id for post in posts]
    targets = await repository.target_rows_of(session, ids)
    tags, topics = await repository.tags_and_topics_of(session, ids)
    return [post_view(p, targets[p.id], tags.get(p.id, []), topics.get(p.id, [])) for p in posts]


async def load_view(session: AsyncSession, post: Post) -> PostView:
    return (await load_views(session, [post]))[0]


def event_data(view: PostView, target_id: uuid.UUID | None = None) -> dict[str, Any]:
    """The `data` of the post events: `{"post": <getPost form>}` (+ `targetId`)."""
    data: dict[str, Any] = {"post": view}
    if target_id is not None:
        data["targetId"] = str(target_id)
    return data
