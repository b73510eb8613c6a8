"""The registry and every instrument, with the small functions that record into them.

Names follow Prometheus conventions: a `pressroom_` prefix, base units in the name
(`_seconds`), `_total` on counters. One registry per process: an API node, a worker node and
`serve` with its in-process workers each expose their own (README "Metrics")."""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry
from prometheus_client import Counter
from prometheus_client import Gauge
from prometheus_client import Histogram
from prometheus_client import PlatformCollector
from prometheus_client import ProcessCollector

REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)

# Requests and their answers: seconds from milliseconds to the longest uploads.
_REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
# Lateness and lag: from a tenth of a second to an hour.
_LATENESS_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)

REQUESTS = Counter(
    "pressroom_http_requests_total",
    "HTTP requests answered, by operation (OpenAPI operationId or route template) and status.",
    ("operation", "status"),
    registry=REGISTRY,
)
REQUEST_DURATION = Histogram(
    "pressroom_http_request_duration_seconds",
    "Time from a request's arrival to the end of its response, by operation.",
    ("operation",),
    buckets=_REQUEST_BUCKETS,
    registry=REGISTRY,
)

PUBLISH_LATENESS = Histogram(
    "pressroom_publish_lateness_seconds",
    "From the moment a target's successful attempt fell due to its publication being recorded.",
    ("network",),
    buckets=_LATENESS_BUCKETS,
    registry=REGISTRY,
)
PUBLISHED = Counter(
    "pressroom_publish_published_total",
    "Targets published, by network.",
    ("network",),
    registry=REGISTRY,
)
PUBLISH_RETRIES = Counter(
    "pressroom_publish_retries_total",
    "Failed publish attempts that will be retried, by network and error code.",
    ("network", "code"),
    registry=REGISTRY,
)
PUBLISH_FAILURES = Counter(
    "pressroom_publish_failures_total",
    "Targets that ended failed, by network and error code.",
    ("network", "code"),
    registry=REGISTRY,
)

WEBHOOK_DELIVERIES = Counter(
    "pressroom_webhook_deliveries_total",
    "Delivery attempts recorded, by what became of their delivery: succeeded, retrying or "
    "exhausted.",
    ("outcome",),
    registry=REGISTRY,
)
WEBHOOK_FIRST_ATTEMPT_DELAY = Histogram(
    "pressroom_webhook_event_to_first_attempt_seconds",
    "From an event's creation to the start of the first attempt of each of its deliveries.",
    buckets=_LATENESS_BUCKETS,
    registry=REGISTRY,
)
WEBHOOK_ATTEMPT_DURATION = Histogram(
    "pressroom_webhook_attempt_duration_seconds",
    "One delivery attempt, from its start to its outcome (answer, error or timeout).",
    buckets=_REQUEST_BUCKETS,
    registry=REGISTRY,
)

MEDIA_INSPECTION = Histogram(
    "pressroom_media_inspection_seconds",
    "Decoding one uploaded file (waiting for a decoding slot included), by kind.",
    ("kind",),
    buckets=_REQUEST_BUCKETS,
    registry=REGISTRY,
)

LOOP_LAST_RUN = Gauge(
    "pressroom_worker_loop_last_run_timestamp_seconds",
    "Unix time at which each worker loop last finished a run (its heartbeat).",
    ("loop",),
    registry=REGISTRY,
)
LOOP_INTERVAL = Gauge(
    "pressroom_worker_loop_interval_seconds",
    "Each worker loop's longest idle sleep: a live loop beats at least this often, plus the "
    "length of one run.",
    ("loop",),
    registry=REGISTRY,
)
LOOP_RUNS = Counter(
    "pressroom_worker_loop_runs_total",
    "Worker loop runs, by loop and result (ok or failed).",
    ("loop", "result"),
    registry=REGISTRY,
)

# Read from the database at scrape time (pressroom.scrape), shared by every node.
TARGETS = Gauge(
    "pressroom_post_targets",
    "Post targets, by status.",
    ("status",),
    registry=REGISTRY,
)
CHANNELS = Gauge(
    "pressroom_channels",
    "Connected channels, by health (healthy, degraded, reconnect_required).",
    ("health",),
    registry=REGISTRY,
)
DELIVERIES_PENDING = Gauge(
    "pressroom_webhook_deliveries_pending",
    "Webhook deliveries not yet succeeded or exhausted (waiting, due or being attempted).",
    registry=REGISTRY,
)
DELIVERIES_EXHAUSTED = Gauge(
    "pressroom_webhook_deliveries_exhausted",
    "Webhook deliveries that ran out of attempts and are still kept (replayable).",
    registry=REGISTRY,
)
DELIVERY_LAG = Gauge(
    "pressroom_webhook_delivery_lag_seconds",
    "How long the longest-waiting due delivery of an enabled endpoint has been due (0 when "
    "none is waiting).",
    registry=REGISTRY,
)
POLLER_LAG = Gauge(
    "pressroom_metrics_poller_lag_seconds",
    "How long the longest-waiting due metrics poll of a pollable channel has been due (0 when "
    "none is waiting).",
    registry=REGISTRY,
)
SCRAPE_QUERY_DURATION = Gauge(
    "pressroom_scrape_database_seconds",
    "How long the last database read behind the gauges above took.",
    registry=REGISTRY,
)


def record_publish_outcome(
    network: str, *, published: bool, lateness: float | None, code: str | None, retrying: bool
) -> None:
    """One recorded publish outcome: published (with its lateness), or an error that will be
    retried or ended the target."""
    if published:
        PUBLISHED.labels(network).inc()
        if lateness is not None:
            PUBLISH_LATENESS.labels(network).observe(max(0.0, lateness))
    elif retrying:
        PUBLISH_RETRIES.labels(network, code or "unknown").inc()
    else:
        PUBLISH_FAILURES.labels(network, code or "unknown").inc()


def record_loop_run(loop: str, interval: float, *, ok: bool) -> None:
    LOOP_INTERVAL.labels(loop).set(interval)
    LOOP_RUNS.labels(loop, "ok" if ok else "failed").inc()
    if ok:
        LOOP_LAST_RUN.labels(loop).set(time.time())
