"""The write lock of the embedded database, taken by polling, the trips a transaction makes to
its connection's thread, and the writes held for a later trip (kit/sqlite_connection.py)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
import sqlalchemy.exc
from sqlalchemy.dialects import postgresql as postgresql_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect

from pressroom.db import create_engine
from pressroom.kit.sqlite_connection import BufferedConnection
from pressroom.kit.sqlite_connection import connector
from pressroom.kit.sqlite_connection import take_write_lock
from pressroom.kit.sqlite_connection import write_behind


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
    committing_at: list[float] = []
    released_at: list[float] = []

    def release() -> None:
        time.sleep(0.3)
        committing_at.append(time.monotonic())
        holder.execute("COMMIT")
        released_at.append(time.monotonic())

    releaser = threading.Thread(target=release)
    releaser.start()
    take_write_lock(waiter)
    taken = time.monotonic()
    # The waiter may run before the releasing thread is scheduled again after its COMMIT, so
    # the commit's end is read once that thread is done; the lock was never taken before the
    # COMMIT began.
    releaser.join(timeout=10)
    assert committing_at and released_at
    assert taken > committing_at[0]
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


def _trips(connection: BufferedConnection) -> list[str]:
    """The trips to the connection's thread from now on, by the method that made them."""
    made: list[str] = []
    execute = connection._execute

    async def counted(call: Any, *arguments: Any) -> Any:
        made.append(getattr(call, "__name__", "call"))
        return await execute(call, *arguments)

    connection._execute = counted  # type: ignore[method-assign]
    return made


