"""Every query of the posts domain (posts, their labels and their targets)."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Collection
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from functools import cache
from typing import Any
from typing import NamedTuple

from sqlalchemy import ColumnElement
from sqlalchemy import Integer
from sqlalchemy import Select
from sqlalchemy import bindparam
from sqlalchemy import delete
from sqlalchemy import exists
from sqlalchemy import func
from sqlalchemy import insert
from sqlalchemy import literal
from sqlalchemy import select
from sqlalchemy import tuple_
from sqlalchemy import union_all
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import BindParameter

from pressroom.db import locked
from pressroom.db import rows_by_id
from pressroom.db import table_of
from pressroom.kit.sqlite_connection import write_behind
from pressroom.posts.models import Post
from pressroom.posts.models import PostTag
from pressroom.posts.models import PostTarget
from pressroom.posts.models import PostTopic
from pressroom.posts.wire_sql import post_document

_LAST_MILLISECOND = datetime.max.replace(microsecond=999000, tzinfo=UTC)

LabelModel = type[PostTag] | type[PostTopic]
_POSTS = table_of(Post)


def post_date() -> ColumnElement[Any]:
    """The date listPosts bounds: the earliest target publishedAt, else scheduledAt, else
    createdAt."""
    return func.coalesce(_POSTS.c.first_published_at, _POSTS.c.scheduled_at, _POSTS.c.created_at)


def live_posts(organization_id: uuid.UUID) -> Select[Post]:
    return select(Post).where(Post.organization_id == organization_id, Post.deleted_at.is_(None))


# The columns a target's view shows, read as plain rows (a page's targets need no objects: the
# ORM's identity map and instance state cost more than the rows themselves).
_TARGET_VIEW_COLUMNS = (
    PostTarget.id,
    PostTarget.post_id,
    PostTarget.channel_id,
    PostTarget.provider,
    PostTarget.content_kind,
    PostTarget.text_override,
    PostTarget.media_ids_override,
    PostTarget.options,
    PostTarget.status,
    PostTarget.published_at,
    PostTarget.provider_post_id,
    PostTarget.url,
    PostTarget.attempts,
    PostTarget.error_code,
    PostTarget.error_message,
    PostTarget.error_retryable,
)
# The statements of a page's targets and labels, built once: SQLAlchemy then reuses their
# compiled form, and the ids of the page are bound as one expanding parameter.
_PAGE_IDS: BindParameter[Any] = bindparam("post_ids", expanding=True)
_TARGET_ROWS = (
    select(*_TARGET_VIEW_COLUMNS)
    .where(PostTarget.post_id.in_(_PAGE_IDS))
    .order_by(PostTarget.post_id, PostTarget.created_at, PostTarget.id)
)
_LABELS = union_all(
    select(literal("t").label("kind"), PostTag.post_id, PostTag.value, PostTag.position).where(
        PostTag.post_id.in_(_PAGE_IDS)
    ),
    select(
        literal("p").label("kind"), PostTopic.post_id, PostTopic.value, PostTopic.position
    ).where(PostTopic.post_id.in_(_PAGE_IDS)),
)


async def lock_posts(
    session: AsyncSession, post_ids: Collection[uuid.UUID]
) -> dict[uuid.UUID, Post]:
    """The posts by id, row-locked in id order (one order everywhere: no deadlocks)."""
    if not post_ids:
        return {}
    statement = select(Post).where(Post.id.in_(sorted(post_ids))).order_by(Post.id)
    return await rows_by_id(session, statement, lock=True)


async def targets_of(
    session: AsyncSession, post_ids: Collection[uuid.UUID], *, for_update: bool = False
) -> dict[uuid.UUID, list[PostTarget]]:
    """Each post's targets in the order they were added."""
    found: dict[uuid.UUID, list[PostTarget]] = {post_id: [] for post_id in post_ids}
    if not post_ids:
        return found
    statement = (
        select(PostTarget)
        .where(PostTarget.post_id.in_(list(post_ids)))
        .order_by(PostTarget.post_id, PostTarget.created_at, PostTarget.id)
    )
    statement = locked(session, statement, lock=for_update)
    for target in await session.scalars(statement):
        found[target.post_id].append(target)
    return found


