"""Post use cases shared by the others: reading, listing, deleting, emitting post events,
waking the publisher, and failing the targets of a disconnected channel.

Creating and updating live in creating.py and updating.py; the publisher's side of the
queue (claiming due targets, recording outcomes) in publishing/queue.py."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.channels import service as channels
from pressroom.db import row_with_id
from pressroom.kit.clock import utcnow
from pressroom.kit.errors import field_error
from pressroom.kit.errors import found
from pressroom.kit.pagination import PageParams
from pressroom.kit.pagination import decode_cursor
from pressroom.kit.pagination import page_of
from pressroom.posts import repository
from pressroom.posts import views
from pressroom.posts.lifecycle import UNSETTLED
from pressroom.posts.lifecycle import derive_status
from pressroom.posts.lifecycle import place
from pressroom.posts.lifecycle import set_error
from pressroom.posts.lifecycle import stoppable
from pressroom.posts.models import POST_STATUSES
from pressroom.posts.models import Post
from pressroom.posts.models import PostTarget
from pressroom.posts.schemas import Post as PostOut
from pressroom.runtime import Runtime
from pressroom.webhooks import outbox

# The publisher listens here; a commit that makes a target due now wakes it at once.
PUBLISHER_CHANNEL = "pressroom_publisher"


async def emit(
    session: AsyncSession,
    runtime: Runtime,
    event_type: str,
    organization_id: uuid.UUID,
    view: views.PostView,
    target_id: uuid.UUID | None = None,
) -> None:
    """Write a post event in the caller's transaction: `{"post": view}` (+ `targetId`)."""
    await outbox.emit(
        session,
        runtime,
        organization_id=organization_id,
        event_type=event_type,
        data=views.event_data(view, target_id),
    )


async def wake_publisher(session: AsyncSession, runtime: Runtime) -> None:
    await runtime.notifier.notify(session, PUBLISHER_CHANNEL)


async def announce(
    session: AsyncSession,
    runtime: Runtime,
    event_type: str,
    post: Post,
    view: views.PostView,
    *,
    was_scheduled: bool,
    due_now: bool,
) -> None:
    """After a create or an update: emit `event_type`, then post.scheduled.v1 if the post has
    just become scheduled (both in one write), and wake the publisher if a target is due now."""
    data = views.event_data(view)
    events = [(event_type, data)]
    if post.status == "scheduled" and not was_scheduled:
        events.append(("post.scheduled.v1", data))
    await outbox.emit_many(session, runtime, organization_id=post.organization_id, events=events)
    if due_now:
        await wake_publisher(session, runtime)


async def lock_with_targets(
    session: AsyncSession, post_ids: Collection[uuid.UUID]
) -> tuple[dict[uuid.UUID, Post], dict[uuid.UUID, list[PostTarget]]]:
    """The posts by id and each one's targets, row-locked: posts before their targets, in id
    order, the lock order used everywhere."""
    posts = await repository.lock_posts(session, post_ids)
    targets = await repository.targets_of(session, list(posts), for_update=True)
    return posts, targets


async def labels_of(
    session: AsyncSession, post_ids: Collection[uuid.UUID]
) -> tuple[dict[uuid.UUID, list[str]], dict[uuid.UUID, list[str]]]:
    """Each post's tags and topics, in their order (absent posts have none)."""
    return await repository.tags_and_topics_of(session, post_ids)


async def get_post(
    session: AsyncSession, organization_id: uuid.UUID, post_id: uuid.UUID
) -> PostOut:
    live = repository.live_posts(organization_id)
    post = found(await row_with_id(session, live, post_id), "post")
    return PostOut.model_validate(await views.load_view(session, post))


