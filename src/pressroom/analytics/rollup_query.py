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

import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from datetime import timedelta
from typing import Any
from typing import Final

from sqlalchemy import Integer
from sqlalchemy import SmallInteger
from sqlalchemy import String
from sqlalchemy import and_
from sqlalchemy import case
from sqlalchemy import func
from sqlalchemy import literal
from sqlalchemy import or_
from sqlalchemy import select
from sqlalchemy import text
from sqlalchemy import union_all
from sqlalchemy.ext.asyncio import AsyncConnection

from pressroom.analytics.metrics import RAW_METRICS
from pressroom.analytics.params import AnalyticsQuery
from pressroom.analytics.query import CURRENT
from pressroom.analytics.query import PREVIOUS
from pressroom.analytics.query import AggregateRow
from pressroom.analytics.query import run_aggregates
from pressroom.analytics.query import tags
from pressroom.analytics.query import topics
from pressroom.analytics.rollup_page import Straddlers
from pressroom.analytics.rollup_page import page_rows
from pressroom.analytics.rollup_periods import BREAKDOWNS
from pressroom.analytics.rollup_periods import FACTS
from pressroom.analytics.rollup_periods import SERIES
from pressroom.analytics.rollup_periods import Period
from pressroom.analytics.rollup_periods import Piece
from pressroom.analytics.rollup_periods import periods_of
from pressroom.analytics.rollup_periods import pieces_of
from pressroom.analytics.rollup_periods import shift
from pressroom.analytics.rollups import Fact
from pressroom.analytics.rollups import dirty
from pressroom.analytics.rollups import fact_from_row
from pressroom.analytics.rollups import facts
from pressroom.analytics.rollups import rollups

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


@dataclass
class Tally:
    """Sums by (period, bucket or -1, dimension, value): [targets, posts, metrics...]."""

    cells: dict[tuple[int, int, str, str], list[int]] = field(default_factory=dict)

    def add(self, key: tuple[int, int, str, str], values: Iterable[int]) -> None:
        cell = self.cells.setdefault(key, [0] * _WIDTH)
        for index, value in enumerate(values):
            cell[index] += value


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


async def tally_periods(
    connection: AsyncConnection, organization_id: uuid.UUID, periods: list[Period]
) -> tuple[Tally, Straddlers]:
    tally = Tally()
    pieces = [piece for period in periods for piece in pieces_of(period)]
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
                    facts.c.published_at <= min(period.end, shift(period.start, gap)),
                    facts.c.post_first_at < period.start,
                )
            )
        crossing.append(
            and_(
                mine,
                facts.c.post_first_at >= max(current.start, shift(current.end, -gap)),
                facts.c.post_first_at <= current.end,
                facts.c.published_at > current.end,
                facts.c.published_at <= shift(current.end, gap),
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
