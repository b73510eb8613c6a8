"""The audit ledger (contract section 8): one entry per mutation, redacted, tamper-evident."""

from __future__ import annotations

import json

import httpx
from sqlalchemy import delete
from sqlalchemy import select
from sqlalchemy import update

from pressroom.audit import service as audit
from pressroom.audit.models import AuditEntry
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from tests.factories import Tenant

URL = "/api/v1/test/members"


async def entries(runtime: Runtime, tenant: Tenant) -> list[AuditEntry]:
    async with unit_of_work(runtime.sessions) as session:
        rows = await session.scalars(
            select(AuditEntry)
            .where(AuditEntry.organization_id == tenant.organization_id)
            .order_by(AuditEntry.sequence)
        )
        return list(rows)


async def verify(runtime: Runtime, tenant: Tenant) -> audit.VerifyResult:
    async with unit_of_work(runtime.sessions) as session:
        return await audit.verify(session, tenant.organization_id)


async def make_history(client: httpx.AsyncClient, tenant: Tenant, count: int = 4) -> None:
    for i in range(count):
        response = await client.post(
            URL, json={"email": f"h{i}@example.com"}, headers=tenant.headers
        )
        assert response.status_code == 201


async def test_each_mutating_request_appends_one_entry_with_who_what_and_outcome(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    response = await test_client.post(
        URL,
        json={"email": "audited@example.com"},
        headers={**tenant.headers, "X-Request-ID": "audit-req-1"},
    )
    created = response.json()
    rows = await entries(runtime, tenant)
    entry = rows[-1]
    assert entry.operation_id == "createTestMember"
    assert entry.member_id == tenant.member_id
    assert entry.credential_id == tenant.key_id
    assert entry.credential_prefix == tenant.key[:12]
    assert entry.resource_type == "member"
    assert entry.resource_id == created["id"]
    assert entry.request_id == "audit-req-1"
    assert entry.outcome_status == 201
    assert entry.changes["email"] == "audited@example.com"
    # Reads append nothing.
    await test_client.get("/api/v1/tenant", headers=tenant.headers)
    assert len(await entries(runtime, tenant)) == len(rows)


async def test_failed_mutations_are_recorded_with_their_status(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await test_client.post(
        URL, json={"email": "no@example.com", "failAfterWrite": True}, headers=tenant.headers
    )
    assert (await entries(runtime, tenant))[-1].outcome_status == 400


async def test_secrets_are_redacted_in_changes(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await test_client.post(URL, json={"email": "redact@example.com"}, headers=tenant.headers)
    entry = (await entries(runtime, tenant))[-1]
    assert entry.changes["apiKey"] == "[redacted]"
    assert "prk_" not in json.dumps(entry.changes)


def test_redaction_by_name_and_by_shape():
    from pressroom.audit.redaction import redact

    value = {
        "name": "x",
        "signingSecret": "whsec_abc",
        "nested": [{"accessToken": "t"}, {"password": "p"}],
        "note": "key prk_" + "a" * 43 + " used",
        "authorization": "Bearer zzz",
        "prefix": "prk_abcdefgh",
        "credentials": {"accessJwt": "a", "refreshJwt": "r"},
        "session": {"accessJwt": "a", "refreshJwt": "r", "did": "did:plc:x"},
    }
    redacted = redact(value)
    assert redacted["name"] == "x"
    assert redacted["signingSecret"] == "[redacted]"
    assert redacted["nested"] == [{"accessToken": "[redacted]"}, {"password": "[redacted]"}]
    assert "prk_aaaa" not in redacted["note"]
    assert redacted["authorization"] == "[redacted]"
    assert redacted["prefix"] == "prk_abcdefgh"  # a display prefix is not a secret
    assert redacted["credentials"] == "[redacted]"
    assert redacted["session"] == {
        "accessJwt": "[redacted]",
        "refreshJwt": "[redacted]",
        "did": "did:plc:x",
    }


async def test_intact_chain_verifies(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await make_history(test_client, tenant)
    result = await verify(runtime, tenant)
    assert result.ok and result.entries == 4 and not result.problems


async def test_edited_entry_is_detected(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await make_history(test_client, tenant)
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(AuditEntry)
            .where(AuditEntry.organization_id == tenant.organization_id, AuditEntry.sequence == 2)
            .values(outcome_status=200)
        )
    result = await verify(runtime, tenant)
    assert not result.ok
    assert any("entry 2 was altered" in p for p in result.problems)


async def test_deleted_entry_in_the_middle_is_detected(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await make_history(test_client, tenant)
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            delete(AuditEntry).where(
                AuditEntry.organization_id == tenant.organization_id, AuditEntry.sequence == 2
            )
        )
    result = await verify(runtime, tenant)
    assert not result.ok
    assert any("entry 2 is missing" in p for p in result.problems)


async def test_deleted_last_entry_is_detected(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await make_history(test_client, tenant)
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            delete(AuditEntry).where(
                AuditEntry.organization_id == tenant.organization_id, AuditEntry.sequence == 4
            )
        )
    result = await verify(runtime, tenant)
    assert not result.ok
    assert any("removed from the end" in p for p in result.problems)


async def test_rehashed_forgery_still_breaks_the_link_to_the_next_entry(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    """Editing an entry and recomputing its own digest is caught by the following entry."""
    await make_history(test_client, tenant)
    async with unit_of_work(runtime.sessions) as session:
        entry = await session.scalar(
            select(AuditEntry).where(
                AuditEntry.organization_id == tenant.organization_id, AuditEntry.sequence == 2
            )
        )
        assert entry is not None
        entry.outcome_status = 204
        entry.digest = audit._digest(entry)
    result = await verify(runtime, tenant)
    assert not result.ok
    assert any("entry 3 does not link" in p for p in result.problems)


async def test_concurrent_appends_keep_one_unbroken_chain(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    import asyncio

    responses = await asyncio.gather(
        *(
            test_client.post(URL, json={"email": f"c{i}@example.com"}, headers=tenant.headers)
            for i in range(12)
        )
    )
    assert all(r.status_code == 201 for r in responses)
    result = await verify(runtime, tenant)
    assert result.ok and result.entries == 12
