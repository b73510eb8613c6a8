"""A pin's analytics as Pressroom's canonical metrics.

`GET /v5/pins/{pin_id}/analytics?start_date&end_date&metric_types=IMPRESSION,SAVE,PIN_CLICK,
OUTBOUND_CLICK` (https://developers.pinterest.com/docs/api/v5/pins-analytics) answers
`{"all": {"summary_metrics": {"IMPRESSION": n, ...}, "daily_metrics": [...]}}`, the summary
totalling the date range. Pinterest keeps pin analytics for the last 90 days, so the range
starts at the later of the pin's publication day and 89 days ago, and ends today (UTC).

IMPRESSION -> impressions, SAVE -> saves, PIN_CLICK + OUTBOUND_CLICK -> clicks (a click that
opens the pin, and one that follows its link, are both clicks).
"""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta

from pressroom.providers.pinterest.api import PinterestSession

METRIC_TYPES = ("IMPRESSION", "SAVE", "PIN_CLICK", "OUTBOUND_CLICK")
CANONICAL = {
    "impressions": ("IMPRESSION",),
    "saves": ("SAVE",),
    "clicks": ("PIN_CLICK", "OUTBOUND_CLICK"),
}
HISTORY = timedelta(days=89)


async def pin_metrics(
    session: PinterestSession, pin_id: str, published_at: datetime, today: datetime
) -> dict[str, int]:
    start = max(published_at.date(), (today - HISTORY).date())
    end = today.date()
    body = await session.call(
        "GET",
        f"/pins/{pin_id}/analytics",
        "reading the pin's analytics",
        params={
            "start_date": min(start, end).isoformat(),
            "end_date": end.isoformat(),
            "metric_types": ",".join(METRIC_TYPES),
        },
    )
    scope = body.get("all")
    summary = scope.get("summary_metrics") if isinstance(scope, dict) else None
    values = summary if isinstance(summary, dict) else {}
    return {
        key: sum(_count(values.get(name)) for name in names) for key, names in CANONICAL.items()
    }


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(0, int(value))
