"""Test databases: the migrations run once per test run into a template, and each pytest
process (each xdist worker, or the one process of a run without workers) gets its own copy.

SQLite: the template is a file in the run's shared temporary directory, copied with SQLite's
backup API. PostgreSQL: the template is a database `pressroom_tmpl_<run>` on the server of
PRESSROOM_TEST_DATABASE_URL, each copy `CREATE DATABASE ... TEMPLATE` of it. The first process
to need the template builds it under a file lock the others wait on; copies are named by
run and worker, so they never collide with each other or with another engineer's run."""

from __future__ import annotations

import asyncio
import fcntl
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pressroom.db import migrate


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Held by one process at a time (every worker of a run is on this machine)."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def sqlite_copy(shared: Path, destination: Path) -> str:
    """A migrated SQLite database at `destination`; its URL."""
    template = shared / "template.db"
    with file_lock(shared / "template.lock"):
        if not (shared / "template.ready").exists():
            migrate(f"sqlite:///{template}")
            (shared / "template.ready").touch()
    destination.parent.mkdir(parents=True, exist_ok=True)
    source, target = sqlite3.connect(template), sqlite3.connect(destination)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    return f"sqlite:///{destination}"


def _server_and_admin_db(server_url: str) -> tuple[str, str]:
    """(server URL without database, the database to run administrative statements in)."""
    base, _, name = server_url.rpartition("/")
    return base, name


async def _admin(server_url: str, *statements: str) -> list[object]:
    """Run each statement in the administrative database; the first column of each
    statement's first row."""
    import asyncpg

    base, admin_db = _server_and_admin_db(server_url)
    dsn = base.replace("postgresql+asyncpg://", "postgresql://") + "/" + admin_db
    connection = await asyncpg.connect(dsn)
    try:
        return [await connection.fetchval(statement) for statement in statements]
    finally:
        await connection.close()


def template_name(run: str) -> str:
    return f"pressroom_tmpl_{run}"


def postgres_copy(server_url: str, shared: Path, run: str, worker: str) -> str:
    """A migrated database of its own for this worker, copied from the run's template; its
    URL."""
    base, _ = _server_and_admin_db(server_url)
    template = template_name(run)
    name = f"pressroom_test_{run}_{worker}"
    with file_lock(shared / "template.lock"):
        if not (shared / "template.ready").exists():
            asyncio.run(_admin(server_url, f'CREATE DATABASE "{template}"'))
            try:
                migrate(f"{base}/{template}")
            except BaseException:
                postgres_drop_template(server_url, run)
                raise
            (shared / "template.ready").touch()
        # Copying needs the template to have no other session: one copy at a time.
        asyncio.run(_admin(server_url, f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
    return f"{base}/{name}"


def postgres_drop(server_url: str, url: str) -> None:
    name = url.rpartition("/")[2]
    asyncio.run(_admin(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def postgres_drop_template(server_url: str, run: str) -> None:
    asyncio.run(_admin(server_url, f'DROP DATABASE IF EXISTS "{template_name(run)}" WITH (FORCE)'))
