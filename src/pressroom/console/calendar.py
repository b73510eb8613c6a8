"""Calendar arithmetic in the person's time zone: which days a week or month view shows, the
UTC bounds to ask the API for, and the day each post falls on."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import time
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

VIEWS = ("week", "month")


def week_days(anchor: date) -> list[date]:
    """Monday to Sunday of the week holding `anchor`."""
    monday = anchor - timedelta(days=anchor.weekday())
    return [monday + timedelta(days=n) for n in range(7)]


def month_days(anchor: date) -> list[date]:
    """Whole weeks (Monday first) covering `anchor`'s month."""
    first = anchor.replace(day=1)
    following = (first + timedelta(days=32)).replace(day=1)
    start = first - timedelta(days=first.weekday())
    end = following + timedelta(days=(7 - following.weekday()) % 7)
    return [start + timedelta(days=n) for n in range((end - start).days)]


def days_of(view: str, anchor: date) -> list[date]:
    return month_days(anchor) if view == "month" else week_days(anchor)


def step(view: str, anchor: date, direction: int) -> date:
    """The anchor of the previous (-1) or next (+1) week or month."""
    if view == "week":
        return anchor + timedelta(weeks=direction)
    month = anchor.month - 1 + direction
    return date(anchor.year + month // 12, month % 12 + 1, 1)


def utc_bounds(days: list[date], zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The first instant of the first day and the last millisecond of the last day, local."""
    start = datetime.combine(days[0], time.min, zone)
    end = datetime.combine(days[-1] + timedelta(days=1), time.min, zone)
    return start.astimezone(UTC), (end - timedelta(milliseconds=1)).astimezone(UTC)


def post_moment(post: dict[str, Any]) -> str:
    """The post's date as the API filters by it: its earliest target publication, else its
    schedule, else its creation."""
    published = [t["publishedAt"] for t in post["targets"] if t.get("publishedAt")]
    return str(min(published) if published else post["scheduledAt"] or post["createdAt"])


def by_local_day(
    posts: list[dict[str, Any]], zone: ZoneInfo
) -> dict[date, list[tuple[datetime, dict[str, Any]]]]:
    """Posts grouped by their local day, each day in time order."""
    days: dict[date, list[tuple[datetime, dict[str, Any]]]] = {}
    for post in posts:
        moment = datetime.fromisoformat(post_moment(post).replace("Z", "+00:00")).astimezone(zone)
        days.setdefault(moment.date(), []).append((moment, post))
    for entries in days.values():
        entries.sort(key=lambda entry: entry[0])
    return days
