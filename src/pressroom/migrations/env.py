"""Alembic environment: runs migrations on the async engine of either database."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from collections.abc import Mapping
from typing import Any

from alembic import context
from alembic.runtime.migration import MigrationContext
from alembic.runtime.migration import MigrationInfo
from sqlalchemy import pool
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from pressroom.tables import Base

config = context.config
target_metadata = Base.metadata


def _report_applied(
    ctx: MigrationContext, step: MigrationInfo, heads: Collection[Any], run_args: Mapping[str, Any]
) -> None:
    # pressroom.db.migrate listens, to say which revisions a run applied.
    listener = config.attributes.get("on_revision_applied")
    if listener is not None and step.is_upgrade and not step.is_stamp:
        listener(step.up_revision_id)


# Tables a migration keeps outside the models, left out of the comparison with them: SQLite's
# count of credential changes (0015), written by triggers alone.
_UNMODELLED = frozenset({"credential_changes"})


def _include_name(name: str | None, type_: str, _parents: Any) -> bool:
    return not (type_ == "table" and name in _UNMODELLED)


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things: batch mode recreates the table.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        include_name=_include_name,
        on_version_apply=_report_applied,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    engine = create_async_engine(
        config.get_main_option("sqlalchemy.url") or "", poolclass=pool.NullPool
    )
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    asyncio.run(_run_async())


run_migrations_online()
