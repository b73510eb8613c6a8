"""Waking idle workers when new work is committed.

On PostgreSQL, `pg_notify` inside the writing transaction is delivered on commit to
every listening process (LISTEN/NOTIFY). In-process waiters are woken on commit too,
which is all SQLite (one process) needs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy import event
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

_PENDING = "pressroom_pending_notifications"


class Notifier:
    def __init__(self, engine: AsyncEngine | None = None) -> None:
        self._engine = engine
        self._events: dict[str, set[asyncio.Event]] = {}
        self._callbacks: dict[str, list[Callable[[], None]]] = {}
        self._listener: Any = None
        self._listening: set[str] = set()
        self._listen_lock = asyncio.Lock()

    async def notify(self, session: AsyncSession, channel: str) -> None:
        """Announce new work on `channel` once the session's transaction commits."""
        if session.get_bind().dialect.name == "postgresql":
            await session.execute(text("SELECT pg_notify(:c, '')"), {"c": channel})
        pending: set[str] = session.sync_session.info.setdefault(_PENDING, set())
        if not pending:
            event.listen(session.sync_session, "after_commit", self._after_commit, once=True)
            event.listen(session.sync_session, "after_rollback", _clear_pending, once=True)
        pending.add(channel)

    def _after_commit(self, sync_session: Session) -> None:
        for channel in sync_session.info.pop(_PENDING, set()):
            self.wake(channel)

    def wake(self, channel: str) -> None:
        for waiter in self._events.get(channel, ()):
            waiter.set()
        for callback in self._callbacks.get(channel, ()):
            callback()

    def subscribe(self, channel: str, callback: Callable[[], None]) -> None:
        """Call `callback` whenever `channel` is notified (in this process or, once
        `listen` has run, in any process sharing the PostgreSQL database)."""
        self._callbacks.setdefault(channel, []).append(callback)

    def is_listening(self, channel: str) -> bool:
        """Whether notifications from other processes on `channel` currently arrive."""
        listener = self._listener
        return (
            channel in self._listening
            and listener is not None
            and not listener.driver_connection.is_closed()
        )

    def waiter(self, channel: str) -> asyncio.Event:
        waiter = asyncio.Event()
        self._events.setdefault(channel, set()).add(waiter)
        return waiter

    def forget(self, channel: str, waiter: asyncio.Event) -> None:
        self._events.get(channel, set()).discard(waiter)

    async def listen(self, channel: str) -> None:
        """Also wake this process's waiters on notifications from other processes."""
        if self._engine is None or self._engine.dialect.name != "postgresql":
            return
        async with self._listen_lock:
            if channel in self._listening and self.is_listening(channel):
                return
            if self._listener is None or self._listener.driver_connection.is_closed():
                self._listening.clear()
                if self._listener is not None:
                    # The old connection is dead: hand it back to the pool as unusable.
                    with contextlib.suppress(Exception):
                        self._listener.invalidate()
                self._listener = await self._engine.raw_connection()
                self._listener.driver_connection.add_termination_listener(self._on_lost)
            connection = self._listener.driver_connection
            await connection.add_listener(channel, self._on_pg_notify)
            self._listening.add(channel)

    def _on_lost(self, _connection: Any) -> None:
        # Whatever was missed while disconnected must be assumed to have happened.
        channels = set(self._listening)
        self._listening.clear()
        for channel in channels:
            self.wake(channel)

    def _on_pg_notify(self, _conn: Any, _pid: int, channel: str, _payload: str) -> None:
        self.wake(channel)

    async def close(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(Exception):
                self._listener.close()
            self._listener = None


def _clear_pending(sync_session: Session) -> None:
    sync_session.info.pop(_PENDING, None)


class Signal:
    """A wake-up a loop's owner keeps for itself (say, "results ready to record"), apart from
    the work announced on the loop's channel: `set()` wakes the loop that hosts it, and the owner
    tells on its next run whether it fired with `consume()`."""

    def __init__(self) -> None:
        self._fired = False
        self._waiters: list[asyncio.Event] = []

    def attach(self, waiter: asyncio.Event) -> None:
        """Wake `waiter` (the hosting loop's) on every `set()`."""
        self._waiters.append(waiter)

    def set(self) -> None:
        self._fired = True
        for waiter in self._waiters:
            waiter.set()

    def consume(self) -> bool:
        """Whether the signal fired since the last call."""
        fired, self._fired = self._fired, False
        return fired


async def wait_for_work(waiter: asyncio.Event, seconds: float) -> None:
    """Sleep until woken or `timeout` passes (idle workers poll at least this often)."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(waiter.wait(), seconds)
    waiter.clear()
