"""Time-series buckets: calendar days, weeks (from Monday) or months in the report's
timezone, computed here with zoneinfo so that they are DST-correct on every database; SQL
only assigns rows to the bounds computed here.

A bucket starts at a local midnight (of a day, a Monday or the first of a month) and ends
where the next one starts, so a day is 23 or 25 hours long across a DST change. The first
and last buckets are clipped to the range. Buckets are half-open, except that the last one
also holds the range's (inclusive) end instant. When that end instant is itself a boundary
(a local midnight starting a day, week or month), it belongs to the period it starts: the
last bucket is that single instant, `start == end`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import time
from datetime import timedelta
from typing import Final
from typing import Literal
from zoneinfo import ZoneInfo

from pressroom.analytics.comparison import TimeRange

Grouping = Literal["auto", "day", "week", "month"]
# `auto`: days up to 31 days, weeks up to 183, months beyond (contract section 9).
AUTO_DAY_LIMIT: Final = timedelta(days=31)
AUTO_WEEK_LIMIT: Final = timedelta(days=183)
# SQL compares stored times at microsecond resolution; the last bucket's exclusive upper
# bound is one microsecond past the inclusive end of the range.
STORAGE_RESOLUTION: Final = timedelta(microseconds=1)


@dataclass(frozen=True)
class Bucket:
    start: datetime  # inclusive
    end: datetime  # exclusive, except for the last bucket (see `upper`)
    upper: datetime  # exclusive bound used to assign rows: `end`, or just past the range


def resolve_grouping(group_by: str, current: TimeRange) -> str:
    if group_by != "auto":
        return group_by
    if current.span <= AUTO_DAY_LIMIT:
        return "day"
    if current.span <= AUTO_WEEK_LIMIT:
        return "week"
    return "month"


def _period_start(day: date, unit: str) -> date:
    if unit == "week":
        return day - timedelta(days=day.weekday())  # Monday
    if unit == "month":
        return day.replace(day=1)
    return day


def _next_period(day: date, unit: str) -> date:
    if unit == "day":
        return day + timedelta(days=1)
    if unit == "week":
        return day + timedelta(days=7)
    return date(day.year + day.month // 12, day.month % 12 + 1, 1)


def local_midnight(day: date, zone: ZoneInfo) -> datetime:
    """The first instant of `day` in `zone`, in UTC. Where midnight falls in a DST gap,
    fold=0 takes the offset before the gap, which is the first instant the day has."""
    return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)


def _just_after(moment: datetime) -> datetime:
    try:
        return moment + STORAGE_RESOLUTION
    except OverflowError:
        return moment  # the very last representable instant: nothing is published after it


def buckets_for(current: TimeRange, zone: ZoneInfo, unit: str) -> list[Bucket]:
    """The buckets covering `current` (at most 368 days' worth for a 366-day range)."""
    edges = [current.start]
    try:
        day = _next_period(_period_start(current.start.astimezone(zone).date(), unit), unit)
        while True:
            boundary = local_midnight(day, zone)
            # The end is inclusive: a boundary at the end instant starts one more bucket.
            if boundary > current.end:
                break
            if boundary > current.start:
                edges.append(boundary)
            day = _next_period(day, unit)
    except (OverflowError, ValueError):
        pass  # the calendar ends (year 1 or 9999): the last bucket runs to the range's end
    edges.append(current.end)
    last = len(edges) - 2
    return [
        Bucket(
            start=edges[i],
            end=edges[i + 1],
            upper=_just_after(edges[i + 1]) if i == last else edges[i + 1],
        )
        for i in range(len(edges) - 1)
    ]
