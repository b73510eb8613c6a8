"""The pieces a report's periods are read in (analytics/rollup_query.py): each period cut
at its time-series buckets' starts, each piece as whole UTC months, days and hours of rollup
rows, and facts for what is left at its edges."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta

from pressroom.analytics.params import AnalyticsQuery
from pressroom.analytics.query import CURRENT
from pressroom.analytics.query import PREVIOUS
from pressroom.analytics.rollups import DAY
from pressroom.analytics.rollups import DAY_GRAIN
from pressroom.analytics.rollups import HOUR
from pressroom.analytics.rollups import HOUR_GRAIN
from pressroom.analytics.rollups import MONTH_GRAIN
from pressroom.analytics.rollups import day_of
from pressroom.analytics.rollups import hour_of
from pressroom.analytics.rollups import month_of
from pressroom.analytics.rollups import next_month


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


def _floor(moment: datetime, unit: timedelta) -> datetime:
    return hour_of(moment) if unit == HOUR else day_of(moment)


def _ceil(moment: datetime, unit: timedelta) -> datetime:
    floor = _floor(moment, unit)
    # In the last hour or day of year 9999 there is no next boundary: the calendar's end
    # stands in for it, so the rest of the period is read from the facts.
    return floor if floor == moment else shift(floor, unit)


def _just_after(moment: datetime) -> datetime:
    try:
        return moment + timedelta(microseconds=1)
    except OverflowError:
        return moment  # the last representable instant: nothing is published after it


def shift(moment: datetime, delta: timedelta) -> datetime:
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


def pieces_of(period: Period) -> list[Piece]:
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
