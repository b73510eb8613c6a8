"""The report's SQL: every aggregate in one statement, run by the database (SQLite and
PostgreSQL alike), and one small statement for the details of the page of posts.

The statement builds, as common table expressions:

- `base`: one row per published target of a live post whose `publishedAt` lies in the
  range (period 0) or the comparison range (period 1; the two may overlap, and a target in
  both appears once in each), with its latest metric values (`target_metrics`, zero before
  the first snapshot). Range rows come from joining the bucket bounds computed in Python to
  `post_targets` on `published_at`: each row arrives with its time-series bucket, and each
  bucket is one index range scan.
- `cells`: the sums by (period, bucket, channel, content kind): few rows, from which the
  time series and the channel and content-kind sums are rolled up.
- `per_post`: the sums by (period, post), the one aggregation with a group per post; the
  page of posts, the totals and every post-level breakdown (models, approvals, campaigns,
  topics) come from it, with the posts' dimensions joined once per post.
- the distinct posts per channel and per content kind (a post may have several targets on
  one channel or of one kind), counted from `base`.

The sections are glued with UNION ALL into rows of one shape:

    (section, period, key, posts, first_at, raw metric sums...)

Derived metrics are computed from these sums, never averaged (analytics/metrics.py).

The same statement reads `analytics_facts` instead (`from_facts=True`) when the rollups are
up to date but cannot answer by addition (filtered queries: analytics/rollup_query.py): a
fact is exactly a published target of a live post with its latest metrics, so `base` is one
range scan of one table, with no join to the metrics and no look at deleted posts."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import CTE
from sqlalchemy import ColumnElement
from sqlalchemy import Float
from sqlalchemy import FromClause
from sqlalchemy import Integer
from sqlalchemy import Select
from sqlalchemy import String
from sqlalchemy import and_
from sqlalchemy import cast
from sqlalchemy import exists
from sqlalchemy import func
from sqlalchemy import literal
from sqlalchemy import null
from sqlalchemy import nulls_last
from sqlalchemy import select
from sqlalchemy import text
from sqlalchemy import union_all
from sqlalchemy.ext.asyncio import AsyncConnection

from pressroom.analytics.metrics import ENGAGEMENT_PARTS
from pressroom.analytics.metrics import RAW_METRICS
from pressroom.analytics.models import AnalyticsFact
from pressroom.analytics.models import TargetMetrics
from pressroom.analytics.params import AnalyticsQuery
from pressroom.channels.models import Channel
from pressroom.db import UTCDateTime
from pressroom.kit.schema import as_utc
from pressroom.posts.models import Post
from pressroom.posts.models import PostTag
from pressroom.posts.models import PostTarget
from pressroom.posts.models import PostTopic
from pressroom.runtime import Runtime

targets = PostTarget.__table__
posts = Post.__table__
latest = TargetMetrics.__table__
tags = PostTag.__table__
topics = PostTopic.__table__
channels = Channel.__table__
facts = AnalyticsFact.__table__

CURRENT, PREVIOUS = 0, 1
# For the report's transaction on PostgreSQL. The statement hashes a few hundred thousand
# rows: with the default 4 MB its hash tables spill to disk. And its cost estimate is far
# above jit_above_cost, but compiling it to machine code takes longer than running it.
REPORT_SETTINGS = text(
    "SELECT set_config('work_mem', '64MB', true), set_config('jit', 'off', true)"
)


@dataclass(frozen=True)
class AggregateRow:
    section: str
    period: int
    key: str | None
    posts: int | None  # distinct posts; for a page row, its 1-based rank
    first_at: datetime | None  # page rows: the earliest publishedAt of the post in range
    sums: dict[str, int]


@asynccontextmanager
async def report_connection(runtime: Runtime) -> AsyncIterator[AsyncConnection]:
    """A connection for the report's read-only statements, in one snapshot. PostgreSQL: a
    read-only repeatable-read transaction with the settings above, local to it. SQLite: a
    deferred transaction on the read engine."""
    if runtime.engine.dialect.name == "postgresql":
        async with runtime.engine.connect() as connection, connection.begin():
            # One snapshot for every statement of the report (the rollups, the facts and
            # the log are read by several).
            await connection.execute(
                text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            )
            await connection.execute(REPORT_SETTINGS)
            yield connection
    else:
        async with (
            (runtime.read_engine or runtime.engine).connect() as connection,
            connection.begin(),
        ):
            yield connection


def _filters(query: AnalyticsQuery, rows: FromClause) -> list[ColumnElement[bool]]:
    """The query's filters on a table of targets (`post_targets`, or `analytics_facts`, whose
    rows are published targets of live posts already): AND across parameters, OR within
    one."""
    conditions: list[ColumnElement[bool]] = []
    if query.channel_ids:
        conditions.append(rows.c.channel_id.in_(query.channel_ids))
    if query.content_kinds:
        conditions.append(rows.c.content_kind.in_(query.content_kinds))
    if query.tag_values:
        conditions.append(
            exists().where(tags.c.post_id == rows.c.post_id, tags.c.value.in_(query.tag_values))
        )
    return conditions


def _target_conditions(query: AnalyticsQuery) -> list[ColumnElement[bool]]:
    """Published targets of live posts of the organization, under the filters (AND across
    parameters, OR within one)."""
    conditions: list[ColumnElement[bool]] = [
        targets.c.status == "published",
        # Deleted posts are few: an anti-join against them (a partial index) is cheaper
        # than joining every post here; the post-level pass joins posts anyway.
        ~exists().where(posts.c.id == targets.c.post_id, posts.c.deleted_at.is_not(None)),
    ]
    return conditions + _filters(query, targets)


def _base_columns(rows: FromClause, metrics: list[Any], bucket: Any, period: int) -> list[Any]:
    """The columns of the base rows read from `rows` (targets or facts): the bucket and the
    period, what the target is reported by, and its `metrics`."""
    return [
        bucket.label("bucket"),
        literal(period, Integer).label("period"),
        rows.c.post_id,
        rows.c.channel_id,
        rows.c.content_kind,
        rows.c.published_at,
        *metrics,
    ]


def _in_bucket(rows: FromClause, organization_id: uuid.UUID, bounds: Any) -> ColumnElement[bool]:
    """Joins the organization's `rows` to the bucket (of `_bucket_bounds`) they fall in."""
    return and_(
        rows.c.organization_id == organization_id,
        rows.c.published_at >= bounds.c.lo,
        rows.c.published_at < bounds.c.hi,
    )


