"""What tests of values kept while a SQLite file is unchanged share: the file, and a commit
made behind the server's back."""

from __future__ import annotations

import sqlite3

import pytest

from pressroom.db import sqlite_file
from pressroom.runtime import Runtime


def sqlite_path_or_skip(runtime: Runtime, is_postgres: bool, why_not_postgres: str) -> str:
    """The test database's SQLite file; the test is skipped on PostgreSQL."""
    if is_postgres:
        pytest.skip(why_not_postgres)
    path = sqlite_file(runtime.settings.effective_database_url)
    assert path is not None
    return path


def commit_elsewhere(path: str, statement: str, *parameters: object) -> None:
    """Commit `statement` through a connection of its own, as another process would, with no
    notice to the server."""
    connection = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        connection.execute(statement, parameters)
    finally:
        connection.close()
