"""On a SQLite file, principals are cached while no key, member or organization has changed: such
a change committed by any other connection, of this process or another, takes effect on the
next request; commits to anything else keep the cache."""

from __future__ import annotations

import sqlite3
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from pressroom.kit import data_version
from pressroom.runtime import Runtime
from tests.factories import Tenant
from tests.sqlite_files import commit_elsewhere
from tests.sqlite_files import sqlite_path_or_skip


@pytest.fixture
def sqlite_path(runtime: Runtime, is_postgres: bool) -> str:
    return sqlite_path_or_skip(
        runtime, is_postgres, "PostgreSQL's principal cache listens for changes instead"
    )


def _key_lookups(runtime: Runtime) -> list[str]:
    """The key lookups the server runs from now on."""
    seen: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        if "api_keys" in statement:
            seen.append(statement)

    engine = runtime.read_engine or runtime.engine
    event.listen(engine.sync_engine, "before_cursor_execute", record)
    return seen


async def test_repeated_requests_are_answered_from_the_cache(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, sqlite_path: str
):
    assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    lookups = _key_lookups(runtime)
    for _ in range(3):
        assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    assert lookups == []


async def test_a_key_revoked_behind_the_servers_back_is_refused_at_once(
    client: httpx.AsyncClient, tenant: Tenant, sqlite_path: str
):
    for _ in range(2):
        assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    commit_elsewhere(
        sqlite_path,
        "UPDATE api_keys SET revoked_at = '2026-01-01 00:00:00.000000' WHERE id = ?",
        tenant.key_id.hex,
    )
    assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 401


async def test_a_role_changed_elsewhere_shows_on_the_next_request(
    client: httpx.AsyncClient, tenant: Tenant, sqlite_path: str
):
    before = await client.get("/api/v1/tenant", headers=tenant.headers)
    assert before.json()["member"]["role"] == "owner"
    commit_elsewhere(
        sqlite_path, "UPDATE members SET role = 'member' WHERE id = ?", tenant.member_id.hex
    )
    after = await client.get("/api/v1/tenant", headers=tenant.headers)
    assert after.json()["member"]["role"] == "member"


async def test_an_organization_changed_elsewhere_empties_the_cache(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, sqlite_path: str
):
    assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    lookups = _key_lookups(runtime)
    commit_elsewhere(
        sqlite_path,
        "UPDATE organizations SET name = 'Renamed' WHERE id = ?",
        tenant.organization_id.hex,
    )
    after = await client.get("/api/v1/tenant", headers=tenant.headers)
    assert after.json()["name"] == "Renamed"
    assert len(lookups) == 1


async def test_a_key_deleted_elsewhere_is_refused_at_once(
    client: httpx.AsyncClient, tenant: Tenant, sqlite_path: str
):
    for _ in range(2):
        assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    commit_elsewhere(sqlite_path, "DELETE FROM api_keys WHERE id = ?", tenant.key_id.hex)
    assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 401


async def test_commits_to_other_tables_keep_the_cache(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, sqlite_path: str
):
    """The database moves under a steady load of writes (posts, events, the worker's
    deliveries): the principal is looked up again only when what it is made of changed."""
    assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    lookups = _key_lookups(runtime)
    versions = runtime.data_version
    assert versions is not None
    before = versions.read()
    created = await client.post(
        "/api/v1/webhooks",
        json={"url": "https://receiver.example.com/hook", "events": ["post.created.v1"]},
        headers=tenant.headers,
    )
    assert created.status_code == 201
    commit_elsewhere(sqlite_path, "UPDATE webhook_endpoints SET enabled = 0")
    assert versions.read() != before  # the file changed
    assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    assert lookups == []


async def test_every_credential_trigger_exists_at_the_head_revision(
    runtime: Runtime, sqlite_path: str
):
    """A migration that rebuilds one of these tables on SQLite drops its triggers: it must
    create them again (migration 0015)."""
    connection = sqlite3.connect(sqlite_path)
    try:
        names = {
            row[0]
            for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' "
                "AND name LIKE 'credential_changes_%'"
            )
        }
        counted = connection.execute("SELECT id, count FROM credential_changes").fetchall()
    finally:
        connection.close()
    assert names == {
        f"credential_changes_{table}_{event}"
        for table in ("api_keys", "members", "organizations")
        for event in ("update", "delete")
    }
    assert len(counted) == 1 and counted[0][0] == 1


async def test_a_reading_on_a_new_connection_is_never_taken_for_the_last_one(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    sqlite_path: str,
    monkeypatch: pytest.MonkeyPatch,
):
    """A connection's change counter starts anew: after the version's connection is replaced,
    its counter may show the very value the last one did, yet the readings differ, and the
    count of credential changes is read again."""
    for _ in range(2):
        assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    versions = runtime.data_version
    assert versions is not None
    assert versions._connection is not None
    (counter,) = versions._connection.execute("PRAGMA data_version").fetchone()
    versions.close()  # a failed reading closes it: the next opens another
    commit_elsewhere(
        sqlite_path,
        "UPDATE api_keys SET revoked_at = '2026-01-01 00:00:00.000000' WHERE id = ?",
        tenant.key_id.hex,
    )
    opened = data_version._version_connection

    class Coinciding:
        """The new connection, its counter showing the last connection's value."""

        def __init__(self, connection: sqlite3.Connection) -> None:
            self._connection = connection

        def execute(self, query: str) -> Any:
            if query == "PRAGMA data_version":
                return self._connection.execute("SELECT ?", (counter,))
            return self._connection.execute(query)

        def close(self) -> None:
            self._connection.close()

    monkeypatch.setattr(data_version, "_version_connection", lambda path: Coinciding(opened(path)))
    assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 401