async def target_rows_of(
    session: AsyncSession, post_ids: Collection[uuid.UUID]
) -> dict[uuid.UUID, list[Any]]:
    """Each post's targets in the order they were added, as rows of the columns their views
    show (no objects: nothing is loaded into the session)."""
    found: dict[uuid.UUID, list[Any]] = {post_id: [] for post_id in post_ids}
    if not post_ids:
        return found
    for target in await session.execute(_TARGET_ROWS, {"post_ids": list(post_ids)}):
        found[target.post_id].append(target)
    return found


async def posts_with_targets_on(
    session: AsyncSession, channel_id: uuid.UUID, statuses: Collection[str]
) -> set[uuid.UUID]:
    """The live posts with a target on the channel in one of `statuses` (no lock taken)."""
    rows = await session.execute(
        select(PostTarget.post_id)
        .join(Post, Post.id == PostTarget.post_id)
        .where(
            PostTarget.channel_id == channel_id,
            PostTarget.status.in_(sorted(statuses)),
            Post.deleted_at.is_(None),
        )
    )
    return set(rows.scalars())


async def tags_and_topics_of(
    session: AsyncSession, post_ids: Collection[uuid.UUID]
) -> tuple[dict[uuid.UUID, list[str]], dict[uuid.UUID, list[str]]]:
    """Each post's campaign tags and topics, in their order, in one round trip."""
    tags: dict[uuid.UUID, list[str]] = defaultdict(list)
    topics: dict[uuid.UUID, list[str]] = defaultdict(list)
    if not post_ids:
        return tags, topics
    found = await session.execute(_LABELS, {"post_ids": list(post_ids)})
    rows = sorted(found, key=lambda row: (row[0], row[1], row[3]))
    for kind, post_id, value, _ in rows:
        (tags if kind == "t" else topics)[post_id].append(value)
    return tags, topics


async def replace_labels(
    session: AsyncSession, model: LabelModel, post: Post, values: Sequence[str]
) -> None:
    await session.execute(delete(model).where(model.post_id == post.id))
    await add_labels(session, model, post, values)


async def add_labels(
    session: AsyncSession, model: LabelModel, post: Post, values: Sequence[str]
) -> None:
    """Label a post that has none yet (a new one)."""
    if values:
        await session.execute(
            insert(table_of(model)), _label_rows(post.id, post.organization_id, values)
        )


def _label_rows(
    post_id: uuid.UUID, organization_id: uuid.UUID, values: Sequence[str]
) -> list[dict[str, Any]]:
    return [
        {"post_id": post_id, "organization_id": organization_id, "value": value, "position": n}
        for n, value in enumerate(values)
    ]


# Sent with the transaction's next statement on SQLite (kit/sqlite_connection.py).
_INSERT_POST = write_behind(insert(table_of(Post)))
_INSERT_TARGETS = write_behind(insert(table_of(PostTarget)))
_INSERT_TAGS = write_behind(insert(table_of(PostTag)))
_INSERT_TOPICS = write_behind(insert(table_of(PostTopic)))


async def insert_new_post(
    session: AsyncSession,
    post: Post,
    targets: Sequence[PostTarget],
    tags: Sequence[str],
    topics: Sequence[str],
) -> None:
    """Write a new post, its targets and its labels as they are (Core statements, one per
    table, without the unit of work: the objects stay outside the session)."""
    await session.execute(_INSERT_POST, new_row(post))
    await session.execute(_INSERT_TARGETS, [new_row(target) for target in targets])
    if tags:
        await session.execute(_INSERT_TAGS, _label_rows(post.id, post.organization_id, tags))
    if topics:
        await session.execute(_INSERT_TOPICS, _label_rows(post.id, post.organization_id, topics))


_ColumnDefaults = list[tuple[str, Any]]
_COLUMNS: dict[type[Any], _ColumnDefaults] = {}


