"""Analytics: the getAnalytics report with its comparison, as charts (the time series with
the comparison range's overlaid, and the breakdowns) and tables of the same numbers; time
zone, range and comparison pickers.

The comparison range's time series is a second getAnalytics call over that range, bucketed
the same way (`groupBy` of the first answer), so the two lines share their x axis."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from datetime import datetime
from datetime import time
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter
from fastapi import Request
from starlette.responses import Response

from pressroom.analytics.metrics import METRICS
from pressroom.console.acting import Person
from pressroom.console.acting import query_text
from pressroom.console.acting import refused
from pressroom.console.api import ConsoleApi
from pressroom.console.rendering import parse_time
from pressroom.console.rendering import render
from pressroom.console.rendering import time_zone
from pressroom.console.rendering import zone_names

router = APIRouter(prefix="/console/analytics", include_in_schema=False)

RANGES = {"7": "Last 7 days", "30": "Last 30 days", "90": "Last 90 days", "custom": "Dates"}
COMPARISONS = {
    "previous_period": "The period before",
    "previous_month": "The same days a month before",
    "previous_year": "The same days a year before",
    "none": "No comparison",
}
BREAKDOWNS = (
    ("channels", "Channels"),
    ("campaigns", "Campaigns"),
    ("models", "Models"),
    ("topics", "Topics"),
    ("approvals", "Approvals"),
    ("contentKinds", "Content kinds"),
)
BUCKET_LABELS = {"day": "%d %b", "week": "week of %d %b", "month": "%b %Y"}


@dataclass
class Choice:
    """What the person picked (every value checked; a strange one falls back)."""

    days: str
    first: date
    last: date
    zone: ZoneInfo
    comparison: str
    metric: str

    def span(self) -> tuple[str, str]:
        """The range's ends as RFC 3339 instants: local midnight to the last day's end."""
        start = datetime.combine(self.first, time.min, self.zone)
        end = datetime.combine(self.last, time(23, 59, 59), self.zone)
        return start.isoformat(), end.isoformat()


def _date(value: str) -> date | None:
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def choose(request: Request) -> Choice:
    params = request.query_params
    zone_name = query_text(params.get("timezone"), 64)
    zone = ZoneInfo(zone_name) if zone_name in zone_names() else time_zone(request)
    today = datetime.now(zone).date()
    days = query_text(params.get("range"), 8)
    days = days if days in RANGES else "30"
    first = today - timedelta(days=int(days) - 1) if days != "custom" else None
    last = today
    if days == "custom":
        picked_first = _date(query_text(params.get("start"), 10))
        picked_last = _date(query_text(params.get("end"), 10))
        last = picked_last or today
        first = picked_first or last - timedelta(days=29)
    comparison = query_text(params.get("comparison"), 32)
    metric = query_text(params.get("metric"), 32)
    return Choice(
        days=days,
        first=first or today,
        last=last,
        zone=zone,
        comparison=comparison if comparison in COMPARISONS else "previous_period",
        metric=metric if metric in METRICS else "impressions",
    )


async def _previous_series(
    api: ConsoleApi, report: dict[str, Any], zone: str
) -> list[dict[str, Any]]:
    """The comparison range's buckets, the same size as the report's."""
    comparison = report.get("comparison")
    if not comparison:
        return []
    answer = await api.get(
        "/analytics",
        start=comparison["start"],
        end=comparison["end"],
        timezone=zone,
        comparison="none",
        groupBy=report["range"]["groupBy"],
        pageSize=1,
    )
    return list(answer.body["timeseries"]) if answer.ok else []


def _local(value: str | None, zone: ZoneInfo) -> str:
    """An instant of the report on the wall clock of the report's zone."""
    moment = parse_time(value)
    return moment.astimezone(zone).strftime("%d %b %Y %H:%M") if moment else ""


def chart_data(
    report: dict[str, Any], previous: list[dict[str, Any]], zone: ZoneInfo
) -> dict[str, Any]:
    """What the page's script draws: labels and values per metric, now and before."""
    pattern = BUCKET_LABELS.get(report["range"]["groupBy"], "%d %b")

    def label(bucket: dict[str, Any]) -> str:
        moment = parse_time(bucket["start"])
        return moment.astimezone(zone).strftime(pattern) if moment else ""

    series = report["timeseries"]
    return {
        "labels": [label(bucket) for bucket in series],
        "previousLabels": [label(bucket) for bucket in previous],
        "metrics": report["metrics"],
        "current": {m: [b["values"].get(m) for b in series] for m in report["metrics"]},
        "previous": {m: [b["values"].get(m) for b in previous] for m in report["metrics"]},
        "breakdowns": {
            key: {
                "labels": [row["label"] for row in report["breakdowns"][key]],
                "current": {
                    m: [row["values"].get(m) for row in report["breakdowns"][key]]
                    for m in report["metrics"]
                },
                "previous": {
                    m: [(row["previous"] or {}).get(m) for row in report["breakdowns"][key]]
                    for m in report["metrics"]
                },
            }
            for key, _ in BREAKDOWNS
        },
    }


@router.get("")
async def analytics(request: Request, person: Person) -> Response:
    """The report of the picked range, compared, in the picked time zone."""
    choice = choose(request)
    if choice.last < choice.first:
        choice.first, choice.last = choice.last, choice.first
    start, end = choice.span()
    api = person.api
    answer = await api.get(
        "/analytics",
        start=start,
        end=end,
        timezone=choice.zone.key,
        comparison=choice.comparison,
        pageSize=10,
        sortBy=choice.metric,
    )
    if not answer.ok:
        return refused(request, person, answer, heading="The report was refused")
    report = answer.body
    previous = await _previous_series(api, report, choice.zone.key)
    context = {
        "section": "analytics",
        "choice": choice,
        "report": report,
        "previous": previous,
        "chart": chart_data(report, previous, choice.zone),
        "ranges": RANGES,
        "comparisons": COMPARISONS,
        "breakdowns": BREAKDOWNS,
        "zones": zone_names(),
        "metrics": METRICS,
        "local": lambda value: _local(value, choice.zone),
    }
    return render(request, "analytics.html", context, person=person)
