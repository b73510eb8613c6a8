"""Time ranges and the comparison range of a report (contract section 9).

Ranges are inclusive at both ends. `previous_period` is the range of the same length that
ends just before `start`; `previous_week`, `previous_month` and `previous_year` shift both
ends back by that calendar unit as a wall clock in the report's timezone reads it, so a
week back across a DST change is still "the same local time last week"; a shift that lands
past a month's end clamps to its last day (March 31 -> February 28 or 29)."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Final
from typing import Literal
from zoneinfo import ZoneInfo

# The presets a client may name; `custom` is also the one reported when comparisonStart and
# comparisonEnd are given.
Preset = Literal[
    "previous_period", "previous_week", "previous_month", "previous_year", "none", "custom"
]
CUSTOM: Final = "custom"
MAX_RANGE: Final = timedelta(days=366)

_SECOND = timedelta(seconds=1)
_MILLISECOND = timedelta(milliseconds=1)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class TimeRange:
    """An inclusive range of instants, in UTC."""

    start: datetime
    end: datetime

    @property
    def span(self) -> timedelta:
        return self.end - self.start

    def contains(self, moment: datetime) -> bool:
        return self.start <= moment <= self.end


@dataclass(frozen=True)
class Comparison:
    preset: str  # a Preset other than "none"
    range: TimeRange


def resolution_of(*moments: datetime) -> timedelta:
    """The finest unit the client wrote its times in: a second, a millisecond or a
    microsecond. "Just before start" is one such unit before it, so that whole-second
    ranges compare with whole-second ranges (…T23:59:59Z), millisecond ones with
    millisecond ones (…T23:59:59.999Z), and so on."""
    if all(moment.microsecond == 0 for moment in moments):
        return _SECOND
    if all(moment.microsecond % 1000 == 0 for moment in moments):
        return _MILLISECOND
    return _MICROSECOND


# Calendar arithmetic near year 1 can leave the representable range; it stops there.
EARLIEST: Final = datetime.min.replace(tzinfo=UTC)


def back(moment: datetime, delta: timedelta) -> datetime:
    """`moment - delta`, or the earliest representable time if that is before it."""
    try:
        return moment - delta
    except OverflowError:
        return EARLIEST


def previous_period(current: TimeRange) -> TimeRange:
    end = back(current.start, resolution_of(current.start, current.end))
    return TimeRange(start=back(end, current.span), end=end)


def shift_back(moment: datetime, zone: ZoneInfo, *, days: int = 0, months: int = 0) -> datetime:
    """`moment` moved back on the wall clock of `zone` by whole days or calendar months,
    the day clamped to the last of a shorter month. A wall time that does not exist in the
    zone (inside a DST gap) resolves with the offset in force before the gap."""
    try:
        local = moment.astimezone(zone)
        wall = local.replace(tzinfo=None)
        if months:
            index = wall.year * 12 + (wall.month - 1) - months
            year, month = divmod(index, 12)
            month += 1
            day = min(wall.day, calendar.monthrange(year, month)[1])
            wall = wall.replace(year=year, month=month, day=day)
        wall -= timedelta(days=days)
        return wall.replace(tzinfo=zone, fold=local.fold).astimezone(UTC)
    except (OverflowError, ValueError):  # before year 1
        return EARLIEST


def comparison_for(preset: str, current: TimeRange, zone: ZoneInfo) -> Comparison | None:
    """The comparison range of a preset; None for `none`."""
    if preset == "none":
        return None
    if preset == "previous_period":
        return Comparison(preset, previous_period(current))
    shift: dict[str, int] = {
        "previous_week": {"days": 7},
        "previous_month": {"months": 1},
        "previous_year": {"months": 12},
    }[preset]
    start = shift_back(current.start, zone, **shift)
    end = shift_back(current.end, zone, **shift)
    # Clamping and DST folds never reorder two wall times by more than the fold; guard anyway.
    return Comparison(preset, TimeRange(start=min(start, end), end=end))
