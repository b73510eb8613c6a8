"""credential changes on SQLite: a counter moved by every change to what a principal is made of

Revision ID: 0015_credential_changes
Revises: 0014_analytics_rollups
Create Date: 2026-12-07 03:00:00.000000

On a SQLite file the API keeps the principals of recently seen keys while nothing they are made
of has changed (auth/service.py, SQLitePrincipalCache). `credential_changes` holds one row whose
`count` triggers move on every UPDATE or DELETE of `api_keys`, `members` and `organizations`,
by any connection of any process (`pressroom keys revoke`, the console, the API). An INSERT
changes no principal already kept (a new key is looked up the first time it is seen), so it
moves nothing. PostgreSQL's principal cache listens for notifications instead: nothing is
created there.

A later migration that rebuilds one of those tables on SQLite (`batch_alter_table` copies it
to a new table) drops its triggers and must create them again; tests/test_sqlite_principal_
cache.py checks that every one exists at the head revision.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015_credential_changes"
down_revision: str | Sequence[str] | None = "0014_analytics_rollups"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_MOVE = "UPDATE credential_changes SET count = count + 1 WHERE id = 1"
# (trigger, table, event): constants, no outside input.
_TRIGGERS = [
    (f"credential_changes_{table}_{event.lower()}", table, event)
    for table in ("api_keys", "members", "organizations")
    for event in ("UPDATE", "DELETE")
]


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(
        "CREATE TABLE credential_changes ("
        "id INTEGER PRIMARY KEY CHECK (id = 1), count INTEGER NOT NULL)"
    )
    op.execute("INSERT INTO credential_changes (id, count) VALUES (1, 0)")
    for name, table, event in _TRIGGERS:
        op.execute(
            f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW BEGIN {_MOVE}; END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for name, _, _ in _TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.execute("DROP TABLE IF EXISTS credential_changes")