def _bucket_bounds(query: AnalyticsQuery) -> Any:
    rows = [
        select(
            literal(index, Integer).label("idx"),
            literal(bucket.start, UTCDateTime()).label("lo"),
            literal(bucket.upper, UTCDateTime()).label("hi"),
        )
        for index, bucket in enumerate(query.buckets)
    ]
    compound = union_all(*rows) if len(rows) > 1 else rows[0]
    return compound.subquery("bucket_bounds")


def _base(organization_id: uuid.UUID, query: AnalyticsQuery) -> CTE:
    """Target rows of both ranges with their latest metrics (see the module docstring)."""
    bounds = _bucket_bounds(query)
    metrics = [func.coalesce(latest.c[key], 0).label(key) for key in RAW_METRICS]

    def with_metrics(start: datetime, end: datetime) -> ColumnElement[bool]:
        # The range on `target_metrics` (its copy of publishedAt) lets the database read
        # only the range's latest values, not every value of the organization's history.
        return and_(
            latest.c.target_id == targets.c.id,
            latest.c.organization_id == organization_id,
            latest.c.published_at >= start,
            latest.c.published_at <= end,
        )

    current = (
        select(*_base_columns(targets, metrics, bounds.c.idx, CURRENT))
        .select_from(
            bounds.join(targets, _in_bucket(targets, organization_id, bounds)).outerjoin(
                latest, with_metrics(query.range.start, query.range.end)
            )
        )
        .where(
            # Implied by the buckets, but the planner cannot see through their bounds: said
            # outright, it estimates the rows of the range, and picks hash aggregates.
            targets.c.published_at >= query.range.start,
            targets.c.published_at <= query.range.end,
            *_target_conditions(query),
        )
    )
    if query.comparison is None:
        return current.cte("base")
    compared = query.comparison.range
    previous = (
        select(*_base_columns(targets, metrics, cast(null(), Integer), PREVIOUS))
        .select_from(targets.outerjoin(latest, with_metrics(compared.start, compared.end)))
        .where(
            targets.c.organization_id == organization_id,
            targets.c.published_at >= query.comparison.range.start,
            targets.c.published_at <= query.comparison.range.end,
            *_target_conditions(query),
        )
    )
    return union_all(current, previous).cte("base")


