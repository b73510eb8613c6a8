"""No API key ever appears in a log line or an audit entry."""

from __future__ import annotations

import json
import logging

import httpx
import pytest
from sqlalchemy import select

from pressroom.audit.models import AuditEntry
from pressroom.db import unit_of_work
from pressroom.kit.logs import JSONFormatter
from pressroom.runtime import Runtime
from tests.factories import Tenant


async def test_no_api_key_in_any_log_line_or_audit_entry(
    test_client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    caplog: pytest.LogCaptureFixture,
):
    caplog.set_level(logging.DEBUG)
    guessed = "prk_" + "G" * 43
    await test_client.get("/api/v1/tenant", headers=tenant.headers)
    await test_client.get("/api/v1/tenant", headers={"Authorization": f"Bearer {guessed}"})
    await test_client.post(
        "/api/v1/test/members",
        json={"email": "s@example.com"},
        headers={**tenant.headers, "Idempotency-Key": "secret-check"},
    )
    await test_client.post(
        "/api/v1/test/members",
        json={"email": "s@example.com"},
        headers={**tenant.headers, "Idempotency-Key": "secret-check"},
    )
    await test_client.get("/api/v1/test/boom", headers=tenant.headers)
    await test_client.get("/api/v1/nowhere", headers=tenant.headers)

    formatter = JSONFormatter()
    lines = [formatter.format(record) for record in caplog.records]
    assert any('"message": "request"' in line for line in lines)
    assert any("unhandled error" in line for line in lines)
    for line in lines:
        assert tenant.key not in line
        assert guessed not in line
        assert "prk_zzzzzzzz" not in line  # the key inside the crashing route's message
    async with unit_of_work(runtime.sessions) as session:
        rows = list(
            await session.scalars(
                select(AuditEntry).where(AuditEntry.organization_id == tenant.organization_id)
            )
        )
    assert rows
    for row in rows:
        dumped = json.dumps(
            {c: str(getattr(row, c)) for c in row.__table__.columns.keys()}  # noqa: SIM118
        )
        assert tenant.key not in dumped
        assert "prk_sss" not in dumped