def new_row(instance: Post | PostTarget) -> dict[str, Any]:
    """A new object's row as its flush would insert it: every column, the attributes set as
    they are, an unset one its column's default (set on the object too), else NULL."""
    model = type(instance)
    columns = _COLUMNS.get(model)
    if columns is None:
        columns = _COLUMNS[model] = [
            (column.key, column.default) for column in table_of(model).columns
        ]
    state = instance.__dict__
    row: dict[str, Any] = {}
    for key, default in columns:
        if key in state:
            row[key] = state[key]
        elif default is None:
            row[key] = None
        else:
            value = default.arg(None) if default.is_callable else default.arg
            setattr(instance, key, value)
            row[key] = value
    return row


@cache
def _list_statement(dialect: str, bound: frozenset[str]) -> Select[Any]:
    """listPosts' statement for the parameters `bound` (those of the filters given, and the
    keyset position's after a first page), built once a combination: SQLAlchemy then finds its
    compiled form without building and keying a new statement on every request."""
    posts = _POSTS.c

    def parameter(name: str, column: ColumnElement[Any]) -> BindParameter[Any]:
        return bindparam(name, type_=column.type)

    # Core columns, not the mapped class's: the page needs no ORM, whose compile step for a
    # statement of mapped attributes cost more than running it.
    statement = select(post_document(dialect), posts.created_at, posts.id).where(
        posts.organization_id == parameter("organization_id", posts.organization_id),
        posts.deleted_at.is_(None),
    )
    if "status" in bound:
        statement = statement.where(posts.status == parameter("status", posts.status))
    if "channel_id" in bound:
        targets = table_of(PostTarget).c
        statement = statement.where(
            exists().where(
                targets.post_id == posts.id,
                targets.channel_id == parameter("channel_id", targets.channel_id),
            )
        )
    if "tag" in bound:
        tags = table_of(PostTag).c
        statement = statement.where(
            exists().where(tags.post_id == posts.id, tags.value == parameter("tag", tags.value))
        )
    if "start" in bound:
        statement = statement.where(post_date() >= parameter("start", posts.created_at))
    if "end" in bound:
        statement = statement.where(post_date() < parameter("end", posts.created_at))
    if "after_created" in bound:
        statement = statement.where(
            tuple_(posts.created_at, posts.id)
            < tuple_(parameter("after_created", posts.created_at), parameter("after_id", posts.id))
        )
    return statement.order_by(posts.created_at.desc(), posts.id.desc()).limit(
        bindparam("limit", type_=Integer())
    )


def _exclusive_end(end: datetime | None) -> datetime | None:
    """listPosts' `end` is inclusive at the precision of every time the API shows
    (milliseconds): an `end` copied from a `publishedAt` includes that post, whose stored time
    has microseconds. None where it bounds nothing (an `end` in the last millisecond of 9999:
    there is no later instant)."""
    if end is None or end >= _LAST_MILLISECOND:
        return None
    return end.replace(microsecond=end.microsecond // 1000 * 1000) + timedelta(milliseconds=1)


class PostFilters(NamedTuple):
    """listPosts' filters; None: not filtered by it."""

    status: str | None = None
    channel_id: uuid.UUID | None = None
    tag: str | None = None
    start: datetime | None = None
    end: datetime | None = None


def list_query(
    dialect: str,
    organization_id: uuid.UUID,
    filters: PostFilters,
    *,
    limit: int,
    after: tuple[datetime, uuid.UUID] | None = None,
) -> tuple[Select[Any], dict[str, Any]]:
    """The posts listPosts shows, newest first, at most `limit`, after the keyset position
    `after` (created_at, id): a statement whose rows are each post's wire form in JSON text
    (`document`) with its `created_at` and `id`, and its parameters."""
    bounds = filters._replace(end=_exclusive_end(filters.end))._asdict()
    parameters = {name: value for name, value in bounds.items() if value is not None}
    parameters.update(organization_id=organization_id, limit=limit)
    if after is not None:
        parameters["after_created"], parameters["after_id"] = after
    return _list_statement(dialect, frozenset(parameters)), parameters
