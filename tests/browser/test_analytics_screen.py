"""The analytics screen in a real browser, over the demo history: the time series chart is
drawn with the comparison period overlaid, its points are the report's numbers, the
breakdowns are charted, and the pickers change the report."""

from __future__ import annotations

from datetime import date
from datetime import datetime
from datetime import time
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from tests.browser.harness import ConsoleServer
from tests.browser.operations import look_at
from tests.browser.operations import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ZONE = "Europe/Berlin"
# Pixels of a canvas that are not blank.
_INKED = """(id) => {
  const canvas = document.getElementById(id);
  const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let inked = 0;
  for (let i = 3; i < pixels.length; i += 4) { if (pixels[i] > 0) inked++; }
  return inked;
}"""
_POINTS = """(id) => {
  const chart = Chart.getChart(document.getElementById(id));
  return chart.data.datasets.map((set, i) => ({
    label: set.label,
    values: set.data,
    drawn: chart.getDatasetMeta(i).data.length,
    parsed: chart.getDatasetMeta(i).data.map((_, j) => chart.getDatasetMeta(i)._parsed[j].y),
  }));
}"""


def report(server: ConsoleServer, **params: str) -> dict[str, Any]:
    """The report as an API client gets it with the owner's key."""
    answer = httpx.get(
        f"{server.base}/api/v1/analytics", params=params, headers=server.owner.headers
    )
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_the_chart_is_drawn_with_the_reports_numbers(
    page: Any, console_server: ConsoleServer
) -> None:
    printed = console_server.cli(
        "analytics", "import", "--org", str(console_server.owner.organization_id), "--demo"
    )
    assert "imported" in printed
    zone = ZoneInfo(ZONE)
    last = datetime.now(zone).date() - timedelta(days=1)
    first = last - timedelta(days=20)
    start = datetime.combine(first, time.min, zone).isoformat()
    end = datetime.combine(last, time(23, 59, 59), zone).isoformat()
    expected = report(console_server, start=start, end=end, timezone=ZONE)
    comparison = expected["comparison"]
    before = report(
        console_server,
        start=comparison["start"],
        end=comparison["end"],
        timezone=ZONE,
        comparison="none",
        groupBy=expected["range"]["groupBy"],
    )
    assert expected["range"]["groupBy"] == "day" and len(expected["timeseries"]) == 21
    assert sum(b["values"]["impressions"] for b in expected["timeseries"]) > 0

    sign_in(page, console_server, console_server.owner.key)
    page.get_by_role("link", name="Analytics").click()
    page.get_by_role("heading", name="Analytics").wait_for()
    page.get_by_label("Range").select_option("custom")
    page.get_by_label("From (with Dates)").fill(first.isoformat())
    page.get_by_label("To (with Dates)").fill(last.isoformat())
    page.get_by_label("Time zone").select_option(ZONE)
    page.get_by_label("Metric charted").select_option("impressions")
    page.get_by_role("button", name="Show").click()
    page.wait_for_function("() => window.Chart && Chart.getChart('timeseries')")

    now_line, before_line = page.evaluate(_POINTS, "timeseries")
    assert now_line["values"] == [b["values"]["impressions"] for b in expected["timeseries"]]
    assert now_line["parsed"] == now_line["values"] and now_line["drawn"] == 21
    assert before_line["label"] == "The period before"
    assert before_line["values"] == [b["values"]["impressions"] for b in before["timeseries"]]
    assert page.evaluate(_INKED, "timeseries") > 2000
    total = page.locator('li.total[data-metric="impressions"] strong').inner_text()
    assert total == f"{expected['totals']['impressions']['value']:,}"
    assert f"in {ZONE}, by day" in page.locator("#range-said").inner_text()

    channels = expected["breakdowns"]["channels"]
    assert channels
    (bars, previous_bars) = page.evaluate(_POINTS, "breakdown-channels")
    assert bars["values"] == [row["values"]["impressions"] for row in channels]
    assert previous_bars["values"] == [row["previous"]["impressions"] for row in channels]
    assert page.evaluate(_INKED, "breakdown-channels") > 500
    look_at(page, "analytics")


def test_pickers_change_the_report(page: Any, console_server: ConsoleServer) -> None:
    sign_in(page, console_server, console_server.owner.key)
    page.goto(
        f"{console_server.base}/console/analytics?range=90&comparison=none"
        "&metric=engagementRate&timezone=America/New_York"
    )
    page.wait_for_function("() => window.Chart && Chart.getChart('timeseries')")
    lines = page.evaluate(_POINTS, "timeseries")
    assert len(lines) == 1  # no comparison, no second line
    said = page.locator("#range-said").inner_text()
    assert "in America/New_York, by week" in said and "compared" not in said
    today = datetime.now(ZoneInfo("America/New_York")).date()
    assert (
        page.get_by_label("From (with Dates)").input_value()
        == (today - timedelta(days=89)).isoformat()
    )
    assert page.get_by_label("To (with Dates)").input_value() == today.isoformat()
    assert date.fromisoformat(page.get_by_label("To (with Dates)").input_value())
    # A strange value falls back instead of failing the page.
    page.goto(f"{console_server.base}/console/analytics?range=x&metric=y&timezone=Mars/Base")
    assert page.get_by_label("Metric charted").input_value() == "impressions"
