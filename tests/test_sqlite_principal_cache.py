"""On a SQLite file, principals are cached while the database is unchanged: a change committed
by any other connection, of this process or another, takes effect on the next request."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import event

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


async def test_a_commit_elsewhere_to_any_table_empties_the_cache(
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
