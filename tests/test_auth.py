"""Authentication (401) and authorization (403) per contract section 2."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute

from pressroom.auth import service as auth
from pressroom.auth.scopes import SCOPES
from pressroom.db import unit_of_work
from pressroom.http.routing import _find_requirements
from pressroom.http.routing import api_routes
from pressroom.runtime import Runtime
from tests.factories import SERVER_KEY
from tests.factories import Tenant
from tests.factories import add_member_with_key
from tests.factories import make_tenant


def assert_unauthenticated(response: httpx.Response) -> None:
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["www-authenticate"].startswith("Bearer")
    body = response.json()
    assert body["code"] == "unauthenticated"
    assert body["type"] == "/problems/unauthenticated"
    assert body["requestId"] == response.headers["x-request-id"]


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "Token prk_abc",
        "Bearer not-a-key",
        "Bearer prk_short",
        "Bearer prk_" + "A" * 43,
        "bearer prk_" + "B" * 43,
    ],
    ids=[
        "missing",
        "empty",
        "scheme-only",
        "scheme-and-space",
        "basic-scheme",
        "other-scheme",
        "no-prefix",
        "too-short",
        "unknown-key",
        "unknown-key-lowercase-scheme",
    ],
)
async def test_bad_credentials_are_401(client: httpx.AsyncClient, authorization: str | None):
    headers = {} if authorization is None else {"Authorization": authorization}
    assert_unauthenticated(await client.get("/api/v1/tenant", headers=headers))


async def test_revoked_key_is_401(client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant):
    assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    async with unit_of_work(runtime.sessions) as session:
        await auth.revoke_key(session, tenant.key_id, runtime.notifier)
    assert_unauthenticated(await client.get("/api/v1/tenant", headers=tenant.headers))


async def test_expired_key_is_401(client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant):
    import asyncio

    from pressroom.auth.models import ApiKey
    from pressroom.kit.clock import utcnow

    # Long enough for the first request to land before expiry on a loaded machine.
    short = await add_member_with_key(runtime, tenant.organization_id, expires_in=3)
    assert (await client.get("/api/v1/tenant", headers=short.headers)).status_code == 200
    async with unit_of_work(runtime.sessions) as session:
        row = await session.get(ApiKey, short.key_id)
        assert row is not None and row.expires_at is not None
        expires_at = row.expires_at
    # Expiry is a moment in time: wait for it to pass, then the same key is refused.
    await asyncio.sleep(max(0.0, (expires_at - utcnow()).total_seconds()) + 0.05)
    assert_unauthenticated(await client.get("/api/v1/tenant", headers=short.headers))


async def test_key_of_valid_form_differing_in_one_character_is_401(
    client: httpx.AsyncClient, tenant: Tenant
):
    last = tenant.key[-1]
    forged = tenant.key[:-1] + ("A" if last != "A" else "B")
    assert_unauthenticated(
        await client.get("/api/v1/tenant", headers={"Authorization": f"Bearer {forged}"})
    )


async def test_issued_keys_carry_256_random_bits_and_are_stored_as_digest_only(
    runtime: Runtime, tenant: Tenant
):
    from pressroom.auth.models import ApiKey

    assert re.fullmatch(r"prk_[A-Za-z0-9_-]{43}", tenant.key)
    async with unit_of_work(runtime.sessions) as session:
        row = await session.get(ApiKey, tenant.key_id)
        assert row is not None
        stored = [str(v) for v in vars(row).values()]
    assert not any(tenant.key in value for value in stored)
    assert row.prefix == tenant.key[:12]


def api_operations(app: FastAPI) -> list[tuple[APIRoute, str]]:
    """Every API operation with the scope it declares, from the route table."""
    operations = []
    for route in api_routes(list(app.routes)):
        if route.path.startswith("/api/v1"):
            scope, _ = _find_requirements(route.dependant)
            assert scope is not None, f"{route.operation_id} declares no scope"
            operations.append((route, scope))
    return operations


def _concrete_path(path: str) -> str:
    return re.sub(r"\{[^}]+\}", lambda _m: str(uuid.uuid4()), path)


def test_every_api_operation_declares_a_scope(app: FastAPI):
    operations = api_operations(app)
    assert {route.operation_id for route, _ in operations} >= {"getTenant"}
    for route, scope in operations:
        assert scope in SCOPES, route.operation_id


async def test_every_operation_with_every_wrong_scope_is_403(
    app: FastAPI, client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    checked = 0
    keys: dict[str, Tenant] = {}
    for route, required in api_operations(app):
        for scope in SCOPES:
            if scope == required:
                continue
            if scope not in keys:
                keys[scope] = await add_member_with_key(
                    runtime, tenant.organization_id, role="owner", scopes=[scope]
                )
            for method in route.methods:
                response = await client.request(
                    method, _concrete_path(route.path), headers=keys[scope].headers, json={}
                )
                assert response.status_code == 403, (route.operation_id, scope)
                body = response.json()
                assert body["code"] == "insufficient_scope"
                assert body["requiredScope"] == required
                checked += 1
    assert checked >= 9


async def test_key_with_the_declared_scope_passes(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    only = await add_member_with_key(runtime, tenant.organization_id, scopes=["workspace:read"])
    response = await client.get("/api/v1/tenant", headers=only.headers)
    assert response.status_code == 200
    assert response.json()["credential"]["scopes"] == ["workspace:read"]


async def test_tenant_is_the_keys_own_organization(
    client: httpx.AsyncClient, tenant: Tenant, other_tenant: Tenant
):
    mine = (await client.get("/api/v1/tenant", headers=tenant.headers)).json()
    theirs = (await client.get("/api/v1/tenant", headers=other_tenant.headers)).json()
    assert mine["id"] == str(tenant.organization_id)
    assert theirs["id"] == str(other_tenant.organization_id)
    assert mine["member"]["id"] == str(tenant.member_id)
    assert mine["credential"]["id"] == str(tenant.key_id)
    assert mine["credential"]["prefix"] == tenant.key[:12]
    assert set(mine) == {"id", "name", "createdAt", "member", "credential"}
    assert mine["createdAt"].endswith("Z")


async def test_foreign_object_through_paginated_route_is_invisible(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    other = await make_tenant(runtime, name="Elsewhere")
    listed = (await test_client.get("/api/v1/test/members", headers=tenant.headers)).json()
    ids = {item["id"] for item in listed["items"]}
    assert str(tenant.member_id) in ids
    assert str(other.member_id) not in ids


async def test_key_revoked_by_another_process_is_refused_at_once(
    client: httpx.AsyncClient, tenant: Tenant, database_url: str, tmp_path
):
    """Another node (here the command line) revokes a key this node has just served."""
    import asyncio
    import os
    import sys

    for _ in range(3):
        assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "pressroom",
        "keys",
        "revoke",
        str(tenant.key_id),
        "--json",
        env={
            **os.environ,
            "PRESSROOM_DATABASE_URL": database_url,
            "PRESSROOM_DATA_DIR": str(tmp_path),
            "PRESSROOM_SECRET_KEY": SERVER_KEY,
        },
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await process.communicate()
    assert process.returncode == 0, stderr
    assert_unauthenticated(await client.get("/api/v1/tenant", headers=tenant.headers))


async def test_lost_change_listener_disables_the_principal_cache(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, is_postgres: bool
):
    """If this node could miss a revocation notice, it must not answer from its cache."""
    import asyncio

    from sqlalchemy import text

    if not is_postgres:
        pytest.skip("the principal cache exists only on PostgreSQL")
    assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            text(
                # Only this database's listener: other test processes share the server.
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE query LIKE 'LISTEN%' AND datname = current_database()"
            )
        )
    for _ in range(100):  # the termination reaches the listener asynchronously
        if not runtime.notifier.is_listening(auth.CREDENTIALS_CHANNEL):
            break
        await asyncio.sleep(0.01)
    # Revoked behind the node's back: no notification can reach it.
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            text("UPDATE api_keys SET revoked_at = now() WHERE id = :id"), {"id": tenant.key_id}
        )
    assert_unauthenticated(await client.get("/api/v1/tenant", headers=tenant.headers))
