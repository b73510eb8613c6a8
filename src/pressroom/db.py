"""Engines, sessions, the base model and the column types shared by every domain."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import asynccontextmanager
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any
from typing import TypeVar
from typing import cast

from sqlalchemy import JSON
from sqlalchemy import DateTime
from sqlalchemy import MetaData
from sqlalchemy import Select
from sqlalchemy import Table
from sqlalchemy import event
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.orm import Mapped
from sqlalchemy.orm import mapped_column
from sqlalchemy.types import TypeDecorator
from sqlalchemy.types import Uuid

from pressroom.kit import sqlite_connection
from pressroom.kit.clock import utcnow
from pressroom.kit.ids import uuid7

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC in and out, on SQLite (which stores naive text) as on PostgreSQL."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            # Stored as text; one fixed format keeps text order equal to time order.
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


# JSON on SQLite, JSONB on PostgreSQL.
JSONType = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime, uuid.UUID: Uuid, dict[str, Any]: JSONType}


class IdMixin:
    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid7)


def table_of(model: type[Base]) -> Table:
    """A mapped class's table, for Core statements that skip the unit of work."""
    return cast(Table, model.__table__)


class TimestampMixin:
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=False)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


def async_url(url: str) -> str:
    """Choose the async driver for a plain `sqlite:///` or `postgresql://` URL."""
    if url.startswith("sqlite:///"):
        return "sqlite+aiosqlite:///" + url[len("sqlite:///") :]
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url[len(prefix) :]
    if url.startswith(("sqlite+aiosqlite://", "postgresql+asyncpg://")):
        return url
    raise ValueError("database URL must be sqlite:///PATH or postgresql://USER@HOST:PORT/DB")


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    """An engine whose errors never show statement parameters (`hide_parameters`).

    On SQLite this is the one writer: a single connection, so writers queue in order in the
    pool (a fair queue) instead of polling for the file's lock in SQLite's busy handler, where
    an unlucky request could wait for seconds; reads go to `create_read_engine`."""
    driver_url = async_url(url)
    if driver_url.startswith("sqlite"):
        path = driver_url.split(":///", 1)[1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(
            driver_url,
            **_sqlite_connection_args(driver_url),
            hide_parameters=True,
            pool_size=1,
            max_overflow=0,
            # As long as a write waits for the file's lock held by another process.
            pool_timeout=30,
        )
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        event.listen(engine.sync_engine, "begin", _sqlite_begin_immediate)
        return engine
    return create_async_engine(
        driver_url,
        # A steady pool: overflow connections would be opened and closed under load.
        pool_size=pool_size,
        max_overflow=0,
        pool_timeout=30,
        pool_pre_ping=False,
        connect_args={"server_settings": {"application_name": "pressroom"}},
        # Error messages would otherwise carry every parameter of the failed statement (user
        # content, encrypted secrets) into exceptions and logs.
        hide_parameters=True,
    )


def create_read_engine(url: str, writer: AsyncEngine, *, pool_size: int = 10) -> AsyncEngine:
    """The engine for requests that only read. On a SQLite file: connections of their own
    beside the writer, read-only (`query_only`), each transaction a deferred one that sees one
    snapshot of the database and, in WAL mode, never waits for a writer nor makes one wait.
    Elsewhere (PostgreSQL, an in-memory database) the writer's engine itself."""
    driver_url = async_url(url)
    if not driver_url.startswith("sqlite") or driver_url.endswith(":memory:"):
        return writer
    engine = create_async_engine(
        driver_url,
        **_sqlite_connection_args(driver_url),
        hide_parameters=True,
        pool_size=pool_size,
        max_overflow=0,
        pool_timeout=30,
    )
    event.listen(engine.sync_engine, "connect", _sqlite_reader_pragmas)
    event.listen(engine.sync_engine, "begin", _sqlite_begin_deferred)
    return engine


def sqlite_file(url: str) -> str | None:
    """The file of a SQLite database URL; None for PostgreSQL or an in-memory database."""
    driver_url = async_url(url)
    if not driver_url.startswith("sqlite"):
        return None
    path = driver_url.split(":///", 1)[1]
    if not path or path == ":memory:" or "?" in path:
        return None
    return path


def _sqlite_connection_args(url: str) -> dict[str, Any]:
    """How an engine connects to a SQLite database: a file through `BufferedConnection` (one
    trip to the connection's thread per statement, not four)."""
    path = sqlite_file(url)
    if path is None:
        return {"connect_args": {"timeout": 30}}
    return {"async_creator": sqlite_connection.connector(path, timeout=30)}


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Take over transaction control from the sqlite3 module so BEGIN is ours.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_reader_pragmas(dbapi_connection: Any, record: Any) -> None:
    _sqlite_pragmas(dbapi_connection, record)
    cursor = dbapi_connection.cursor()
    # A request that only reads must not write: a write here fails loudly.
    cursor.execute("PRAGMA query_only=ON")
    cursor.close()


def _sqlite_begin_immediate(connection: Any) -> None:
    # Writers take the lock up front, so two transactions never deadlock upgrading
    # from a read to a write lock; SQLite serializes them through busy_timeout.
    # Autocommit connections (Runtime.reader: long reports) open no transaction at all, so
    # a read never holds the write lock.
    if connection.get_execution_options().get("isolation_level") == "AUTOCOMMIT":
        return
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def _sqlite_begin_deferred(connection: Any) -> None:
    # A read transaction: its first statement fixes its snapshot; it takes no write lock.
    if connection.get_execution_options().get("isolation_level") == "AUTOCOMMIT":
        return
    connection.exec_driver_sql("BEGIN")


_S = TypeVar("_S", bound=Select[Any])


def is_postgres(engine: AsyncEngine) -> bool:
    return engine.dialect.name == "postgresql"


def dialect_name(session: AsyncSession) -> str:
    """`postgresql` or `sqlite`: the database this session talks to."""
    return session.get_bind().dialect.name


def locked(session: AsyncSession, statement: _S, *, lock: bool = True) -> _S:
    """`statement` locking its rows for update on PostgreSQL, reloading rows the session
    already holds. SQLite serializes writers, so there is nothing to lock there."""
    if lock and dialect_name(session) == "postgresql":
        return statement.with_for_update().execution_options(populate_existing=True)
    return statement


_Row = TypeVar("_Row")
_IdRow = TypeVar("_IdRow", bound=IdMixin)


async def one_row(
    session: AsyncSession, statement: Select[_Row], *, lock: bool = False
) -> _Row | None:
    """The one row `statement` selects, or None; locked for update when `lock` (`locked`)."""
    return (await session.scalars(locked(session, statement, lock=lock))).one_or_none()


async def row_with_id(
    session: AsyncSession, scope: Select[_IdRow], row_id: uuid.UUID, *, lock: bool = False
) -> _IdRow | None:
    """The row of `scope` whose id is `row_id`, or None; locked for update when `lock`."""
    return await one_row(session, scope.filter_by(id=row_id), lock=lock)


async def rows_by_id(
    session: AsyncSession, statement: Select[_IdRow], *, lock: bool = False
) -> dict[uuid.UUID, _IdRow]:
    """The rows `statement` selects, by id; locked for update when `lock` (`locked`)."""
    return {row.id: row for row in await session.scalars(locked(session, statement, lock=lock))}


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=True)


@asynccontextmanager
async def unit_of_work(
    sessions: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    """One transaction: committed when the block ends, rolled back on any exception.

    Used by the command line and the workers; requests get theirs from the route layer."""
    async with sessions() as session, session.begin():
        yield session


def migrate(
    url: str, revision: str = "heads", *, on_applied: Callable[[str], object] | None = None
) -> list[str]:
    """Apply Alembic migrations (blocking; runs its own event loop); the ids of the revisions
    applied, in order (none when the database was up to date). `on_applied` hears each id as
    soon as its migration is done, for progress output."""
    from alembic import command
    from alembic.config import Config

    driver_url = async_url(url)
    if driver_url.startswith("sqlite"):
        Path(driver_url.split(":///", 1)[1]).parent.mkdir(parents=True, exist_ok=True)
    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    config.set_main_option("sqlalchemy.url", driver_url)
    applied: list[str] = []

    def heard(revision_id: str) -> None:
        applied.append(revision_id)
        if on_applied is not None:
            on_applied(revision_id)

    # migrations/env.py calls this after each applied revision.
    config.attributes["on_revision_applied"] = heard
    command.upgrade(config, revision)
    return applied