def _facts_base(organization_id: uuid.UUID, query: AnalyticsQuery) -> CTE:
    """`_base` read from `analytics_facts`: the same rows, one table."""
    metrics = [facts.c[key] for key in RAW_METRICS]

    def in_range(start: datetime, end: datetime) -> list[ColumnElement[bool]]:
        return [
            facts.c.organization_id == organization_id,
            facts.c.published_at >= start,
            facts.c.published_at <= end,
            *_filters(query, facts),
        ]

    bounds = _bucket_bounds(query)
    current = (
        select(*_base_columns(facts, metrics, bounds.c.idx, CURRENT))
        .select_from(bounds.join(facts, _in_bucket(facts, organization_id, bounds)))
        .where(*in_range(query.range.start, query.range.end))
    )
    if query.comparison is None:
        return current.cte("base")
    compared = query.comparison.range
    previous = select(*_base_columns(facts, metrics, cast(null(), Integer), PREVIOUS)).where(
        *in_range(compared.start, compared.end)
    )
    return union_all(current, previous).cte("base")


def _sums(source: Any) -> list[Any]:
    return [func.sum(source.c[key]).label(key) for key in RAW_METRICS]


def _row(name: str, period: Any, key: Any, posts: Any, source: Any, *, summed: bool = True) -> Any:
    """A select of the uniform row shape (section, period, key, posts, first_at, sums)."""
    return select(
        literal(name, String).label("section"),
        period.label("period"),
        cast(key, String).label("key"),
        posts.label("posts"),
        cast(null(), UTCDateTime()).label("first_at"),
        *(_sums(source) if summed else [source.c[key] for key in RAW_METRICS]),
    )


def _sort_key(post_sums: Any, sort_by: str) -> Any:
    if sort_by == "publishedAt":
        return post_sums.c.first_at
    engagements = sum((post_sums.c[key] for key in ENGAGEMENT_PARTS[1:]), post_sums.c.likes)
    if sort_by == "engagements":
        return engagements
    if sort_by == "engagementRate":
        return cast(engagements, Float) / func.nullif(post_sums.c.impressions, 0)
    return post_sums.c[sort_by]


def _page(per_post: CTE, query: AnalyticsQuery) -> Select[Any]:
    """One page of posts of the range, ranked by the sort field; ties by publishedAt, then
    by post id, in the same direction (a total order, so pages never overlap)."""
    descending = query.sort_order == "desc"
    keys = [_sort_key(per_post, query.sort_by)]
    if query.sort_by != "publishedAt":
        keys.append(per_post.c.first_at)
    keys.append(per_post.c.post_id)
    ordering = [nulls_last(k.desc() if descending else k.asc()) for k in keys]
    ranked = (
        select(per_post, func.row_number().over(order_by=ordering).label("rank"))
        .where(per_post.c.period == CURRENT)
        .subquery("ranked")
    )
    return select(
        literal("page", String).label("section"),
        ranked.c.period,
        cast(ranked.c.post_id, String).label("key"),
        ranked.c.rank.label("posts"),
        ranked.c.first_at,
        *[ranked.c[key] for key in RAW_METRICS],
    ).where(ranked.c.rank > query.offset, ranked.c.rank <= query.offset + query.page_size)


def _distinct_posts(base: CTE, dimension: str, name: str) -> Any:
    """Distinct posts per (period, dimension value): a hash DISTINCT, then a count."""
    pairs = (
        select(base.c.period, base.c[dimension], base.c.post_id)
        .distinct()
        .subquery(f"{name}_pairs")
    )
    return (
        select(pairs.c.period, pairs.c[dimension], func.count().label("posts"))
        .group_by(pairs.c.period, pairs.c[dimension])
        .subquery(f"{name}_posts")
    )


def _target_breakdown(base: CTE, cells: CTE, dimension: str, name: str) -> Any:
    """Channels or content kinds: sums from the cells, distinct posts from `base`."""
    summed = (
        select(cells.c.period, cells.c[dimension], *_sums(cells))
        .group_by(cells.c.period, cells.c[dimension])
        .subquery(f"{name}_sums")
    )
    counted = _distinct_posts(base, dimension, name)
    joined = summed.join(
        counted,
        and_(summed.c.period == counted.c.period, summed.c[dimension] == counted.c[dimension]),
    )
    return _row(
        name, summed.c.period, summed.c[dimension], counted.c.posts, summed, summed=False
    ).select_from(joined)


