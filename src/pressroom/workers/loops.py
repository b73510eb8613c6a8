"""Every loop a worker node runs: each domain's background work, handed to the runner as
callables. Domains add theirs here."""

from __future__ import annotations

import logging
from datetime import timedelta

from pressroom.analytics.rollups import apply_waiting_logs
from pressroom.analytics.worker import POLL_INTERVAL as METRICS_POLL_INTERVAL
from pressroom.analytics.worker import MetricsPoller
from pressroom.auth.signin import purge_stale
from pressroom.channels.health import POLL_INTERVAL as HEALTH_POLL_INTERVAL
from pressroom.channels.health import check_due_channels
from pressroom.channels.service import REVOCATIONS_CHANNEL
from pressroom.channels.worker import POLL_INTERVAL as REVOCATION_POLL_INTERVAL
from pressroom.channels.worker import revoke_disconnected_credentials
from pressroom.db import unit_of_work
from pressroom.http.idempotency import purge_expired
from pressroom.media.worker import ORPHAN_SWEEP_INTERVAL_SECONDS
from pressroom.media.worker import SWEEP_INTERVAL_SECONDS
from pressroom.media.worker import sweep_orphans
from pressroom.media.worker import sweep_staging
from pressroom.posts.service import PUBLISHER_CHANNEL
from pressroom.publishing.worker import publish_due_targets
from pressroom.runtime import Runtime
from pressroom.webhooks.outbox import DELIVERIES_CHANNEL
from pressroom.webhooks.retention import SWEEP_INTERVAL_SECONDS as WEBHOOK_SWEEP_INTERVAL
from pressroom.webhooks.retention import sweep_webhooks
from pressroom.webhooks.worker import POLL_INTERVAL_SECONDS
from pressroom.webhooks.worker import DeliveryWorker
from pressroom.workers.runner import Loop

__all__ = ["POLL_INTERVAL_SECONDS", "default_loops", "webhook_loops"]

log = logging.getLogger(__name__)


async def _purge_idempotency(runtime: Runtime) -> bool:
    retention = timedelta(seconds=runtime.settings.idempotency_retention_seconds)
    async with unit_of_work(runtime.sessions) as session:
        removed = await purge_expired(session, retention)
    if removed:
        log.info("purged idempotency records", extra={"count": removed})
    return False


async def _purge_console_sessions(runtime: Runtime) -> bool:
    idle = timedelta(seconds=runtime.settings.console_idle_seconds)
    async with unit_of_work(runtime.sessions) as session:
        removed = await purge_stale(session, idle=idle)
    if removed:
        log.info("purged console sign-in links and sessions", extra={"count": removed})
    return False


def webhook_loops() -> list[Loop]:
    """The delivery worker (woken on new deliveries, and by its own finished attempts) and the
    retention sweeper."""
    deliveries = DeliveryWorker()
    return [
        Loop(
            "webhook-delivery",
            deliveries.run_once,
            interval=POLL_INTERVAL_SECONDS,
            channel=DELIVERIES_CHANNEL,
            on_stop=deliveries.close,
            signals=(deliveries.results_ready,),
        ),
        Loop("webhook-retention", sweep_webhooks, interval=WEBHOOK_SWEEP_INTERVAL),
    ]


def default_loops() -> list[Loop]:
    """Every loop a worker node runs."""
    return [
        Loop("idempotency-sweeper", _purge_idempotency, interval=600.0),
        Loop("console-session-sweeper", _purge_console_sessions, interval=600.0),
        Loop("media-staging-sweeper", sweep_staging, interval=SWEEP_INTERVAL_SECONDS),
        Loop("media-orphan-sweeper", sweep_orphans, interval=ORPHAN_SWEEP_INTERVAL_SECONDS),
        *webhook_loops(),
        Loop("publisher", publish_due_targets, interval=1.0, channel=PUBLISHER_CHANNEL),
        Loop("metrics-poller", MetricsPoller(), interval=METRICS_POLL_INTERVAL),
        # Report rollups: changes the API did not apply itself (publications, deletions,
        # edits) are folded in within seconds, so reports rarely wait for them.
        Loop("analytics-rollups", apply_waiting_logs, interval=5.0),
        Loop("channel-health", check_due_channels, interval=HEALTH_POLL_INTERVAL),
        Loop(
            "credential-revoker",
            revoke_disconnected_credentials,
            interval=REVOCATION_POLL_INTERVAL,
            channel=REVOCATIONS_CHANNEL,
        ),
    ]