async def list_posts(
    session: Callable[[], Awaitable[AsyncSession]],
    runtime: Runtime,
    organization_id: uuid.UUID,
    page: PageParams,
    filters: repository.PostFilters,
) -> tuple[list[str], str | None]:
    """A page of posts, each in its wire form as JSON text (posts/wire_sql.py), and the next
    page's cursor. `session` opens the request's session, if a statement needs it: on
    PostgreSQL the page itself is read on the plain read connections (kit/plain_reads.py)."""
    if filters.status is not None and filters.status not in POST_STATUSES:
        raise field_error("status", "invalid_choice", f"must be one of {', '.join(POST_STATUSES)}")
    if filters.start is not None and filters.end is not None and filters.start > filters.end:
        raise field_error("end", "before_start", "must not be before start")
    channel_id = filters.channel_id
    if channel_id is not None and not await channels.usable(
        await session(), organization_id, [channel_id]
    ):
        raise field_error(
            "channelId", "unknown_channel", "names no connected channel of this organization"
        )
    after = decode_cursor(runtime.box, "posts", page.cursor) if page.cursor else None
    statement, parameters = repository.list_query(
        runtime.engine.dialect.name, organization_id, filters, limit=page.page_size + 1, after=after
    )
    plain = runtime.plain_reads
    if plain is not None:
        found = await plain.rows(statement, parameters)
    else:
        found = list((await (await session()).execute(statement, parameters)).all())
    rows, next_cursor = page_of(found, page, runtime.box, "posts")
    return [row.document for row in rows], next_cursor


async def delete_post(
    session: AsyncSession, runtime: Runtime, organization_id: uuid.UUID, post_id: uuid.UUID
) -> views.PostView:
    """Delete the post and cancel its unpublished targets (published copies on the networks
    stay). Emits post.deleted.v1 with the post as it was; returns that form.

    A target whose publish is in flight (its worker holds a live lease) cannot be called back:
    it is left to its worker, which records what the network answered. If the network
    published it, the target is `published` and post.published.v1 reports the copy (with its
    `url`) so that it can be removed; otherwise it is canceled and never tried again (see
    publishing/queue.py)."""
    live = repository.live_posts(organization_id)
    post = found(await row_with_id(session, live, post_id, lock=True), "post")
    targets = (await repository.targets_of(session, [post.id], for_update=True))[post.id]
    before = await views.load_view(session, post)
    now = utcnow()
    for target in targets:
        if stoppable(target, now):
            place(target, "canceled")
            target.updated_at = now
    post.deleted_at = now
    post.updated_at = now
    await session.flush()
    await emit(session, runtime, "post.deleted.v1", organization_id, before)
    return before


async def fail_targets_of_disconnected_channel(
    session: AsyncSession, runtime: Runtime, channel_id: uuid.UUID, message: str
) -> None:
    """The runtime's `channel_gone` hook (see pressroom.wiring)."""
    await fail_targets_of_channel(
        session, runtime, channel_id, code="channel_disconnected", message=message
    )


async def fail_targets_of_channel(
    session: AsyncSession, runtime: Runtime, channel_id: uuid.UUID, *, code: str, message: str
) -> int:
    """Fail the channel's unpublished targets for good (its channel is gone), emitting
    post.failed.v1 for each. A target whose publish is in flight right now is left to its
    worker, which will record the truth (published, or failed because the channel is gone)."""
    now = utcnow()
    post_ids = await repository.posts_with_targets_on(session, channel_id, UNSETTLED)
    if not post_ids:
        return 0
    posts, targets = await lock_with_targets(session, post_ids)
    failed: list[tuple[Post, PostTarget]] = []
    for post_id, post in posts.items():
        for target in targets[post_id]:
            if target.channel_id != channel_id or not stoppable(target, now):
                continue
            set_error(target, code, message, False)
            place(target, "failed")
            target.updated_at = now
            failed.append((post, target))
        post.status = derive_status(post.publish_mode, [t.status for t in targets[post_id]])
        post.updated_at = now
    await session.flush()
    await _emit_per_target(session, runtime, "post.failed.v1", failed)
    return len(failed)


async def _emit_per_target(
    session: AsyncSession,
    runtime: Runtime,
    event_type: str,
    settled: Sequence[tuple[Post, PostTarget]],
) -> None:
    posts = list({post.id: post for post, _ in settled}.values())
    rendered = await views.load_views(session, posts)
    by_id = {post.id: view for post, view in zip(posts, rendered, strict=True)}
    for post, target in settled:
        await emit(session, runtime, event_type, post.organization_id, by_id[post.id], target.id)
