"""An aiosqlite connection that runs each statement in one trip to its thread.

aiosqlite runs every call of a connection on the connection's own thread, one trip per call.
Through SQLAlchemy a statement is four of them (open a cursor, execute, fetch the rows, close
the cursor), and each trip costs more than a small statement itself: a future, a wake-up of
the event loop from the other thread and two handovers of the GIL. Here a cursor executes,
fetches up to `FIRST_ROWS` rows and closes in the same trip; only a larger result (a report
streamed in chunks) goes back for the rest. Errors and results are those of sqlite3 itself.

`BEGIN IMMEDIATE` (a writer asking for the database's write lock) polls for the lock in short
steps on the connection's thread instead of leaving the wait to SQLite's busy handler, whose
sleeps grow to 100 ms however soon the lock is released: with another process writing (the
workers of `serve`), a writer then waits for the lock about as long as it is held, not up to a
tenth of a second more each time.

A transaction's `BEGIN` travels with its first statement, and a commit or rollback with no
transaction open (a pool returning a connection after its commit) makes no trip: an empty
write transaction took four trips, and now takes two.

A write marked `write_behind` (an INSERT or UPDATE whose caller needs neither its row count
nor its error on the spot) is held inside an open transaction and sent in the trip of the
transaction's next statement or of its commit, before it and in order: createPost's eight
writes travel with its three reads and its commit. If a held write fails, its error is that
statement's or the commit's, the writes after it are not run and the transaction is left
open to be rolled back, as when the write failed on its own (at the commit, the transaction
is rolled back, as a failed commit ends it on PostgreSQL); a rollback drops what is held.
Outside a transaction a marked write runs at once.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any
from typing import TypeVar
from typing import cast

import aiosqlite
from sqlalchemy import Insert
from sqlalchemy import Update

_T = TypeVar("_T")
_BEGIN = frozenset({"BEGIN", "BEGIN IMMEDIATE"})
# The comment that marks a write as one to hold (`write_behind`), right after its verb.
WRITE_BEHIND = "/* write-behind */"
_HELD_WRITES = (f"INSERT {WRITE_BEHIND} ", f"UPDATE {WRITE_BEHIND} ")
_W = TypeVar("_W", bound="Insert | Update")

# Rows fetched with the statement; a result this long or longer is read on in further trips.
FIRST_ROWS = 1024
# Polling for the write lock: the first and the longest pause between two tries.
_LOCK_POLL_FIRST = 0.0002
_LOCK_POLL_MAX = 0.002


def take_write_lock(connection: sqlite3.Connection) -> None:
    """`BEGIN IMMEDIATE`, retried in short steps while another connection holds the write
    lock, for as long as the connection's busy timeout (then SQLite's own "database is
    locked", as before)."""
    (timeout_ms,) = connection.execute("PRAGMA busy_timeout").fetchone()
    connection.execute("PRAGMA busy_timeout=0")
    try:
        deadline = time.monotonic() + timeout_ms / 1000
        pause = _LOCK_POLL_FIRST
        while True:
            try:
                connection.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                if error.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, _LOCK_POLL_MAX)
    finally:
        connection.execute(f"PRAGMA busy_timeout={int(timeout_ms)}")


def write_behind(statement: _W) -> _W:
    """`statement` (an INSERT or UPDATE without RETURNING) marked, on SQLite, to be sent with
    the transaction's next statement or its commit: for a write whose row count and error its
    caller does not need at once. Unchanged on other databases."""
    return cast(_W, statement.prefix_with(WRITE_BEHIND, dialect="sqlite"))


# A held write: the statement, its parameters, and whether they are many rows' (executemany).
_HeldWrite = tuple[str, Any, bool]


