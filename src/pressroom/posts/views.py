"""A post as the API and its events show it (the getPost form)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.posts import repository
from pressroom.posts.models import Post, PostTarget
from pressroom.posts.schemas import Approval, TargetError
from pressroom.posts.schemas import Post as PostOut
from pressroom.posts.schemas import PostTarget as PostTargetOut


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


def target_view(post: Post, target: PostTarget) -> PostTargetOut:
    error = None
    if target.error_code is not None:
        error = TargetError(
            code=target.error_code,
            message=target.error_message or "",
            retryable=bool(target.error_retryable),
        )
    return PostTargetOut(
        id=target.id,
        channel_id=target.channel_id,
        provider=target.provider,
        content_kind=target.content_kind,
        text=effective_text(post, target),
        media_ids=effective_media(post, target),
        options=dict(target.options or {}),
        status=target.status,
        published_at=target.published_at,
        provider_post_id=target.provider_post_id,
        url=target.url,
        attempts=target.attempts,
        error=error,
    )


def post_view(
    post: Post, targets: Sequence[PostTarget], tags: Sequence[str], topics: Sequence[str]
) -> PostOut:
    return PostOut(
        id=post.id,
        text=post.text,
        media_ids=media_list(post.media_ids),
        scheduled_at=post.scheduled_at,
        tags=list(tags),
        topics=list(topics),
        model=post.model,
        status=post.status,
        approval=Approval(
            required=post.approval_required,
            status=post.approval_status,
            decided_by=post.approval_decided_by,
            decided_at=post.approval_decided_at,
        ),
        published_at=post.first_published_at,
        created_by=post.created_by,
        created_at=post.created_at,
        updated_at=post.updated_at,
        targets=[target_view(post, target) for target in targets],
    )


async def load_views(session: AsyncSession, posts: Sequence[Post]) -> list[PostOut]:
    """The views of several posts with three queries, whatever their number."""
    ids = [post.id for post in posts]
    targets = await repository.targets_of(session, ids)
    tags, topics = await repository.tags_and_topics_of(session, ids)
    return [post_view(p, targets[p.id], tags.get(p.id, []), topics.get(p.id, [])) for p in posts]


async def load_view(session: AsyncSession, post: Post) -> PostOut:
    return (await load_views(session, [post]))[0]


def event_data(view: PostOut, target_id: uuid.UUID | None = None) -> dict[str, Any]:
    """The `data` of the post events: `{"post": <getPost form>}` (+ `targetId`)."""
    data: dict[str, Any] = {"post": view.model_dump(mode="json", by_alias=True)}
    if target_id is not None:
        data["targetId"] = str(target_id)
    return data
