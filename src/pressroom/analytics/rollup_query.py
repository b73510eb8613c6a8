"""The report from the pre-aggregated rows (analytics/rollups.py), equal to the raw scan of
analytics/query.py to the unit.

A period [start, end] is cut into a middle of whole 15-minute UTC slots and two edges
shorter than a slot. The middle is cut again at the report's bucket boundaries (local
midnights, which fall on slot boundaries in every zone of today's tz database) and each
piece is read from the day rows for the whole UTC days in it and from the slot rows for the
rest. The edges come from the per-target facts.

Post counts: every fact that is the first of its post (overall, on its channel, of its kind)
counts the post once where it was published. A post counted before `start` that reaches into
the period is added back: such a post began at most the organization's longest
first-to-last publication gap before `start`, so few facts are read for it. The page of
posts ranks the posts wholly inside the period by their summed rows (one index range) and
merges the few that cross an end of it, summed over their facts in the period.

Queries with filters are answered by the raw scan: post counts under a filter do not add up
from per-value rows (a post on two filtered channels is one post)."""

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
    and_,
    cast,
    func,
    literal,
    nulls_last,
    or_,
    select,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from pressroom.analytics.metrics import ENGAGEMENT_PARTS, RAW_METRICS, derive
from pressroom.analytics.params import AnalyticsQuery
from pressroom.analytics.query import CURRENT, PREVIOUS, AggregateRow
from pressroom.analytics.rollups import (
    DAY,
    DAY_GRAIN,
    SLOT,
    SLOT_GRAIN,
    Fact,
    day_of,
    dirty,
    fact_from_row,
    facts,
    post_facts,
    rollups,
    slot_of,
)
from pressroom.db import UTCDateTime
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


# The ends of the calendar (years 1 and 9999, which a range may reach).
_EARLIEST: Final = datetime.min.replace(tzinfo=UTC)
_LATEST: Final = datetime.max.replace(tzinfo=UTC)


def _shifted(moment: datetime, delta: timedelta) -> datetime:
    """`moment + delta`, held at the ends of the calendar: past them there is nothing to
    read, and every bound made here is clipped to a period or compared with stored times."""
    try:
        return moment + delta
    except OverflowError:
        return _LATEST if delta > timedelta(0) else _EARLIEST


def _ceil(moment: datetime, unit: timedelta) -> datetime:
    floor = slot_of(moment) if unit == SLOT else day_of(moment)
    # In the last slot or day of year 9999 there is no next boundary: `_LATEST` stands in
    # for it, so the rest of the period is read from the facts.
    return floor if floor == moment else _shifted(floor, unit)


def periods_of(query: AnalyticsQuery) -> list[Period] | None:
    """The periods to read, or None when a bucket boundary is not on a slot boundary (a
    zone's local mean time of the 19th century): the raw scan answers those."""
    starts = tuple(bucket.start for bucket in query.buckets)
    if any(slot_of(start) != start for start in starts[1:]):
        return None
    found = [Period(CURRENT, query.range.start, query.range.end, starts)]
    if query.comparison is not None:
        compared = query.comparison.range
        found.append(Period(PREVIOUS, compared.start, compared.end, (compared.start,)))
    return found


def _pieces(period: Period) -> tuple[list[tuple[int, int, datetime, datetime]], list[Any]]:
    """(bucket, grain, from, to) ranges of rollup rows for the middle of the period, and the
    (from, to, inclusive) edges to read from the facts."""
    start, end = period.start, period.end
    low, high = _ceil(start, SLOT), slot_of(end)
    if low >= high:
        return [], [(start, end, True)]
    edges: list[Any] = [(high, end, True)]
    if start < low:
        edges.append((start, low, False))
    cuts = [low, *[s for s in period.starts[1:] if low < s < high], high]
    ranges = []
    for lo, hi in itertools.pairwise(cuts):
        bucket = period.bucket_of(lo)
        first_day, last_day = _ceil(lo, DAY), day_of(hi)
        if first_day < last_day:
            ranges.append((bucket, DAY_GRAIN, first_day, last_day))
            if lo < first_day:
                ranges.append((bucket, SLOT_GRAIN, lo, first_day))
            if last_day < hi:
                ranges.append((bucket, SLOT_GRAIN, last_day, hi))
        else:
            ranges.append((bucket, SLOT_GRAIN, lo, hi))
    return ranges, edges


async def has_log(connection: AsyncConnection, organization_id: uuid.UUID) -> bool:
    found = await connection.execute(
        select(dirty.c.id).where(dirty.c.organization_id == organization_id).limit(1)
    )
    return found.first() is not None