class BufferedCursor:
    """The subset of aiosqlite's cursor that SQLAlchemy uses, with the rows buffered."""

    def __init__(self, connection: BufferedConnection) -> None:
        self._connection = connection
        self._cursor: sqlite3.Cursor | None = None
        self._rows: list[Any] = []
        self.description: Any = None
        self.rowcount = -1
        self.lastrowid: int | None = None
        self.arraysize = 1

    async def __aenter__(self) -> BufferedCursor:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    def _run(self, call: Callable[[sqlite3.Cursor], object]) -> None:
        # On the connection's thread: execute, keep what the caller will ask for, and close
        # the cursor unless rows remain.
        cursor = self._connection._conn.cursor()
        try:
            call(cursor)
            self.description = cursor.description
            self.rowcount = cursor.rowcount
            self.lastrowid = cursor.lastrowid
            if cursor.description is not None:
                self._rows = cursor.fetchmany(FIRST_ROWS)
                if len(self._rows) == FIRST_ROWS:
                    self._cursor = cursor
                    return
        except BaseException:
            cursor.close()
            raise
        cursor.close()

    async def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> BufferedCursor:
        if sql in _BEGIN and not parameters:
            # Sent with the next statement, in its trip.
            self._connection._pending_begin = sql
            return self
        if sql.startswith(_HELD_WRITES) and self._connection.hold(sql, parameters or (), False):
            self._held()
            return self
        await self._connection.run_statement(
            lambda: self._run(lambda c: c.execute(sql, parameters or ()))
        )
        return self

    async def executemany(self, sql: str, parameters: Iterable[Sequence[Any]]) -> BufferedCursor:
        if sql.startswith(_HELD_WRITES):
            rows = list(parameters)
            if self._connection.hold(sql, rows, True):
                self._held()
                return self
            parameters = rows
        await self._connection.run_statement(
            lambda: self._run(lambda c: c.executemany(sql, parameters))
        )
        return self

    def _held(self) -> None:
        # A held write has no rows, and its row count is not known yet.
        self.description = None
        self.rowcount = -1
        self.lastrowid = None
        self._rows = []

    async def _more(self, size: int | None) -> list[Any]:
        cursor = self._cursor
        if cursor is None:
            return []
        rows = await self._connection.run(
            cursor.fetchall if size is None else lambda: cursor.fetchmany(size)
        )
        if size is None or len(rows) < size:
            await self.close()
        return rows

    async def fetchall(self) -> list[Any]:
        rows, self._rows = self._rows, []
        return rows + await self._more(None)

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        size = size or self.arraysize
        if len(self._rows) < size:
            self._rows += await self._more(max(size - len(self._rows), FIRST_ROWS))
        rows, self._rows = self._rows[:size], self._rows[size:]
        return rows

    async def fetchone(self) -> Any:
        rows = await self.fetchmany(1)
        return rows[0] if rows else None

    async def close(self) -> None:
        cursor, self._cursor = self._cursor, None
        if cursor is not None:
            await self._connection.run(cursor.close)


class BufferedConnection(aiosqlite.Connection):
    """An aiosqlite connection whose cursors are `BufferedCursor`s."""

    # The BEGIN of a transaction no statement has run in yet.
    _pending_begin: str | None = None
    # The writes held for the transaction's next trip (`write_behind`), in order.
    _held_writes: list[_HeldWrite] | None = None

    def cursor(self) -> BufferedCursor:  # type: ignore[override]
        return BufferedCursor(self)

    def hold(self, sql: str, parameters: Any, many: bool) -> bool:
        """Hold a marked write for the next trip; False (run it now) outside a transaction.

        `in_transaction` reads SQLite's autocommit flag: no statement is running on the
        connection's thread while its one user is here."""
        if self._pending_begin is None and not self._conn.in_transaction:
            return False
        if self._held_writes is None:
            self._held_writes = []
        self._held_writes.append((sql, parameters, many))
        return True

    def _opening(self, *, committing: bool = False) -> Callable[[], None] | None:
        """What the next trip runs first: the pending BEGIN and the held writes, taken from
        this connection (a write that fails drops those after it); None when nothing is. A
        commit drops a BEGIN no statement followed: that transaction wrote nothing."""
        begin, self._pending_begin = self._pending_begin, None
        writes, self._held_writes = self._held_writes, None
        if (begin is None or committing) and not writes:
            return None
        connection = self._conn

        def open_and_write() -> None:
            if begin == "BEGIN IMMEDIATE":
                take_write_lock(connection)
            elif begin is not None:
                connection.execute(begin)
            for sql, parameters, many in writes or ():
                cursor = connection.cursor()
                try:
                    if many:
                        cursor.executemany(sql, parameters)
                    else:
                        cursor.execute(sql, parameters)
                finally:
                    cursor.close()

        return open_and_write

    async def run_statement(self, call: Callable[[], _T]) -> _T:
        """`call()` on the connection's thread, after the transaction's BEGIN if it is yet to
        be sent and the writes held for it (one trip)."""
        opening = self._opening()
        if opening is None:
            return await self.run(call)

        def open_then_call() -> _T:
            opening()
            return call()

        return await self.run(open_then_call)

    async def commit(self) -> None:
        opening = self._opening(committing=True)
        if opening is not None:
            connection = self._conn

            def open_then_commit() -> None:
                try:
                    opening()
                except BaseException:
                    # The commit failed: the transaction ends with it, as on PostgreSQL.
                    if connection.in_transaction:
                        connection.rollback()
                    raise
                if connection.in_transaction:
                    connection.commit()

            await self.run(open_then_commit)
        elif self._conn.in_transaction:
            await super().commit()

    async def rollback(self) -> None:
        self._pending_begin = self._held_writes = None
        if self._conn.in_transaction:
            await super().rollback()

    async def run(self, call: Callable[[], _T]) -> _T:
        """`call()` on the connection's thread (one trip)."""
        return await self._execute(call)  # type: ignore[no-any-return,no-untyped-call]


def connector(path: str, **options: Any) -> Callable[[], Any]:
    """The `async_creator` of an engine on the SQLite file at `path` (sqlite3 options such as
    `timeout`): a `BufferedConnection`, its thread a daemon as aiosqlite's own are under
    SQLAlchemy."""

    async def connect() -> BufferedConnection:
        connection = BufferedConnection(lambda: sqlite3.connect(path, **options), 64)
        connection._thread.daemon = True
        await connection
        return connection

    return connect
