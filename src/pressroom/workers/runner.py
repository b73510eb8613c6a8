"""Hosts the background loops (publisher, webhook delivery, metrics poller, sweepers).

A loop does one batch of work per call and says whether it found any; when idle it sleeps
until new work is announced on its channel or its poll interval passes. Rows are the queue,
so stopping loses nothing: on SIGTERM each loop finishes its current batch and exits."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from pressroom.analytics.worker import POLL_INTERVAL as METRICS_POLL_INTERVAL
from pressroom.analytics.worker import MetricsPoller
from pressroom.channels.service import REVOCATIONS_CHANNEL
from pressroom.channels.worker import POLL_INTERVAL as REVOCATION_POLL_INTERVAL
from pressroom.channels.worker import revoke_disconnected_credentials
from pressroom.db import unit_of_work
from pressroom.http.idempotency import purge_expired
from pressroom.kit.notify import wait_for_work
from pressroom.media.worker import SWEEP_INTERVAL_SECONDS, sweep_staging
from pressroom.posts.service import PUBLISHER_CHANNEL
from pressroom.publishing.worker import publish_due_targets
from pressroom.webhooks.worker import webhook_loops

if TYPE_CHECKING:
    from pressroom.runtime import Runtime

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Loop:
    name: str
    # One batch; True if it did any work (run again at once), False if idle.
    run_once: Callable[[Runtime], Awaitable[bool]]
    # Longest idle sleep; idle workers look for due work at least this often.
    interval: float = 1.0
    # Notification channel that wakes the loop early, if any.
    channel: str | None = None
    # Called once when the loop stops (after its last batch), to finish work it holds.
    on_stop: Callable[[Runtime], Awaitable[None]] | None = None


async def _purge_idempotency(runtime: Runtime) -> bool:
    retention = timedelta(seconds=runtime.settings.idempotency_retention_seconds)
    async with unit_of_work(runtime.sessions) as session:
        removed = await purge_expired(session, retention)
    if removed:
        log.info("purged idempotency records", extra={"count": removed})
    return False


def default_loops() -> list[Loop]:
    """Every loop a worker node runs. Domains add theirs here."""
    return [
        Loop("idempotency-sweeper", _purge_idempotency, interval=600.0),
        Loop("media-staging-sweeper", sweep_staging, interval=SWEEP_INTERVAL_SECONDS),
        *webhook_loops(),
        Loop("publisher", publish_due_targets, interval=1.0, channel=PUBLISHER_CHANNEL),
        Loop("metrics-poller", MetricsPoller(), interval=METRICS_POLL_INTERVAL),
        Loop(
            "credential-revoker",
            revoke_disconnected_credentials,
            interval=REVOCATION_POLL_INTERVAL,
            channel=REVOCATIONS_CHANNEL,
        ),
    ]


class WorkerRunner:
    def __init__(self, runtime: Runtime, loops: list[Loop], *, grace_seconds: float = 30.0):
        self.runtime = runtime
        self.loops = loops
        self.grace_seconds = grace_seconds
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._waiters: list[tuple[str, asyncio.Event]] = []

    async def start(self) -> None:
        for loop in self.loops:
            if loop.channel:
                await self.runtime.notifier.listen(loop.channel)
            self._tasks.append(asyncio.create_task(self._run(loop), name=f"loop:{loop.name}"))
        log.info("workers started", extra={"loops": [loop.name for loop in self.loops]})

    async def _run(self, loop: Loop) -> None:
        waiter = self.runtime.notifier.waiter(loop.channel or f"timer:{loop.name}")
        self._waiters.append((loop.channel or f"timer:{loop.name}", waiter))
        failures = 0
        while not self._stopping.is_set():
            try:
                busy = await loop.run_once(self.runtime)
                failures = 0
            except Exception:
                failures += 1
                log.exception("worker loop failed", extra={"loop": loop.name})
                busy = False
                # Back off on repeated failures (database down) instead of spinning.
                await self._sleep(min(30.0, 0.5 * 2**failures))
            if not busy and not self._stopping.is_set():
                await wait_for_work(waiter, loop.interval)
        if loop.on_stop is not None:
            try:
                await loop.on_stop(self.runtime)
            except Exception:
                log.exception("worker loop failed to stop cleanly", extra={"loop": loop.name})

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    async def stop(self) -> None:
        """Let each loop finish its current batch, then end; cancel after the grace period."""
        self._stopping.set()
        for channel, waiter in self._waiters:
            waiter.set()
            self.runtime.notifier.forget(channel, waiter)
        if not self._tasks:
            return
        _, pending = await asyncio.wait(self._tasks, timeout=self.grace_seconds)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        self._tasks.clear()
        log.info("workers stopped", extra={"cancelled": len(pending)})

    async def run_until_signalled(self) -> None:
        """For `pressroom worker`: run until SIGTERM or SIGINT, then stop gracefully."""
        signalled = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, signalled.set)
        await self.start()
        await signalled.wait()
        log.info("shutdown signal received; finishing current work")
        await self.stop()