def aggregate_statement(
    organization_id: uuid.UUID, query: AnalyticsQuery, *, from_facts: bool = False
) -> Select[Any]:
    """Every aggregate of the report in one statement (see the module docstring)."""
    base = (_facts_base if from_facts else _base)(organization_id, query)
    # Few groups: the sums by time bucket, channel and content kind, rolled up below.
    cells = (
        select(base.c.period, base.c.bucket, base.c.channel_id, base.c.content_kind, *_sums(base))
        .group_by(base.c.period, base.c.bucket, base.c.channel_id, base.c.content_kind)
        .cte("cells")
    )
    # The one pass with a group per post: its sums and first publication in each period.
    per_post = (
        select(
            base.c.period,
            base.c.post_id,
            func.min(base.c.published_at).label("first_at"),
            *_sums(base),
        )
        .group_by(base.c.period, base.c.post_id)
        .cte("per_post")
    )
    # The posts' dimensions joined once per post (not per target), after the aggregation.
    of_post = and_(posts.c.id == per_post.c.post_id, posts.c.organization_id == organization_id)
    dims = (
        select(
            per_post.c.period,
            posts.c.model,
            posts.c.approval_status,
            func.count().label("posts"),
            *_sums(per_post),
        )
        .select_from(per_post.join(posts, of_post))
        .group_by(per_post.c.period, posts.c.model, posts.c.approval_status)
        .cte("dims")
    )
    tag_join = and_(tags.c.post_id == per_post.c.post_id, tags.c.organization_id == organization_id)
    if query.tag_values:
        # With a campaign filter, the campaign rows are the campaigns asked for.
        tag_join = and_(tag_join, tags.c.value.in_(query.tag_values))
    topic_join = and_(
        topics.c.post_id == per_post.c.post_id, topics.c.organization_id == organization_id
    )
    parts = [
        _page(per_post, query),
        _row("totals", dims.c.period, null(), func.sum(dims.c.posts), dims).group_by(dims.c.period),
        _row("timeseries", cells.c.period, cells.c.bucket, null(), cells)
        .where(cells.c.period == CURRENT)
        .group_by(cells.c.period, cells.c.bucket),
        _target_breakdown(base, cells, "channel_id", "channels"),
        _target_breakdown(base, cells, "content_kind", "contentKinds"),
        _row("models", dims.c.period, dims.c.model, func.sum(dims.c.posts), dims).group_by(
            dims.c.period, dims.c.model
        ),
        _row(
            "approvals", dims.c.period, dims.c.approval_status, func.sum(dims.c.posts), dims
        ).group_by(dims.c.period, dims.c.approval_status),
        # Tags and topics joined to the posts separately (not as one union): the planner
        # knows how many rows each table has per post, and hashes instead of sorting.
        _row("campaigns", per_post.c.period, tags.c.value, func.count(), per_post)
        .select_from(per_post.join(tags, tag_join))
        .group_by(per_post.c.period, tags.c.value),
        _row("topics", per_post.c.period, topics.c.value, func.count(), per_post)
        .select_from(per_post.join(topics, topic_join))
        .group_by(per_post.c.period, topics.c.value),
    ]
    return union_all(*parts)  # type: ignore[return-value]


async def run_aggregates(
    connection: AsyncConnection,
    organization_id: uuid.UUID,
    query: AnalyticsQuery,
    *,
    from_facts: bool = False,
) -> list[AggregateRow]:
    result = await connection.execute(
        aggregate_statement(organization_id, query, from_facts=from_facts)
    )
    rows: list[AggregateRow] = []
    for row in result:
        first_at = row.first_at
        if isinstance(first_at, str):  # SQLite returns MIN() of a text column as text
            first_at = datetime.fromisoformat(first_at)
        rows.append(
            AggregateRow(
                section=row.section,
                period=int(row.period),
                key=row.key,
                posts=None if row.posts is None else int(row.posts),
                first_at=None if first_at is None else as_utc(first_at),
                sums={key: int(row._mapping[key] or 0) for key in RAW_METRICS},
            )
        )
    return rows
