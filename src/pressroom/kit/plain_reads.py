"""The hottest reads on PostgreSQL, on a small pool of plain asyncpg connections.

A read through the ORM's session, connection pool and result machinery costs the server a
few times the database's own work: checking a connection out and in, a transaction's
bookkeeping even in autocommit, a result object, type processing for every value. The two
reads every client repeats (the API key's lookup, a page of posts) run here instead: one
autocommit SELECT each, as a statement asyncpg prepares once per connection.

`rows` takes a Core statement as the rest of the code builds it: it is compiled once (the
callers cache their statements) to PostgreSQL's SQL, and its parameters go through the same
type processing the ORM applies. Each row answers by column name, like SQLAlchemy's rows."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.sql import Select

_DIALECT = PGDialect_asyncpg()  # type: ignore[no-untyped-call]
# Statements kept compiled: far more than the callers' filter shapes.
_MAX_STATEMENTS = 256


class _Compiled:
    """A statement's SQL, the order and processing of its parameters, its row type."""

    def __init__(self, statement: Select[Any]) -> None:
        compiled = statement.compile(dialect=_DIALECT)
        self.sql = str(compiled)
        self.parameters: list[tuple[str, Callable[[Any], Any] | None]] = [
            (name, compiled.binds[name].type.bind_processor(_DIALECT))
            for name in compiled.positiontup or []
        ]
        self.row: Any = namedtuple("Row", statement.selected_columns.keys())  # type: ignore[misc]

    def arguments(self, values: Mapping[str, Any]) -> list[Any]:
        return [
            value if process is None else process(value)
            for name, process in self.parameters
            for value in [values[name]]
        ]


class PlainReads:
    """A pool of at most `size` plain connections to the PostgreSQL database at `url`."""

    def __init__(self, url: str, size: int = 16) -> None:
        self._url = url.replace("postgresql+asyncpg://", "postgresql://", 1)
        self._size = size
        self._pool: Any = None
        self._compiled: dict[Select[Any], _Compiled] = {}

    async def _get_pool(self) -> Any:
        if self._pool is None:
            import asyncpg

            self._pool = await asyncpg.create_pool(
                self._url,
                min_size=1,
                max_size=self._size,
                server_settings={"application_name": "pressroom-reads"},
                # These connections only ever run autocommit SELECTs: there is no session
                # state to reset, so skip the extra round trip on release.
                reset=_keep_connection_as_is,
            )
        return self._pool

    async def fetchrow(self, sql: str, *arguments: Any) -> Any:
        pool = await self._get_pool()
        async with pool.acquire() as connection:
            return await connection.fetchrow(sql, *arguments)

    async def rows(self, statement: Select[Any], values: Mapping[str, Any]) -> list[Any]:
        """The rows of a Core `statement` built once and reused, with its bound `values`."""
        compiled = self._compiled.get(statement)
        if compiled is None:
            if len(self._compiled) >= _MAX_STATEMENTS:
                self._compiled.clear()
            compiled = self._compiled[statement] = _Compiled(statement)
        pool = await self._get_pool()
        async with pool.acquire() as connection:
            records = await connection.fetch(compiled.sql, *compiled.arguments(values))
        make = compiled.row._make
        return [make(record) for record in records]

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None


async def _keep_connection_as_is(_connection: Any) -> None:
    return None
