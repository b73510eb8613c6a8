"""Idempotency-Key per contract section 6, through a real route and real rows."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy import update

from pressroom.audit.models import AuditEntry
from pressroom.auth.models import Member
from pressroom.db import unit_of_work
from pressroom.http.idempotency_models import IdempotencyRecord
from pressroom.runtime import Runtime
from tests.factories import Tenant

URL = "/api/v1/test/members"


async def count_members(runtime: Runtime, tenant: Tenant, email: str) -> int:
    async with unit_of_work(runtime.sessions) as session:
        return int(
            await session.scalar(
                select(func.count()).where(
                    Member.organization_id == tenant.organization_id, Member.email == email
                )
            )
            or 0
        )


async def count_audit(runtime: Runtime, tenant: Tenant) -> int:
    async with unit_of_work(runtime.sessions) as session:
        return int(
            await session.scalar(
                select(func.count()).where(AuditEntry.organization_id == tenant.organization_id)
            )
            or 0
        )


async def test_replay_returns_the_stored_response_with_no_second_effect(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    headers = {**tenant.headers, "Idempotency-Key": "create-1"}
    first = await test_client.post(
        URL, json={"email": "once@example.com", "role": "member"}, headers=headers
    )
    assert first.status_code == 201
    audit_after_first = await count_audit(runtime, tenant)
    # Same request, keys reordered and re-spaced: still the same canonical body.
    second = await test_client.post(
        URL,
        content=b'{ "role" : "member",   "email":"once@example.com" }',
        headers={**headers, "Content-Type": "application/json"},
    )
    assert second.status_code == 201
    assert second.json() == first.json()
    assert second.headers["idempotent-replayed"] == "true"
    assert second.headers["location"] == first.headers["location"]
    assert "idempotent-replayed" not in first.headers
    assert second.headers["x-request-id"] != first.headers["x-request-id"]
    assert await count_members(runtime, tenant, "once@example.com") == 1
    assert await count_audit(runtime, tenant) == audit_after_first


async def test_same_key_with_a_different_body_is_409_reused(
    test_client: httpx.AsyncClient, tenant: Tenant
):
    headers = {**tenant.headers, "Idempotency-Key": "create-2"}
    assert (
        await test_client.post(URL, json={"email": "a2@example.com"}, headers=headers)
    ).status_code == 201
    response = await test_client.post(URL, json={"email": "b2@example.com"}, headers=headers)
    assert response.status_code == 409
    assert response.json()["code"] == "idempotency_key_reused"


async def test_keys_are_scoped_to_the_organization(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
):
    body = {"email": "shared-key@example.com"}
    first = await test_client.post(
        URL, json=body, headers={**tenant.headers, "Idempotency-Key": "same"}
    )
    second = await test_client.post(
        URL, json=body, headers={**other_tenant.headers, "Idempotency-Key": "same"}
    )
    assert first.status_code == second.status_code == 201
    assert first.json()["id"] != second.json()["id"]
    assert "idempotent-replayed" not in second.headers


async def test_stored_4xx_is_replayed_and_nothing_was_written(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    headers = {**tenant.headers, "Idempotency-Key": "fails"}
    body = {"email": "fails@example.com", "failAfterWrite": True}
    first = await test_client.post(URL, json=body, headers=headers)
    assert first.status_code == 400
    second = await test_client.post(URL, json=body, headers=headers)
    assert second.status_code == 400
    assert second.headers["idempotent-replayed"] == "true"
    assert second.json()["errors"] == first.json()["errors"]
    assert await count_members(runtime, tenant, "fails@example.com") == 0


@pytest.mark.parametrize("key", ["", "x" * 256, "has space", "tab\there", "ünï"])
async def test_malformed_idempotency_key_is_400(
    test_client: httpx.AsyncClient, tenant: Tenant, key: str
):
    response = await test_client.post(
        URL,
        json={"email": "k@example.com"},
        headers={**tenant.headers, "Idempotency-Key": key.encode()},
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "Idempotency-Key"


async def test_concurrent_requests_with_one_key_create_exactly_one_object(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    email = f"race-{uuid.uuid4().hex[:6]}@example.com"
    headers = {**tenant.headers, "Idempotency-Key": f"race-{email}"}
    responses = await asyncio.gather(
        *(test_client.post(URL, json={"email": email}, headers=headers) for _ in range(20))
    )
    statuses = sorted(r.status_code for r in responses)
    created = [r for r in responses if r.status_code == 201]
    assert created, statuses
    assert {r.json()["id"] for r in created} == {created[0].json()["id"]}
    # The losers either waited for the stored response or were told the first is running.
    for response in responses:
        if response.status_code == 409:
            assert response.json()["code"] == "idempotency_key_in_progress"
        else:
            assert response.status_code == 201
    assert sum("idempotent-replayed" not in r.headers for r in created) == 1
    assert await count_members(runtime, tenant, email) == 1


async def test_in_progress_claim_is_409_until_finished(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    from pressroom.http import idempotency

    claimed = await idempotency.claim(
        runtime.sessions,
        runtime.box,
        organization_id=tenant.organization_id,
        key="held",
        operation_id="createTestMember",
        fingerprint_value=idempotency.fingerprint(
            "createTestMember",
            "POST",
            URL,
            idempotency.canonical_json(b'{"email": "held@example.com"}'),
        ),
        retention=idempotency.timedelta(hours=24),
    )
    assert isinstance(claimed, idempotency.Claim)
    response = await test_client.post(
        URL,
        json={"email": "held@example.com"},
        headers={**tenant.headers, "Idempotency-Key": "held"},
    )
    assert response.status_code == 409
    assert response.json()["code"] == "idempotency_key_in_progress"
    await idempotency.release(runtime.sessions, claimed)
    retried = await test_client.post(
        URL,
        json={"email": "held@example.com"},
        headers={**tenant.headers, "Idempotency-Key": "held"},
    )
    assert retried.status_code == 201


async def claim_held(runtime: Runtime, tenant: Tenant, key: str) -> object:
    """Claim `key` for a createTestMember request, as the first request's server would."""
    from pressroom.http import idempotency

    body = idempotency.canonical_json(json.dumps({"email": f"{key}@example.com"}).encode())
    return await idempotency.claim(
        runtime.sessions,
        runtime.box,
        organization_id=tenant.organization_id,
        key=key,
        operation_id="createTestMember",
        fingerprint_value=idempotency.fingerprint("createTestMember", "POST", URL, body),
        retention=idempotency.timedelta(hours=24),
    )


