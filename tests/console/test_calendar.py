"""The calendar's arithmetic in the person's time zone."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from zoneinfo import ZoneInfo

from pressroom.console import calendar


def test_a_week_runs_monday_to_sunday() -> None:
    days = calendar.week_days(date(2026, 11, 25))
    assert days[0] == date(2026, 11, 23) and days[-1] == date(2026, 11, 29)


def test_a_month_is_whole_weeks_covering_it() -> None:
    days = calendar.month_days(date(2026, 11, 25))
    assert days[0] == date(2026, 10, 26) and days[-1] == date(2026, 12, 6)
    assert len(days) % 7 == 0


def test_stepping_months_crosses_years() -> None:
    assert calendar.step("month", date(2026, 12, 15), 1) == date(2027, 1, 1)
    assert calendar.step("month", date(2026, 1, 15), -1) == date(2025, 12, 1)
    assert calendar.step("week", date(2026, 12, 31), 1) == date(2027, 1, 7)


def test_bounds_are_the_local_days_in_utc_across_a_clock_change() -> None:
    paris = ZoneInfo("Europe/Paris")
    # Summer time ends on Sunday 25 October 2026 in Paris.
    start, end = calendar.utc_bounds(calendar.week_days(date(2026, 10, 21)), paris)
    assert start == datetime(2026, 10, 18, 22, 0, tzinfo=UTC)
    assert end == datetime(2026, 10, 25, 22, 59, 59, 999000, tzinfo=UTC)


def test_a_post_falls_on_its_local_day_by_publication_then_schedule_then_creation() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    published = {
        "scheduledAt": "2026-11-25T10:00:00Z",
        "createdAt": "2026-11-20T10:00:00Z",
        "targets": [{"publishedAt": "2026-11-25T16:30:00Z"}, {"publishedAt": None}],
    }
    scheduled = {"scheduledAt": "2026-11-25T14:59:00Z", "createdAt": "x", "targets": []}
    draft = {"scheduledAt": None, "createdAt": "2026-11-24T15:00:00Z", "targets": []}
    days = calendar.by_local_day([published, scheduled, draft], tokyo)
    assert [post for _, post in days[date(2026, 11, 26)]] == [published]
    assert [post for _, post in days[date(2026, 11, 25)]] == [draft, scheduled]