async def _read_rollups(
    connection: AsyncConnection,
    organization_id: uuid.UUID,
    ranges: list[tuple[int, int, int, datetime, datetime]],
    tally: Tally,
) -> None:
    if not ranges:
        return
    bounds = union_all(
        *[
            select(
                literal(period, Integer).label("period"),
                literal(bucket, Integer).label("bucket"),
                literal(grain, SmallInteger).label("grain"),
                literal(lo, UTCDateTime()).label("lo"),
                literal(hi, UTCDateTime()).label("hi"),
            )
            for period, bucket, grain, lo, hi in ranges
        ]
    ).subquery("bounds")
    statement = (
        select(
            bounds.c.period,
            bounds.c.bucket,
            rollups.c.dimension,
            rollups.c.value,
            func.sum(rollups.c.targets),
            func.sum(rollups.c.posts),
            *[func.sum(rollups.c[key]) for key in RAW_METRICS],
        )
        .select_from(
            bounds.join(
                rollups,
                and_(
                    rollups.c.organization_id == organization_id,
                    rollups.c.grain == bounds.c.grain,
                    rollups.c.slot_start >= bounds.c.lo,
                    rollups.c.slot_start < bounds.c.hi,
                ),
            )
        )
        .group_by(bounds.c.period, bounds.c.bucket, rollups.c.dimension, rollups.c.value)
    )
    for row in await connection.execute(statement):
        period, bucket, dimension, value, *sums = row
        tally.add((int(period), int(bucket), dimension, value), (int(s or 0) for s in sums))


def _add_fact(tally: Tally, period: Period, fact: Fact) -> None:
    bucket = period.bucket_of(fact.published_at)
    metrics = [fact.values[key] for key in RAW_METRICS]
    for dimension, value, counts in fact.dimensions():
        tally.add((period.number, bucket, dimension, value), [1, counts, *metrics])


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
    ranges: list[tuple[int, int, int, datetime, datetime]] = []
    edge_conditions = []
    period_edges: list[tuple[Period, Any]] = []
    for period in periods:
        pieces, edges = _pieces(period)
        ranges += [(period.number, *piece) for piece in pieces]
        for lo, hi, inclusive in edges:
            upper = facts.c.published_at <= hi if inclusive else facts.c.published_at < hi
            edge_conditions.append(and_(facts.c.published_at >= lo, upper))
            period_edges.append((period, (lo, hi, inclusive)))
    await _read_rollups(connection, organization_id, ranges, tally)
    edge_facts = await _facts_where(
        connection, facts.c.organization_id == organization_id, or_(*edge_conditions)
    )
    for fact in edge_facts:
        for period, (lo, hi, inclusive) in period_edges:
            if lo <= fact.published_at and (
                fact.published_at <= hi if inclusive else fact.published_at < hi
            ):
                _add_fact(tally, period, fact)
    # Posts crossing a period's start (counted before it), and the current period's end.
    gap = await _longest_gap(connection, organization_id)
    crossing: list[Any] = []
    current = periods[0]
    if gap:
        for period in periods:
            crossing.append(
                and_(
                    facts.c.published_at >= period.start,
                    facts.c.published_at <= min(period.end, _shifted(period.start, gap)),
                    facts.c.post_first_at < period.start,
                )
            )
        crossing.append(
            and_(
                facts.c.post_first_at >= max(current.start, _shifted(current.end, -gap)),
                facts.c.post_first_at <= current.end,
                facts.c.published_at > current.end,
            )
        )
    straddlers = Straddlers()
    if crossing:
        posts = select(facts.c.post_id).where(
            facts.c.organization_id == organization_id, or_(*crossing)
        )
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
    """Whether the rollups answer this query (no filters; see the module docstring)."""
    return not (query.channel_ids or query.tag_values or query.content_kinds)


async def run_rollups(
    connection: AsyncConnection, organization_id: uuid.UUID, query: AnalyticsQuery
) -> list[AggregateRow] | None:
    """The aggregate rows and the page from the rollups, or None when they cannot answer
    (filters, an unaligned bucket boundary, or a log not yet applied)."""
    periods = periods_of(query)
    if periods is None or not answerable(query) or await has_log(connection, organization_id):
        return None
    tally, straddlers = await tally_periods(connection, organization_id, periods)
    return aggregate_rows(tally) + await page_rows(connection, organization_id, query, straddlers)


__all__ = ["PREVIOUS", "answerable", "run_rollups"]
