"""Whether a SQLite file has changed, and what may be kept while it has not.

SQLite's `PRAGMA data_version` changes on a connection whenever another connection, in this
process or any other (`serve`'s worker child, `pressroom keys revoke`), commits a change to the
database. `DataVersion` reads it on a connection of its own that never writes, so every
change it sees counted is a commit by someone: two equal readings mean that nothing was
committed in between. The pragma runs in the caller's thread (the event loop's): it reads a
counter in the database's shared memory, with no wait. A busy database makes it fail at once,
and the reading is then None: the caller does without what it would have kept.

`VersionedCache` keeps values that are a function of the database alone (and of their key):
one is served only while the database is exactly as it was when the value was read."""

from __future__ import annotations

import sqlite3
from collections.abc import Hashable
from typing import Generic
from typing import TypeVar

V = TypeVar("V")


class DataVersion:
    """The change counter of one SQLite file.

    A connection's counter starts anew when the connection is replaced (a failed reading
    closes it): the readings of a new connection continue after every earlier one, so an
    equal reading always means that nothing was committed in between."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._connection: sqlite3.Connection | None = None
        self._fresh = False
        # Added to the current connection's counter; the last reading returned.
        self._offset = 0
        self._last: int | None = None

    def read(self) -> int | None:
        """The counter now, or None when it cannot be read at once."""
        counter = self.read_number("PRAGMA data_version")
        if counter is None:
            return None
        if self._fresh:
            self._fresh = False
            self._offset = 0 if self._last is None else self._last + 1 - counter
        self._last = counter + self._offset
        return self._last

    def read_number(self, query: str) -> int | None:
        """The one number `query` reads, on the same connection, or None when it cannot be
        read at once."""
        # Every row is read, so that no read transaction is left open.
        try:
            if self._connection is None:
                self._connection = _version_connection(self._path)
                self._fresh = True
            rows = self._connection.execute(query).fetchall()
            return int(rows[0][0]) if rows else None
        except sqlite3.Error:
            self.close()
            return None

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()


def _version_connection(path: str) -> sqlite3.Connection:
    # timeout=0: never wait for a lock in the event loop's thread. Any thread may ask (one at
    # a time: the calls are synchronous); query_only: it never writes, so every change it
    # sees counted in data_version is another connection's.
    connection = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA query_only=ON")
    return connection


class VersionedCache(Generic[V]):
    """Values read from the database, each served only at the version read before its reading
    began.

    The reading's snapshot is that version's state or a later one. If it is a later one, a
    commit came in between and the counter has moved: every later reading of it differs from
    the version the value is kept under, and the first of them empties the cache. So a value
    is only ever served while the database is still exactly as the value shows it."""

    def __init__(self, max_entries: int) -> None:
        self._max_entries = max_entries
        self._entries: dict[Hashable, V] = {}
        self._version: int | None = None

    def get(self, version: int, key: Hashable) -> V | None:
        if version != self._version:
            self._entries.clear()
            self._version = version
            return None
        return self._entries.get(key)

    def put(self, version: int, key: Hashable, value: V) -> None:
        """Keep `value`, read after `version` was read, unless the database has moved since."""
        if version != self._version:
            return
        if len(self._entries) >= self._max_entries:
            self._entries.clear()
        self._entries[key] = value
