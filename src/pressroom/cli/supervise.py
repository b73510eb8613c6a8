"""`serve`'s workers in a child process of their own (`pressroom worker`), so that the API and
the workers each get a core instead of sharing one event loop.

The child starts once the API has started (after its server key check), is restarted when it
dies (after 1 s, doubling up to 30 s while it keeps dying young), and is stopped with the API:
SIGTERM, then its grace period to finish the work in hand, then SIGKILL. It runs in a session
of its own, so a terminal's Ctrl-C reaches `serve` alone, which then stops it; it dies with
`serve` (Linux: the parent-death signal; elsewhere: the end of its stdin). On a database
without cross-process notifications (SQLite) the API forwards every wake-up its commits make
(new due targets, new deliveries) to the child, one channel name per line on its stdin."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from contextlib import asynccontextmanager
from typing import Any

log = logging.getLogger("pressroom.workers")

FIRST_BACKOFF_SECONDS = 1.0
LONGEST_BACKOFF_SECONDS = 30.0
# A child that ran this long was healthy: the next restart waits the first backoff again.
HEALTHY_SECONDS = 60.0
# The child's first line on stdout once its loops run; `serve` finishes starting after it.
READY_LINE = "workers ready"
READY_SECONDS = 120.0


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent (thread) that started it dies."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


class WorkerProcess:
    """One supervised `pressroom worker` child."""

    def __init__(self, *, grace_seconds: float = 30.0) -> None:
        self.grace_seconds = grace_seconds
        self.starts = 0
        self._child: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._ready = threading.Event()

    def command(self) -> list[str]:
        return [sys.executable, "-m", "pressroom", "worker", "--supervised"]

    def start(self) -> None:
        self._thread = threading.Thread(target=self._supervise, name="worker-supervisor")
        self._thread.start()

    def _spawn(self) -> subprocess.Popen[bytes]:
        child = subprocess.Popen(
            self.command(),
            stdin=subprocess.PIPE,
            # Read by `_relay`: the server's stdout is what `serve --json` prints, nothing else.
            stdout=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        assert child.stdin is not None
        os.set_blocking(child.stdin.fileno(), False)
        self.starts += 1
        threading.Thread(target=self._relay, args=(child,), name="worker-stdout").start()
        return child

    def _relay(self, child: subprocess.Popen[bytes]) -> None:
        """The child's stdout: its ready line sets `ready`; anything else joins stderr."""
        assert child.stdout is not None
        for line in child.stdout:
            if line.decode(errors="replace").strip() == READY_LINE:
                self._ready.set()
            else:
                sys.stderr.write(line.decode(errors="replace"))
                sys.stderr.flush()
        child.stdout.close()

    def wait_ready(self, seconds: float = READY_SECONDS) -> bool:
        """Until the child's loops run (True) or `seconds` pass (False)."""
        return self._ready.wait(seconds)

    def _supervise(self) -> None:
        backoff = FIRST_BACKOFF_SECONDS
        while not self._stopping.is_set():
            with self._lock:
                if self._stopping.is_set():
                    return
                self._child = child = self._spawn()
            started = time.monotonic()
            code = child.wait()
            if self._stopping.is_set():
                return
            if time.monotonic() - started >= HEALTHY_SECONDS:
                backoff = FIRST_BACKOFF_SECONDS
            log.warning(
                "worker process exited; restarting",
                extra={"exitCode": code, "restartInSeconds": backoff},
            )
            if self._stopping.wait(backoff):
                return
            backoff = min(backoff * 2, LONGEST_BACKOFF_SECONDS)

    def wake(self, channel: str) -> None:
        """Tell the child that work was announced on `channel` (never blocks: a wake-up that
        does not fit in the pipe is dropped; the worker polls anyway)."""
        child = self._child
        if child is None or child.stdin is None or child.poll() is not None:
            return
        with contextlib.suppress(OSError):
            os.write(child.stdin.fileno(), f"{channel}\n".encode())

    def stop(self) -> None:
        """SIGTERM the child, give it its grace period, then SIGKILL; wait for it."""
        with self._lock:
            self._stopping.set()
            child = self._child
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=self.grace_seconds + 5)
            except subprocess.TimeoutExpired:
                log.warning("worker process did not stop in time; killing it")
                child.kill()
                child.wait()
        if child is not None and child.stdin is not None:
            with contextlib.suppress(OSError):
                child.stdin.close()
        if self._thread is not None:
            self._thread.join()


Lifespan = Callable[[Any], AbstractAsyncContextManager[Any]]


def with_worker_process(lifespan: Lifespan, workers: WorkerProcess) -> Lifespan:
    """`lifespan` with the worker child started after its start-up (which ends once the
    child's loops run, as it did when they ran in-process) and stopped before its shutdown."""
    import asyncio

    @asynccontextmanager
    async def combined(app: Any) -> AsyncIterator[Any]:
        async with lifespan(app) as state:
            workers.start()
            if not await asyncio.to_thread(workers.wait_ready):
                log.warning("worker process not ready yet; serving without waiting for it")
            try:
                yield state
            finally:
                await asyncio.to_thread(workers.stop)

    return combined
