"""The report from the pre-aggregated rows (analytics/rollups.py), equal to the raw scan of
analytics/query.py to the unit.

The time series: each bucket of a period (cut at local midnights) is read from the `all`
rows of the whole UTC days in it, the `all` rows of the whole UTC hours left, and the
per-target facts for what is left at its ends (less than an hour on each side: the range's
own ends, and the midnights of zones whose offset is not whole hours, such as
Asia/Kathmandu's +05:45). The totals and breakdowns: the whole period from the day rows of
every dimension, and the facts of the partial days at its two ends.

Post counts: every fact that is the first of its post (overall, on its channel, of its kind)
counts the post once where it was published. A post counted before `start` that reaches into
the period is added back: such a post began at most the organization's longest
first-to-last publication gap before `start`, so few facts are read for it. The page of
posts ranks the posts wholly inside the period by their summed rows (one index range) and
merges the few that cross an end of it, summed over their facts in the period.

Queries with filters are not assembled from the rows: post counts under a filter do not add
up from per-value rows (a post on two filtered channels is one post). They are answered by
the raw statement run over the facts (analytics/query.py, `from_facts`): one table, already
restricted to what reports count."""

from __future__ import annotations

import itertools
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from sqlalchemy import (
    Float,
    Integer,
    SmallInteger,
    String,
    and_,
    case,
    cast,
    func,
    literal,
    nulls_last,
    or_,
    select,
    text,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from pressroom.analytics.metrics import ENGAGEMENT_PARTS, RAW_METRICS, derive
from pressroom.analytics.params import AnalyticsQuery
from pressroom.analytics.query import (
    CURRENT,
    PREVIOUS,
    AggregateRow,
    run_aggregates,
    tags,
    topics,
)
from pressroom.analytics.rollups import (
    DAY,
    DAY_GRAIN,
    HOUR,
    HOUR_GRAIN,
    MONTH_GRAIN,
    Fact,
    day_of,
    dirty,
    fact_from_row,
    facts,
    hour_of,
    month_of,
    next_month,
    post_facts,
    rollups,
)
from pressroom.kit.schema import as_utc

SECTIONS: Final = {
    "all": "totals",
    "channel": "channels",
    "kind": "contentKinds",
    "model": "models",
    "approval": "approvals",
    "tag": "campaigns",
    "topic": "topics",
}
_WIDTH: Final = 2 + len(RAW_METRICS)  # targets, posts, metric sums


@dataclass(frozen=True)
class Period:
    number: int  # CURRENT or PREVIOUS
    start: datetime
    end: datetime  # inclusive
    # Bucket starts (current period; one bucket for the comparison).
    starts: tuple[datetime, ...]

    def bucket_of(self, moment: datetime) -> int:
        index = 0
        for position, start in enumerate(self.starts):
            if start <= moment:
                index = position
        return index if self.number == CURRENT else -1


@dataclass
class Tally:
    """Sums by (period, bucket or -1, dimension, value): [targets, posts, metrics...]."""

    cells: dict[tuple[int, int, str, str], list[int]] = field(default_factory=dict)

    def add(self, key: tuple[int, int, str, str], values: Iterable[int]) -> None:
        cell = self.cells.setdefault(key, [0] * _WIDTH)
        for index, value in enumerate(values):
            cell[index] += value


def _floor(moment: datetime, unit: timedelta) -> datetime:
    return hour_of(moment) if unit == HOUR else day_of(moment)


def _ceil(moment: datetime, unit: timedelta) -> datetime:
    floor = _floor(moment, unit)
    # In the last hour or day of year 9999 there is no next boundary: the calendar's end
    # stands in for it, so the rest of the period is read from the facts.
    return floor if floor == moment else _shift(floor, unit)


def _just_after(moment: datetime) -> datetime:
    try:
        return moment + timedelta(microseconds=1)
    except OverflowError:
        return moment  # the last representable instant: nothing is published after it


def _shift(moment: datetime, delta: timedelta) -> datetime:
    """`moment + delta`, held at the ends of the calendar."""
    try:
        return moment + delta
    except OverflowError:
        return (
            datetime.max.replace(tzinfo=UTC)
            if delta > timedelta(0)
            else datetime.min.replace(tzinfo=UTC)
        )


def periods_of(query: AnalyticsQuery) -> list[Period]:
    found = [
        Period(
            CURRENT,
            query.range.start,
            query.range.end,
            tuple(bucket.start for bucket in query.buckets),
        )
    ]
    if query.comparison is not None:
        compared = query.comparison.range
        found.append(Period(PREVIOUS, compared.start, compared.end, (compared.start,)))
    return found


# What a range of rows or of facts is read for: the `all` rows by time-series bucket, or the
# other dimensions over the whole period.
SERIES, BREAKDOWNS = 0, 1
# (period, bucket, scope, grain, from, to): rows, or with grain -1, facts, from the
# inclusive start to the exclusive end.
Piece = tuple[int, int, int, int, datetime, datetime]
FACTS = -1


def _cover(
    period: Period, bucket: int, scope: int, lo: datetime, hi: datetime, *, hours: bool
) -> list[Piece]:
    """[lo, hi) as whole UTC months of rows, then whole days, then whole hours (when
    `hours`), then facts for what is left at either end: the fewest rows that cover it."""
    number = period.number
    unit = HOUR if hours else DAY
    inner_lo, inner_hi = _ceil(lo, unit), _floor(hi, unit)
    if inner_lo >= inner_hi:
        return [(number, bucket, scope, FACTS, lo, hi)]
    pieces: list[Piece] = []
    if lo < inner_lo:
        pieces.append((number, bucket, scope, FACTS, lo, inner_lo))
    if inner_hi < hi:
        pieces.append((number, bucket, scope, FACTS, inner_hi, hi))
    first_day, last_day = _ceil(inner_lo, DAY), _floor(inner_hi, DAY)
    if first_day >= last_day:
        return [*pieces, (number, bucket, scope, HOUR_GRAIN, inner_lo, inner_hi)]
    if inner_lo < first_day:
        pieces.append((number, bucket, scope, HOUR_GRAIN, inner_lo, first_day))
    if last_day < inner_hi:
        pieces.append((number, bucket, scope, HOUR_GRAIN, last_day, inner_hi))
    first_month, last_month = month_of(first_day), month_of(last_day)
    if first_month < first_day and first_month < last_month:
        first_month = next_month(first_month)  # (never past the year 9999: < last_month)
    if first_month >= last_month or first_month < first_day:
        return [*pieces, (number, bucket, scope, DAY_GRAIN, first_day, last_day)]
    pieces.append((number, bucket, scope, MONTH_GRAIN, first_month, last_month))
    if first_day < first_month:
        pieces.append((number, bucket, scope, DAY_GRAIN, first_day, first_month))
    if last_month < last_day:
        pieces.append((number, bucket, scope, DAY_GRAIN, last_month, last_day))
    return pieces


def _pieces(period: Period) -> list[Piece]:
    """The rows and facts that cover the period exactly: for the time series, each bucket
    (cut at local midnights) in days, hours and facts; for the breakdowns, the whole period
    in days and facts."""
    after = _just_after(period.end)
    cuts = [
        period.start,
        *[s for s in period.starts[1:] if period.start < s <= period.end],
        after,
    ]
    pieces: list[Piece] = []
    for lo, hi in itertools.pairwise(cuts):
        pieces += _cover(period, period.bucket_of(lo), SERIES, lo, hi, hours=True)
    return pieces + _cover(period, -1, BREAKDOWNS, period.start, after, hours=False)


async def has_log(connection: AsyncConnection, organization_id: uuid.UUID) -> bool:
    found = await connection.execute(
        select(dirty.c.id).where(dirty.c.organization_id == organization_id).limit(1)
    )
    return found.first() is not None


def _in_pieces(table: Any, time: str, pieces: list[Piece], *conditions: Any) -> Any:
    """The rows of `table` in the pieces, with their piece's (period, bucket, scope): one
    branch per period and scope (whose pieces never overlap), its rows found by an OR of
    index ranges and given their bucket by the same ranges. The conditions are repeated in
    every term of the OR: SQLite reads an OR by index only when each term is an index
    range of its own."""
    branches = []
    groups: dict[tuple[int, int], list[Piece]] = defaultdict(list)
    for piece in pieces:
        groups[(piece[0], piece[2])].append(piece)
    for (period, scope), group in groups.items():
        matches = [
            and_(
                *conditions,
                *([table.c.grain == grain] if grain != FACTS else []),
                table.c[time] >= lo,
                table.c[time] < hi,
            )
            for _, _, _, grain, lo, hi in group
        ]
        bucket = case(
            *[
                (match, literal(piece[1], Integer))
                for match, piece in zip(matches, group, strict=True)
            ],
            else_=literal(-1, Integer),
        )
        branches.append(
            select(
                literal(period, Integer).label("period"),
                bucket.label("bucket"),
                literal(scope, SmallInteger).label("scope"),
                *table.c,
            ).where(or_(*matches))
        )
    return (union_all(*branches) if len(branches) > 1 else branches[0]).subquery("pieces")


def _sums(source: Any) -> list[Any]:
    return [func.sum(source.c[key]) for key in RAW_METRICS]


async def _read_rollups(
    connection: AsyncConnection, organization_id: uuid.UUID, pieces: list[Piece], tally: Tally
) -> None:
    """The rows of the pieces: the time series' `all` rows, the breakdowns' rows of every
    other dimension."""
    if not pieces:
        return
    parts: list[Any] = []
    for scope, dimensions in (
        (SERIES, ["all"]),
        (BREAKDOWNS, [d for d in SECTIONS if d != "all"]),
    ):
        scoped = [p for p in pieces if p[2] == scope]
        if not scoped:
            continue
        rows = _in_pieces(
            rollups,
            "slot_start",
            scoped,
            rollups.c.organization_id == organization_id,
            rollups.c.dimension.in_(dimensions),
        )
        keys = [rows.c.period, rows.c.bucket, rows.c.dimension, rows.c.value]
        parts.append(
            select(*keys, func.sum(rows.c.targets), func.sum(rows.c.posts), *_sums(rows)).group_by(
                *keys
            )
        )
    statement: Any = union_all(*parts) if len(parts) > 1 else parts[0]
    _add_rows(tally, await connection.execute(statement))


def _add_rows(tally: Tally, result: Any) -> None:
    """Rows of (period, bucket, dimension, value, targets, posts, metric sums...)."""
    for row in result:
        key = (int(row[0]), int(row[1]), str(row[2]), str(row[3]))
        tally.add(key, (int(amount or 0) for amount in row[4:]))


# The dimensions of a fact's own columns, and which of its flags counts its post for each.
_FACT_DIMENSIONS: Final = (
    ("channel", "channel_id", "first_on_channel"),
    ("kind", "content_kind", "first_of_kind"),
    ("model", "model", "first_of_post"),
    ("approval", "approval_status", "first_of_post"),
)
_FLAGS: Final = ("first_of_post", "first_on_channel", "first_of_kind")


async def _read_facts(
    connection: AsyncConnection, organization_id: uuid.UUID, pieces: list[Piece], tally: Tally
) -> None:
    """The facts of the pieces, summed in the database: by their own columns, and joined to
    the posts' campaign tags and topics (which equal the facts' own while the log is
    empty, as it is when the rollups answer)."""
    if not pieces:
        return
    rows = _in_pieces(facts, "published_at", pieces, facts.c.organization_id == organization_id)
    keys = [rows.c.period, rows.c.bucket, rows.c.scope]
    keys += [rows.c[column] for _, column, _ in _FACT_DIMENSIONS]
    own = select(
        *keys, func.count(), *[func.sum(rows.c[flag]) for flag in _FLAGS], *_sums(rows)
    ).group_by(*keys)
    for row in await connection.execute(own):
        period, bucket, scope, *values = row[: 3 + len(_FACT_DIMENSIONS)]
        targets, *counted = row[3 + len(_FACT_DIMENSIONS) : 7 + len(_FACT_DIMENSIONS)]
        metrics = [int(v or 0) for v in row[7 + len(_FACT_DIMENSIONS) :]]
        if scope == SERIES:
            tally.add((int(period), int(bucket), "all", ""), [int(targets), counted[0], *metrics])
            continue
        posts = dict(zip(_FLAGS, counted, strict=True))
        for (dimension, _, flag), value in zip(_FACT_DIMENSIONS, values, strict=True):
            key = (int(period), int(bucket), dimension, "" if value is None else str(value))
            tally.add(key, [int(targets), int(posts[flag]), *metrics])
    breakdowns = [p for p in pieces if p[2] == BREAKDOWNS]
    if not breakdowns:
        return
    labelled = []
    for dimension, table in (("tag", tags), ("topic", topics)):
        rows = _in_pieces(
            facts, "published_at", breakdowns, facts.c.organization_id == organization_id
        )
        keys = [rows.c.period, rows.c.bucket, table.c.value]
        labelled.append(
            select(
                *keys[:2],
                literal(dimension, String),
                table.c.value,
                func.count(),
                func.sum(rows.c.first_of_post),
                *_sums(rows),
            )
            .select_from(rows.join(table, table.c.post_id == rows.c.post_id))
            .group_by(*keys)
        )
    _add_rows(tally, await connection.execute(union_all(*labelled)))


async def _facts_where(connection: AsyncConnection, *conditions: Any) -> list[Fact]:
    result = await connection.execute(select(facts).where(*conditions))
    return [fact_from_row(row) for row in result]


async def _longest_gap(connection: AsyncConnection, organization_id: uuid.UUID) -> timedelta:
    found = await connection.execute(
        select(func.max(facts.c.lag_us)).where(facts.c.organization_id == organization_id)
    )
    return timedelta(microseconds=int(found.scalar() or 0))


def _in(period: Period, fact: Fact) -> bool:
    return period.start <= fact.published_at <= period.end


def _add_back(tally: Tally, period: Period, post: list[Fact]) -> None:
    """A post counted before the period's start: count it for each dimension value it has
    a fact of inside the period, where its counting fact lies before the start."""
    counted_before = {
        (dimension, value)
        for fact in post
        if fact.published_at < period.start
        for dimension, value, counts in fact.dimensions()
        if counts
    }
    inside = {
        (dimension, value)
        for fact in post
        if _in(period, fact)
        for dimension, value, _ in fact.dimensions()
    }
    for dimension, value in counted_before & inside:
        tally.add((period.number, -2, dimension, value), [0, 1])


@dataclass
class Straddlers:
    """Posts with facts both inside and outside the current period, by post."""

    posts: dict[uuid.UUID, list[Fact]] = field(default_factory=dict)


async def tally_periods(
    connection: AsyncConnection, organization_id: uuid.UUID, periods: list[Period]
) -> tuple[Tally, Straddlers]:
    tally = Tally()
    pieces = [piece for period in periods for piece in _pieces(period)]
    await _read_rollups(connection, organization_id, [p for p in pieces if p[3] != FACTS], tally)
    await _read_facts(connection, organization_id, [p for p in pieces if p[3] == FACTS], tally)
    # Posts crossing a period's start (counted before it), and the current period's end.
    gap = await _longest_gap(connection, organization_id)
    crossing: list[Any] = []
    current = periods[0]
    if gap:
        # The organization in every term of the OR (see `_in_pieces`).
        mine = facts.c.organization_id == organization_id
        for period in periods:
            crossing.append(
                and_(
                    mine,
                    facts.c.published_at >= period.start,
                    facts.c.published_at <= min(period.end, _shift(period.start, gap)),
                    facts.c.post_first_at < period.start,
                )
            )
        crossing.append(
            and_(
                mine,
                facts.c.post_first_at >= max(current.start, _shift(current.end, -gap)),
                facts.c.post_first_at <= current.end,
                facts.c.published_at > current.end,
                facts.c.published_at <= _shift(current.end, gap),
            )
        )
    straddlers = Straddlers()
    if crossing:
        posts = select(facts.c.post_id).where(or_(*crossing))
        by_post: dict[uuid.UUID, list[Fact]] = defaultdict(list)
        for fact in await _facts_where(connection, facts.c.post_id.in_(posts)):
            by_post[fact.post_id].append(fact)
        for post in by_post.values():
            for period in periods:
                _add_back(tally, period, post)
            inside = [fact for fact in post if _in(current, fact)]
            if inside and len(inside) < len(post):
                straddlers.posts[post[0].post_id] = inside
    return tally, straddlers


def aggregate_rows(tally: Tally) -> list[AggregateRow]:
    """The tally as the rows of the raw statement (analytics/query.py)."""
    merged: dict[tuple[int, str, str], list[int]] = {}
    series: dict[int, list[int]] = {}
    for (period, bucket, dimension, value), cell in tally.cells.items():
        target = merged.setdefault((period, dimension, value), [0] * _WIDTH)
        for index, amount in enumerate(cell):
            target[index] += amount
        if dimension == "all" and period == CURRENT and bucket >= 0:
            row = series.setdefault(bucket, [0] * _WIDTH)
            for index, amount in enumerate(cell):
                row[index] += amount
    rows = []
    for (period, dimension, value), cell in merged.items():
        if cell[0] <= 0:
            continue  # no target of the period: no row (as in the raw scan)
        key: str | None = value
        if dimension == "all" or (dimension == "model" and value == ""):
            key = None
        rows.append(
            AggregateRow(
                section=SECTIONS[dimension],
                period=period,
                key=key,
                posts=cell[1],
                first_at=None,
                sums=dict(zip(RAW_METRICS, cell[2:], strict=True)),
            )
        )
    for bucket, cell in series.items():
        if cell[0] > 0:
            rows.append(
                AggregateRow(
                    section="timeseries",
                    period=CURRENT,
                    key=str(bucket),
                    posts=None,
                    first_at=None,
                    sums=dict(zip(RAW_METRICS, cell[2:], strict=True)),
                )
            )
    return rows


@dataclass(frozen=True)
class _Ranked:
    post_id: uuid.UUID
    first_at: datetime
    sums: dict[str, int]


def _metric(sort_by: str, sums: dict[str, int], first_at: datetime) -> Any:
    if sort_by == "publishedAt":
        return first_at
    return derive(sums)[sort_by]


def _order(items: list[_Ranked], query: AnalyticsQuery) -> list[_Ranked]:
    """The raw statement's order: the sort field, then publishedAt, then post id, all in
    the requested direction; nulls last."""
    descending = query.sort_order == "desc"

    def key(item: _Ranked) -> tuple[Any, ...]:
        value = _metric(query.sort_by, item.sums, item.first_at)
        parts = [value] if query.sort_by == "publishedAt" else [value, item.first_at]
        return (*parts, str(item.post_id))

    present = [i for i in items if _metric(query.sort_by, i.sums, i.first_at) is not None]
    missing = [i for i in items if _metric(query.sort_by, i.sums, i.first_at) is None]
    present.sort(key=key, reverse=descending)
    missing.sort(key=lambda i: (i.first_at, str(i.post_id)), reverse=descending)
    return present + missing


def _sql_order(query: AnalyticsQuery) -> list[Any]:
    descending = query.sort_order == "desc"
    engagements = sum((post_facts.c[key] for key in ENGAGEMENT_PARTS[1:]), post_facts.c.likes)
    keys: list[Any]
    if query.sort_by == "publishedAt":
        keys = [post_facts.c.first_at]
    else:
        if query.sort_by == "engagements":
            lead: Any = engagements
        elif query.sort_by == "engagementRate":
            lead = cast(engagements, Float) / func.nullif(post_facts.c.impressions, 0)
        else:
            lead = post_facts.c[query.sort_by]
        keys = [lead, post_facts.c.first_at]
    keys.append(post_facts.c.post_id)
    return [nulls_last(k.desc() if descending else k.asc()) for k in keys]


async def page_rows(
    connection: AsyncConnection,
    organization_id: uuid.UUID,
    query: AnalyticsQuery,
    straddlers: Straddlers,
) -> list[AggregateRow]:
    """The page of posts: the best of the posts wholly in range (by their summed rows, in
    the database) merged with the posts crossing its ends (summed over their facts inside)."""
    wanted = query.offset + query.page_size
    start, end = query.range.start, query.range.end
    result = await connection.execute(
        select(post_facts)
        .where(
            post_facts.c.organization_id == organization_id,
            post_facts.c.first_at >= start,
            post_facts.c.first_at <= end,
            post_facts.c.last_at <= end,
        )
        .order_by(*_sql_order(query))
        .limit(wanted)
    )
    items = [
        _Ranked(
            post_id=row.post_id,
            first_at=as_utc(row.first_at),
            sums={key: int(row._mapping[key]) for key in RAW_METRICS},
        )
        for row in result
    ]
    for post_id, inside in straddlers.posts.items():
        items.append(
            _Ranked(
                post_id=post_id,
                first_at=min(fact.published_at for fact in inside),
                sums={key: sum(fact.values[key] for fact in inside) for key in RAW_METRICS},
            )
        )
    ranked = _order(items, query)[query.offset : wanted]
    return [
        AggregateRow(
            section="page",
            period=CURRENT,
            key=str(item.post_id),
            posts=query.offset + position + 1,
            first_at=item.first_at,
            sums=item.sums,
        )
        for position, item in enumerate(ranked)
    ]


def answerable(query: AnalyticsQuery) -> bool:
    """Whether the rollup rows answer this query by addition (no filters; see the module
    docstring)."""
    return not (query.channel_ids or query.tag_values or query.content_kinds)


async def run_rollups(
    connection: AsyncConnection, organization_id: uuid.UUID, query: AnalyticsQuery
) -> list[AggregateRow] | None:
    """The aggregate rows and the page from the rollups (or, under filters, from the facts),
    or None when they cannot answer (a log not yet applied)."""
    if await has_log(connection, organization_id):
        return None
    if not answerable(query):
        return await run_aggregates(connection, organization_id, query, from_facts=True)
    if connection.dialect.name == "postgresql":
        # Every statement below reads a few hundred rows by index: starting parallel
        # workers would cost more than the work (set for this transaction only).
        await connection.execute(
            text("SELECT set_config('max_parallel_workers_per_gather', '0', true)")
        )
    periods = periods_of(query)
    tally, straddlers = await tally_periods(connection, organization_id, periods)
    return aggregate_rows(tally) + await page_rows(connection, organization_id, query, straddlers)


__all__ = ["PREVIOUS", "answerable", "run_rollups"]