async def test_a_transaction_begins_with_its_first_statement_in_one_trip(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    connect(path, 30_000).execute("CREATE TABLE t (x INTEGER)")
    connection = await connector(str(path), timeout=30)()
    other = connect(path, 0)
    try:
        trips = _trips(connection)
        cursor = connection.cursor()
        await cursor.execute("BEGIN IMMEDIATE")
        # Nothing sent yet: the database is not locked.
        assert trips == [] and not connection.in_transaction
        await cursor.execute("INSERT INTO t VALUES (1)")
        assert len(trips) == 1 and connection.in_transaction
        # The write lock was taken with that statement: another writer is refused.
        with pytest.raises(sqlite3.OperationalError, match="database is locked"):
            other.execute("INSERT INTO t VALUES (2)")
        await connection.commit()
        assert trips == ["open_then_call", "commit"] and not connection.in_transaction
        # A rollback or commit with no transaction open (a pool's reset) makes no trip; a
        # BEGIN no statement followed leaves nothing behind.
        await connection.rollback()
        await cursor.execute("BEGIN")
        await connection.commit()
        await connection.rollback()
        assert len(trips) == 2
        await cursor.execute("SELECT x FROM t")
        assert await cursor.fetchall() == [(1,)]
        assert not connection.in_transaction  # that SELECT ran outside any transaction
    finally:
        other.close()
        await connection.close()


async def test_a_statement_that_fails_leaves_its_transaction_to_roll_back(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    connect(path, 30_000).execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
    connection = await connector(str(path), timeout=30)()
    try:
        cursor = connection.cursor()
        await cursor.execute("BEGIN IMMEDIATE")
        await cursor.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(sqlite3.IntegrityError):
            await cursor.execute("INSERT INTO t VALUES (1)")
        assert connection.in_transaction
        await connection.rollback()
        assert not connection.in_transaction
        await cursor.execute("SELECT count(*) FROM t")
        assert await cursor.fetchall() == [(0,)]
    finally:
        await connection.close()


_T = sqlalchemy.table("t", sqlalchemy.column("x"))
_HELD_INSERT = write_behind(sqlalchemy.insert(_T).values(x=sqlalchemy.bindparam("x")))


def _sql(statement: Any, dialect: Any) -> str:
    return str(statement.compile(dialect=dialect))


def test_a_write_is_marked_on_sqlite_only() -> None:
    assert _sql(_HELD_INSERT, sqlite_dialect.dialect()).startswith("INSERT /* write-behind */ ")
    assert _sql(_HELD_INSERT, postgresql_dialect.dialect()).startswith("INSERT INTO t ")


async def _engine_on(path: Path) -> Any:
    connect(path, 30_000).execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
    return create_engine(f"sqlite:///{path}")


async def test_held_writes_travel_with_the_next_statement_and_the_commit(tmp_path: Path) -> None:
    engine = await _engine_on(tmp_path / "db.sqlite")
    other = connect(tmp_path / "db.sqlite", 0)
    try:
        async with engine.connect() as connection:
            raw = (await connection.get_raw_connection()).driver_connection
            trips = _trips(raw)
            async with connection.begin():
                await connection.execute(_HELD_INSERT, {"x": 1})
                await connection.execute(_HELD_INSERT, [{"x": 2}, {"x": 3}])
                # Nothing sent: not even the BEGIN, and no other writer is kept out yet.
                assert trips == []
                assert other.execute("SELECT count(*) FROM t").fetchone() == (0,)
                seen = await connection.execute(sqlalchemy.text("SELECT x FROM t ORDER BY x"))
                assert [row[0] for row in seen] == [1, 2, 3]
                assert trips == ["open_then_call"]
                await connection.execute(_HELD_INSERT, {"x": 4})
            # The commit carried the last write.
            assert trips == ["open_then_call", "open_then_commit"]
        assert [row[0] for row in other.execute("SELECT x FROM t ORDER BY x")] == [1, 2, 3, 4]
    finally:
        other.close()
        await engine.dispose()


async def test_a_held_write_that_fails_fails_its_transaction(tmp_path: Path) -> None:
    engine = await _engine_on(tmp_path / "db.sqlite")
    other = connect(tmp_path / "db.sqlite", 0)
    try:
        async with engine.connect() as connection:
            transaction = await connection.begin()
            await connection.execute(_HELD_INSERT, {"x": 1})
            await connection.execute(_HELD_INSERT, {"x": 1})  # the same key: refused when sent
            await connection.execute(_HELD_INSERT, {"x": 2})
            with pytest.raises(sqlalchemy.exc.IntegrityError, match="UNIQUE"):
                await connection.execute(sqlalchemy.text("SELECT 1"))
            # The write after the failed one never ran; the first is taken back.
            raw = (await connection.get_raw_connection()).driver_connection
            assert raw.in_transaction
            await transaction.rollback()
            assert other.execute("SELECT count(*) FROM t").fetchone() == (0,)
            # At the commit: the error is the commit's, and nothing is committed.
            transaction = await connection.begin()
            await connection.execute(_HELD_INSERT, {"x": 5})
            await connection.execute(_HELD_INSERT, {"x": 5})
            with pytest.raises(sqlalchemy.exc.IntegrityError, match="UNIQUE"):
                await transaction.commit()
            assert other.execute("SELECT count(*) FROM t").fetchone() == (0,)
            assert not raw.in_transaction
    finally:
        other.close()
        await engine.dispose()


async def test_a_rollback_drops_held_writes_and_outside_a_transaction_they_run(
    tmp_path: Path,
) -> None:
    engine = await _engine_on(tmp_path / "db.sqlite")
    try:
        async with engine.connect() as connection:
            raw = (await connection.get_raw_connection()).driver_connection
            trips = _trips(raw)
            transaction = await connection.begin()
            await connection.execute(_HELD_INSERT, {"x": 1})
            await transaction.rollback()
            assert trips == []  # nothing had been sent: nothing to undo
            auto = await connection.execution_options(isolation_level="AUTOCOMMIT")
            await auto.execute(_HELD_INSERT, {"x": 7})
            assert len(trips) == 1  # at once, in its own trip
        other = connect(tmp_path / "db.sqlite", 0)
        assert [row[0] for row in other.execute("SELECT x FROM t")] == [7]
        other.close()
    finally:
        await engine.dispose()
