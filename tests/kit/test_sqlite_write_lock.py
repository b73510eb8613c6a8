"""The write lock of the embedded database, taken by polling (kit/sqlite_connection.py)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from pressroom.kit.sqlite_connection import take_write_lock


def connect(path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
    return connection


def test_the_lock_is_taken_soon_after_another_writer_commits(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    holder, waiter = connect(path, 30_000), connect(path, 30_000)
    holder.execute("CREATE TABLE t (x INTEGER)")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO t VALUES (1)")
    released = threading.Event()
    released_at: list[float] = []

    def release() -> None:
        time.sleep(0.3)
        holder.execute("COMMIT")
        released_at.append(time.monotonic())
        released.set()

    threading.Thread(target=release).start()
    take_write_lock(waiter)
    taken = time.monotonic()
    assert released.is_set()
    assert waiter.in_transaction
    # It sees the other writer's commit and writes after it.
    waiter.execute("INSERT INTO t VALUES (2)")
    waiter.execute("COMMIT")
    assert [row[0] for row in holder.execute("SELECT x FROM t ORDER BY x")] == [1, 2]
    # The wait ended within a few milliseconds of the release, not at a busy handler's next
    # sleep (up to 100 ms), and the connection's busy timeout is as it was.
    assert taken - released_at[0] < 0.05
    assert waiter.execute("PRAGMA busy_timeout").fetchone() == (30_000,)


def test_a_lock_held_past_the_busy_timeout_is_the_usual_error(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    holder, waiter = connect(path, 30_000), connect(path, 150)
    holder.execute("BEGIN IMMEDIATE")
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="database is locked"):
        take_write_lock(waiter)
    waited = time.monotonic() - started
    assert 0.14 <= waited < 2
    assert not waiter.in_transaction
    assert waiter.execute("PRAGMA busy_timeout").fetchone() == (150,)
    holder.execute("ROLLBACK")
