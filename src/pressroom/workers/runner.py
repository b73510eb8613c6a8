"""Hosts background loops; which loops a worker node runs is `workers.loops`'s list.

A loop is a callable a domain hands over: it does one batch of work per call and says whether
it found any; when idle it sleeps until new work is announced on its channel, one of its own
signals is set, or its poll interval passes. Rows are the queue, so stopping loses nothing: on
SIGTERM each loop finishes its current batch and exits. This module knows no domain."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pressroom.kit.notify import Signal
from pressroom.kit.notify import wait_for_work
from pressroom.metrics.instruments import record_loop_run

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
    # Wake-ups the loop's owner sets from inside the process (not announced to others).
    signals: tuple[Signal, ...] = ()


class WorkerRunner:
    def __init__(self, runtime: Runtime, loops: list[Loop], *, grace_seconds: float = 30.0):
        self.runtime = runtime
        self.loops = loops
        self.grace_seconds = grace_seconds
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._waiters: list[tuple[str, asyncio.Event]] = []
        self._signalled = asyncio.Event()

    async def start(self) -> None:
        for loop in self.loops:
            if loop.channel:
                await self.runtime.notifier.listen(loop.channel)
            self._tasks.append(asyncio.create_task(self._run(loop), name=f"loop:{loop.name}"))
        log.info("workers started", extra={"loops": [loop.name for loop in self.loops]})

    async def _run(self, loop: Loop) -> None:
        waiter = self.runtime.notifier.waiter(loop.channel or f"timer:{loop.name}")
        self._waiters.append((loop.channel or f"timer:{loop.name}", waiter))
        for wake in loop.signals:
            wake.attach(waiter)
        failures = 0
        while not self._stopping.is_set():
            try:
                busy = await loop.run_once(self.runtime)
                failures = 0
                record_loop_run(loop.name, loop.interval, ok=True)
            except Exception:
                failures += 1
                record_loop_run(loop.name, loop.interval, ok=False)
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

    def request_stop(self) -> None:
        """Stop `run_until_signalled` as SIGTERM would (its owner went away)."""
        self._signalled.set()

    async def run_until_signalled(self, on_started: Callable[[], object] | None = None) -> None:
        """For `pressroom worker`: run until SIGTERM or SIGINT, then stop gracefully;
        `on_started` is called once every loop runs."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._signalled.set)
        await self.start()
        if on_started is not None:
            on_started()
        await self._signalled.wait()
        log.info("shutdown signal received; finishing current work")
        await self.stop()