async def locked_until(runtime: Runtime, tenant: Tenant, key: str) -> datetime:
    async with unit_of_work(runtime.sessions) as session:
        record = await session.scalar(
            select(IdempotencyRecord).where(
                IdempotencyRecord.organization_id == tenant.organization_id,
                IdempotencyRecord.key == key,
            )
        )
        assert record is not None
        return record.locked_until


async def test_in_progress_answer_says_when_to_retry(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    from pressroom.http import idempotency

    claimed = await claim_held(runtime, tenant, "busy")
    assert isinstance(claimed, idempotency.Claim)
    response = await test_client.post(
        URL,
        json={"email": "busy@example.com"},
        headers={**tenant.headers, "Idempotency-Key": "busy"},
    )
    assert response.status_code == 409
    assert response.json()["code"] == "idempotency_key_in_progress"
    assert 1 <= int(response.headers["Retry-After"]) <= 30
    await idempotency.release(runtime.sessions, claimed)


async def test_a_claim_whose_server_died_lapses_within_30_seconds_and_the_retry_runs(
    test_client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    monkeypatch: pytest.MonkeyPatch,
):
    from pressroom.http import idempotency

    monkeypatch.setattr(idempotency, "CLAIM_RENEWAL_SECONDS", 0.05)
    # The first request's task ends without storing or releasing: its process died.
    claimed = await asyncio.create_task(claim_held(runtime, tenant, "orphan"))
    assert isinstance(claimed, idempotency.Claim)
    lapses = await locked_until(runtime, tenant, "orphan")
    assert lapses <= datetime.now(UTC) + timedelta(seconds=30)
    await asyncio.sleep(0.3)  # several renewal periods: nothing renews a dead request's claim
    assert await locked_until(runtime, tenant, "orphan") == lapses

    async with unit_of_work(runtime.sessions) as session:  # the 30 seconds have passed
        await session.execute(
            update(IdempotencyRecord)
            .where(
                IdempotencyRecord.organization_id == tenant.organization_id,
                IdempotencyRecord.key == "orphan",
            )
            .values(locked_until=datetime.now(UTC) - timedelta(seconds=1))
        )
    retried = await test_client.post(
        URL,
        json={"email": "orphan@example.com"},
        headers={**tenant.headers, "Idempotency-Key": "orphan"},
    )
    assert retried.status_code == 201
    assert await count_members(runtime, tenant, "orphan@example.com") == 1


async def test_a_running_request_keeps_renewing_its_claim(
    runtime: Runtime, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
):
    from pressroom.http import idempotency

    monkeypatch.setattr(idempotency, "CLAIM_RENEWAL_SECONDS", 0.05)
    claimed = await claim_held(runtime, tenant, "long-upload")
    assert isinstance(claimed, idempotency.Claim)
    first = await locked_until(runtime, tenant, "long-upload")
    deadline = asyncio.get_running_loop().time() + 10
    while await locked_until(runtime, tenant, "long-upload") == first:
        assert asyncio.get_running_loop().time() < deadline, "the claim was never renewed"
        await asyncio.sleep(0.02)
    await idempotency.release(runtime.sessions, claimed)


async def test_a_new_key_is_claimed_in_autocommit_on_postgresql_only(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, is_postgres: bool
):
    """On PostgreSQL the claim of a key not seen before is one INSERT that commits on its own
    (no BEGIN and COMMIT around it); on SQLite it is a transaction on the one writer."""
    from sqlalchemy import event

    claims: list[object] = []

    def seen(connection: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if statement.startswith("INSERT INTO idempotency_records"):
            claims.append(connection.get_execution_options().get("isolation_level"))

    engine = runtime.engine.sync_engine
    event.listen(engine, "before_cursor_execute", seen)
    try:
        created = await test_client.post(
            URL,
            json={"email": "autocommit@example.com"},
            headers={**tenant.headers, "Idempotency-Key": "autocommit-1"},
        )
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert created.status_code == 201
    assert claims == (["AUTOCOMMIT"] if is_postgres else [None])
