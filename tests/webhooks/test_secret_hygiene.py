"""Signing secrets appear once, in the create and rotate responses, and nowhere else: not in
reads, logs, audit entries or stored idempotent responses."""

from __future__ import annotations

import json
import logging
import uuid

import httpx
import pytest
from sqlalchemy import select

from pressroom.audit.models import AuditEntry
from pressroom.db import unit_of_work
from pressroom.http.idempotency_models import IdempotencyRecord
from pressroom.kit.logs import JSONFormatter
from pressroom.runtime import Runtime
from tests.factories import Tenant

from .factories import create_endpoint
from .factories import emit
from .factories import settled_delivery
from .factories import unique_path
from .receiver import WebhookReceiver


def secret_forms(secret: str) -> list[str]:
    """The secret as shown, and its base64 part alone."""
    return [secret, secret.removeprefix("whsec_")]


@pytest.mark.usefixtures("worker")
async def test_secrets_never_appear_in_reads_logs_or_audit_entries(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    caplog: pytest.LogCaptureFixture,
):
    caplog.set_level(logging.DEBUG)
    path = unique_path()
    created = await client.post(
        "/api/v1/webhooks",
        json={"url": receiver.url_for(path), "events": ["post.created.v1"]},
        headers={**tenant.headers, "Idempotency-Key": f"hygiene-{uuid.uuid4()}"},
    )
    endpoint = created.json()
    rotated = await client.post(
        f"/api/v1/webhooks/{endpoint['id']}/rotate",
        json={"expireCurrentInSeconds": 60},
        headers={**tenant.headers, "Idempotency-Key": f"hygiene-{uuid.uuid4()}"},
    )
    secrets = secret_forms(endpoint["signingSecret"]) + secret_forms(
        rotated.json()["signingSecret"]
    )
    receiver.respond(500, path=path)
    _, (delivery,) = await emit(runtime, tenant)
    detail = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    reads = [
        json.dumps(detail),
        (await client.get(f"/api/v1/webhooks/{endpoint['id']}", headers=tenant.headers)).text,
        (await client.get("/api/v1/webhooks", headers=tenant.headers)).text,
        (
            await client.get(
                f"/api/v1/webhooks/{endpoint['id']}/deliveries", headers=tenant.headers
            )
        ).text,
    ]
    formatter = JSONFormatter()
    lines = [formatter.format(record) for record in caplog.records]
    assert any("request" in line for line in lines)
    async with unit_of_work(runtime.sessions) as session:
        entries = list(
            await session.scalars(
                select(AuditEntry).where(AuditEntry.organization_id == tenant.organization_id)
            )
        )
        stored_responses = list(
            await session.scalars(
                select(IdempotencyRecord).where(
                    IdempotencyRecord.organization_id == tenant.organization_id
                )
            )
        )
    assert {e.operation_id for e in entries} >= {
        "createWebhookEndpoint",
        "rotateWebhookEndpointSecret",
    }
    audit_text = json.dumps(
        [{c.name: str(getattr(e, c.key)) for c in e.__table__.columns} for e in entries]
    )
    assert len(stored_responses) == 2
    assert all(record.body_encrypted for record in stored_responses)
    stored_text = " ".join(record.body or "" for record in stored_responses)
    for secret in secrets:
        for text in [*reads, *lines, audit_text, stored_text]:
            assert secret not in text


async def test_secret_metadata_shows_only_the_last_four_characters(
    client: httpx.AsyncClient, tenant: Tenant
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/mask")
    read = (await client.get(f"/api/v1/webhooks/{endpoint['id']}", headers=tenant.headers)).json()
    assert read["secret"]["last4"] == endpoint["signingSecret"][-4:]
    assert len(read["secret"]["last4"]) == 4
    assert read["secret"]["prefix"] == "whsec_"
