"""What `/metrics` serves: the scrape's bearer check, the counts read from the database (at
most once per `PRESSROOM_METRICS_CACHE_SECONDS`, whatever the number of scrapers), and the
Prometheus text of this process's registry.

API nodes serve it on their own port (`install_metrics`), worker nodes on
`PRESSROOM_METRICS_HOST:PRESSROOM_METRICS_PORT` (`serve_worker_metrics`). The database counts
are the same on every node: aggregate them with `max()`, not `sum()`."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import time
from datetime import datetime
from typing import Any

from fastapi import FastAPI
from fastapi import Request
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client import generate_latest
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from pressroom.analytics.polls import oldest_due_at
from pressroom.channels.models import HEALTH_STATES
from pressroom.channels.models import Channel
from pressroom.db import unit_of_work
from pressroom.http.problems import problem_response
from pressroom.kit.clock import utcnow
from pressroom.kit.errors import PressroomError
from pressroom.kit.ids import uuid7
from pressroom.metrics import instruments as m
from pressroom.metrics.requests import RequestMetrics
from pressroom.posts.models import TARGET_STATUSES
from pressroom.posts.models import PostTarget
from pressroom.runtime import Runtime
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import WebhookEndpoint

log = logging.getLogger(__name__)

METRICS_PATH = "/metrics"
_UNFINISHED_DELIVERIES = ("pending", "processing")


class DatabaseGauges:
    """The gauges counted in the database, refreshed by a scrape when older than the cache
    period; concurrent scrapes share one refresh."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._read_at: float | None = None
        self._lock = asyncio.Lock()

    async def refresh(self) -> None:
        async with self._lock:
            period = self.runtime.settings.metrics_cache_seconds
            if self._read_at is not None and time.monotonic() - self._read_at < period:
                return
            started = time.perf_counter()
            async with unit_of_work(self.runtime.sessions) as session:
                counts = await _read_counts(session, utcnow())
            _publish(counts)
            m.SCRAPE_QUERY_DURATION.set(time.perf_counter() - started)
            self._read_at = time.monotonic()


async def _read_counts(session: AsyncSession, now: datetime) -> dict[str, Any]:
    targets = await session.execute(
        select(PostTarget.status, func.count()).group_by(PostTarget.status)
    )
    channels = await session.execute(
        select(Channel.health_state, func.count())
        .where(Channel.disconnected_at.is_(None))
        .group_by(Channel.health_state)
    )
    deliveries = await session.execute(
        select(Delivery.status, func.count())
        .where(Delivery.status.in_([*_UNFINISHED_DELIVERIES, "exhausted"]))
        .group_by(Delivery.status)
    )
    oldest_delivery = await session.scalar(
        select(func.min(Delivery.next_attempt_at))
        .join(WebhookEndpoint, WebhookEndpoint.id == Delivery.endpoint_id)
        .where(
            Delivery.status == "pending",
            Delivery.next_attempt_at <= now,
            Delivery.expires_at > now,
            WebhookEndpoint.enabled.is_(True),
        )
    )
    by_delivery_status = {status: count for status, count in deliveries.all()}
    return {
        "targets": dict(targets.all()),
        "channels": dict(channels.all()),
        "pending": sum(by_delivery_status.get(s, 0) for s in _UNFINISHED_DELIVERIES),
        "exhausted": by_delivery_status.get("exhausted", 0),
        "delivery_lag": _seconds_since(oldest_delivery, now),
        "poller_lag": _seconds_since(await oldest_due_at(session, now), now),
    }


def _seconds_since(when: datetime | None, now: datetime) -> float:
    return max(0.0, (now - when).total_seconds()) if when is not None else 0.0


def _publish(counts: dict[str, Any]) -> None:
    # Every known status is set (0 when none), and only those: a status the code does not
    # know never becomes a label value.
    for status in TARGET_STATUSES:
        m.TARGETS.labels(status).set(counts["targets"].get(status, 0))
    for health in HEALTH_STATES:
        m.CHANNELS.labels(health).set(counts["channels"].get(health, 0))
    m.DELIVERIES_PENDING.set(counts["pending"])
    m.DELIVERIES_EXHAUSTED.set(counts["exhausted"])
    m.DELIVERY_LAG.set(counts["delivery_lag"])
    m.POLLER_LAG.set(counts["poller_lag"])


def _authorized(runtime: Runtime, authorization: str | None) -> bool:
    token = runtime.settings.metrics_token
    if token is None:
        return True
    scheme, _, given = (authorization or "").strip().partition(" ")
    # Digests of equal length, compared in constant time: neither the token's content nor its
    # length shows in the time a wrong guess takes.
    expected = hashlib.sha256(token.get_secret_value().encode()).digest()
    matches = hmac.compare_digest(hashlib.sha256(given.strip().encode()).digest(), expected)
    return scheme.lower() == "bearer" and matches


async def metrics_response(runtime: Runtime, gauges: DatabaseGauges, request: Request) -> Response:
    """The scrape: 401 without the configured token; the registry's text otherwise."""
    if not _authorized(runtime, request.headers.get("authorization")):
        request_id = getattr(request.state, "request_id", None) or str(uuid7())
        detail = "Send the metrics token (PRESSROOM_METRICS_TOKEN) as `Authorization: Bearer`."
        return problem_response(PressroomError("unauthenticated", detail=detail), request_id)
    try:
        await gauges.refresh()
    except Exception:
        # The process's own instruments are still worth serving; the database gauges keep
        # their last values, and the failure is in the log.
        log.exception("metrics: could not read the database counts")
    return Response(generate_latest(m.REGISTRY), media_type=CONTENT_TYPE_LATEST)


def install_metrics(app: FastAPI, runtime: Runtime) -> None:
    """`/metrics` and the request instruments on the API (only when PRESSROOM_METRICS=true:
    otherwise `/metrics` is an unknown route, 404). Call it after the other middleware, so
    the request instruments see every answer."""
    gauges = DatabaseGauges(runtime)

    @app.get(METRICS_PATH, include_in_schema=False)
    async def metrics(request: Request) -> Response:
        return await metrics_response(runtime, gauges, request)

    app.add_middleware(RequestMetrics, openapi=app.openapi)


def worker_metrics_app(runtime: Runtime) -> Starlette:
    """The `/metrics` of a worker node (no API there)."""
    gauges = DatabaseGauges(runtime)

    async def metrics(request: Request) -> Response:
        return await metrics_response(runtime, gauges, request)

    return Starlette(routes=[Route(METRICS_PATH, metrics, methods=["GET"])])
