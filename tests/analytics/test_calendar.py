"""Buckets and comparison ranges, computed by hand (contract section 9)."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest

from pressroom.analytics.buckets import buckets_for
from pressroom.analytics.buckets import resolve_grouping
from pressroom.analytics.comparison import TimeRange
from pressroom.analytics.comparison import comparison_for
from pressroom.analytics.comparison import previous_period

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def spans(buckets: list) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    return [(b.start.strftime(fmt), b.end.strftime(fmt)) for b in buckets]


def test_berlin_spring_forward_day_has_23_hours():
    # 2026-03-29: clocks go from 02:00 CET to 03:00 CEST.
    current = TimeRange(utc("2026-03-27T23:00:00Z"), utc("2026-03-30T21:59:59Z"))
    buckets = buckets_for(current, BERLIN, "day")
    assert spans(buckets) == [
        ("2026-03-27T23:00:00Z", "2026-03-28T23:00:00Z"),
        ("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"),
        ("2026-03-29T22:00:00Z", "2026-03-30T21:59:59Z"),
    ]
    assert buckets[1].end - buckets[1].start == timedelta(hours=23)


def test_berlin_fall_back_day_has_25_hours():
    # 2026-10-25: clocks go from 03:00 CEST back to 02:00 CET.
    current = TimeRange(utc("2026-10-24T22:00:00Z"), utc("2026-10-26T22:59:59Z"))
    buckets = buckets_for(current, BERLIN, "day")
    assert spans(buckets) == [
        ("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"),
        ("2026-10-25T23:00:00Z", "2026-10-26T22:59:59Z"),
    ]
    assert buckets[0].end - buckets[0].start == timedelta(hours=25)


def test_new_york_days_across_both_changes():
    # 2026-03-08 (EST -> EDT) has 23 hours; 2026-11-01 (EDT -> EST) has 25.
    spring = buckets_for(
        TimeRange(utc("2026-03-08T05:00:00Z"), utc("2026-03-09T12:00:00Z")), NEW_YORK, "day"
    )
    assert spans(spring)[0] == ("2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z")
    fall = buckets_for(
        TimeRange(utc("2026-11-01T04:00:00Z"), utc("2026-11-02T12:00:00Z")), NEW_YORK, "day"
    )
    assert spans(fall)[0] == ("2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z")
    assert fall[0].end - fall[0].start == timedelta(hours=25)


def test_week_spanning_the_change_starts_monday_and_has_167_hours():
    # Monday 2026-03-23 00:00 CET to Monday 2026-03-30 00:00 CEST.
    current = TimeRange(utc("2026-03-20T12:00:00Z"), utc("2026-04-02T12:00:00Z"))
    buckets = buckets_for(current, BERLIN, "week")
    assert spans(buckets) == [
        ("2026-03-20T12:00:00Z", "2026-03-22T23:00:00Z"),
        ("2026-03-22T23:00:00Z", "2026-03-29T22:00:00Z"),
        ("2026-03-29T22:00:00Z", "2026-04-02T12:00:00Z"),
    ]
    assert buckets[1].start.astimezone(BERLIN).weekday() == 0
    assert buckets[1].end - buckets[1].start == timedelta(hours=167)


def test_months_start_on_the_first_local_midnight():
    current = TimeRange(utc("2026-01-15T00:00:00Z"), utc("2026-04-10T00:00:00Z"))
    buckets = buckets_for(current, NEW_YORK, "month")
    assert spans(buckets) == [
        ("2026-01-15T00:00:00Z", "2026-02-01T05:00:00Z"),
        ("2026-02-01T05:00:00Z", "2026-03-01T05:00:00Z"),
        ("2026-03-01T05:00:00Z", "2026-04-01T04:00:00Z"),
        ("2026-04-01T04:00:00Z", "2026-04-10T00:00:00Z"),
    ]


def test_an_end_on_a_day_boundary_is_a_last_bucket_of_one_instant():
    # The example: the end instant is the first of October 2, so it starts a day.
    current = TimeRange(utc("2025-10-01T00:00:00Z"), utc("2025-10-02T00:00:00Z"))
    buckets = buckets_for(current, ZoneInfo("UTC"), "day")
    assert spans(buckets) == [
        ("2025-10-01T00:00:00Z", "2025-10-02T00:00:00Z"),
        ("2025-10-02T00:00:00Z", "2025-10-02T00:00:00Z"),
    ]
    assert buckets[0].upper == utc("2025-10-02T00:00:00Z")  # the instant is not in Oct 1
    assert buckets[1].upper > current.end  # it is in the last bucket


def test_an_end_on_a_monday_midnight_starts_a_last_week_bucket():
    # 2026-03-30 is a Monday; in Berlin its midnight is 2026-03-29T22:00Z (summer time).
    current = TimeRange(utc("2026-03-16T00:00:00+01:00"), utc("2026-03-29T22:00:00Z"))
    assert spans(buckets_for(current, BERLIN, "week")) == [
        ("2026-03-15T23:00:00Z", "2026-03-22T23:00:00Z"),
        ("2026-03-22T23:00:00Z", "2026-03-29T22:00:00Z"),
        ("2026-03-29T22:00:00Z", "2026-03-29T22:00:00Z"),
    ]


def test_an_end_on_the_first_of_a_month_starts_a_last_month_bucket():
    current = TimeRange(utc("2026-02-15T00:00:00Z"), utc("2026-04-01T00:00:00+02:00"))
    assert spans(buckets_for(current, BERLIN, "month")) == [
        ("2026-02-15T00:00:00Z", "2026-02-28T23:00:00Z"),
        ("2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z"),
        ("2026-03-31T22:00:00Z", "2026-03-31T22:00:00Z"),
    ]


def test_an_end_just_before_a_boundary_adds_no_bucket():
    current = TimeRange(utc("2026-03-01T00:00:00Z"), utc("2026-03-31T23:59:59Z"))
    buckets = buckets_for(current, ZoneInfo("UTC"), "day")
    assert len(buckets) == 31
    assert buckets[-1].end == current.end


def test_a_one_instant_range_has_one_bucket():
    moment = utc("2026-03-01T10:00:00Z")
    buckets = buckets_for(TimeRange(moment, moment), BERLIN, "month")
    assert spans(buckets) == [("2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z")]


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        (timedelta(days=31), "day"),
        (timedelta(days=31, seconds=1), "week"),
        (timedelta(days=183), "week"),
        (timedelta(days=183, seconds=1), "month"),
    ],
)
def test_auto_grouping_thresholds(span: timedelta, expected: str):
    start = utc("2026-01-01T00:00:00Z")
    assert resolve_grouping("auto", TimeRange(start, start + span)) == expected


def test_previous_period_of_whole_second_range_ends_one_second_before_start():
    current = TimeRange(utc("2026-03-10T00:00:00Z"), utc("2026-03-19T23:59:59Z"))
    assert previous_period(current) == TimeRange(
        utc("2026-02-28T00:00:00Z"), utc("2026-03-09T23:59:59Z")
    )


def test_previous_period_of_millisecond_range_ends_one_millisecond_before_start():
    current = TimeRange(utc("2026-03-10T00:00:00.000Z"), utc("2026-03-19T23:59:59.999Z"))
    assert previous_period(current) == TimeRange(
        utc("2026-02-28T00:00:00Z"), utc("2026-03-09T23:59:59.999Z")
    )


def test_previous_week_keeps_the_local_time_across_dst():
    # Monday 2026-03-30 00:00 CEST back a week is Monday 2026-03-23 00:00 CET: 167 hours.
    current = TimeRange(utc("2026-03-29T22:00:00Z"), utc("2026-04-05T21:59:59Z"))
    comparison = comparison_for("previous_week", current, BERLIN)
    assert comparison is not None
    assert comparison.range == TimeRange(utc("2026-03-22T23:00:00Z"), utc("2026-03-29T21:59:59Z"))


def test_previous_month_from_march_31_clamps_to_the_last_day_of_february():
    current = TimeRange(utc("2026-03-31T00:00:00Z"), utc("2026-03-31T23:59:59Z"))
    comparison = comparison_for("previous_month", current, ZoneInfo("UTC"))
    assert comparison is not None
    assert comparison.range == TimeRange(utc("2026-02-28T00:00:00Z"), utc("2026-02-28T23:59:59Z"))


def test_previous_month_in_a_leap_year_clamps_to_february_29():
    current = TimeRange(utc("2028-03-30T00:00:00Z"), utc("2028-03-31T12:00:00Z"))
    comparison = comparison_for("previous_month", current, ZoneInfo("UTC"))
    assert comparison is not None
    assert comparison.range == TimeRange(utc("2028-02-29T00:00:00Z"), utc("2028-02-29T12:00:00Z"))


def test_previous_month_follows_the_timezone_calendar():
    # March 1 00:00 in New York (05:00Z) back a month is February 1 00:00 EST (05:00Z);
    # April 1 00:00 EDT (04:00Z) back a month is March 1 00:00 EST (05:00Z).
    current = TimeRange(utc("2026-03-01T05:00:00Z"), utc("2026-04-01T04:00:00Z"))
    comparison = comparison_for("previous_month", current, NEW_YORK)
    assert comparison is not None
    assert comparison.range == TimeRange(utc("2026-02-01T05:00:00Z"), utc("2026-03-01T05:00:00Z"))


def test_previous_year_of_february_29_is_february_28():
    current = TimeRange(utc("2028-02-29T00:00:00Z"), utc("2028-03-01T00:00:00Z"))
    comparison = comparison_for("previous_year", current, ZoneInfo("UTC"))
    assert comparison is not None
    assert comparison.preset == "previous_year"
    assert comparison.range == TimeRange(utc("2027-02-28T00:00:00Z"), utc("2027-03-01T00:00:00Z"))


def test_comparison_none_is_none():
    current = TimeRange(utc("2026-03-01T00:00:00Z"), utc("2026-03-02T00:00:00Z"))
    assert comparison_for("none", current, BERLIN) is None


def test_auto_grouping_counts_elapsed_time_not_calendar_days():
    # October 1 to November 1 in Berlin is 31 calendar days but 31 days and one hour of
    # elapsed time (the clocks go back on October 25): weeks, as documented.
    current = TimeRange(utc("2026-10-01T00:00:00+02:00"), utc("2026-11-01T00:00:00+01:00"))
    assert current.span == timedelta(days=31, hours=1)
    assert resolve_grouping("auto", current) == "week"
