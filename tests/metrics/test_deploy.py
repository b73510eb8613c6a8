"""deploy/: the Grafana dashboard and the alert rules name only series Pressroom exports, so
neither drifts from the instruments."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from pressroom.metrics.instruments import REGISTRY

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SERIES = re.compile(r"\bpressroom_[a-z_]+")


def exported_series() -> set[str]:
    names = set()
    for family in REGISTRY.collect():
        suffixes = {
            "counter": ("_total",),
            "histogram": ("_bucket", "_count", "_sum"),
        }.get(family.type, ("",))
        names |= {family.name + suffix for suffix in suffixes}
    return names


def alert_expressions() -> dict[str, str]:
    document = yaml.safe_load((DEPLOY / "prometheus-alerts.yml").read_text())
    return {rule["alert"]: rule["expr"] for group in document["groups"] for rule in group["rules"]}


def dashboard_expressions() -> list[str]:
    dashboard = json.loads((DEPLOY / "grafana-dashboard.json").read_text())
    return [t["expr"] for panel in dashboard["panels"] for t in panel.get("targets", [])]


def test_alert_rules_cover_the_signals_that_matter_with_exported_series():
    expressions = alert_expressions()
    for signal in (
        "pressroom_publish_lateness_seconds_bucket",
        "pressroom_webhook_delivery_lag_seconds",
        'pressroom_channels{health="reconnect_required"}',
        "pressroom_worker_loop_last_run_timestamp_seconds",
    ):
        assert any(signal in expr for expr in expressions.values()), signal
    used = {name for expr in expressions.values() for name in SERIES.findall(expr)}
    assert used - exported_series() == set()


def test_dashboard_panels_query_exported_series():
    expressions = dashboard_expressions()
    assert len(expressions) >= 15
    used = {name for expr in expressions for name in SERIES.findall(expr)}
    assert used - exported_series() == set()
    # Every instrument of ours is on the dashboard, but the histograms' _count and _sum, the
    # loop interval (the alert's threshold) and the scrape's own timing.
    ours = {n.removesuffix("_bucket") for n in exported_series() if n.startswith("pressroom_")}
    missing = ours - {n.removesuffix("_bucket") for n in used}
    assert {n for n in missing if not n.endswith(("_count", "_sum"))} == {
        "pressroom_worker_loop_interval_seconds",
        "pressroom_scrape_database_seconds",
    }
