"""The document's `webhooks` section declares every event type, and every event the service
emits is valid against its declared body (the events are the rows the outbox writes: the exact
bytes each delivery sends)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing import Resource
from referencing.jsonschema import DRAFT202012

from pressroom.channels import service as channels
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from pressroom.webhooks.outbox import EVENT_TYPES
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.media.api import upload
from tests.media.factories import FormPart
from tests.media.factories import png_bytes
from tests.posts.factories import create_post
from tests.posts.factories import events_of
from tests.posts.factories import future
from tests.posts.factories import post_body
from tests.posts.factories import publish_all_due

from .factories import create_endpoint


def _validator(document: dict[str, Any], event_type: str) -> Draft202012Validator:
    """The declared body of `event_type`, its `$ref`s resolved within the document."""
    body = document["webhooks"][event_type]["post"]["requestBody"]["content"]["application/json"]
    registry: Registry[Any] = Registry().with_resource(
        "urn:pressroom:openapi", Resource.from_contents(document, default_specification=DRAFT202012)
    )
    schema = {"$ref": "urn:pressroom:openapi#" + body["schema"]["$ref"].removeprefix("#")}
    return Draft202012Validator(
        schema, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def test_every_event_type_is_declared_with_its_signature_headers(app: FastAPI) -> None:
    document = app.openapi()
    assert list(document["webhooks"]) == list(EVENT_TYPES)
    for event_type in EVENT_TYPES:
        operation = document["webhooks"][event_type]["post"]
        headers = {p["name"] for p in operation["parameters"] if p["in"] == "header"}
        assert headers == {"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"}


async def _emit_every_event_type(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    channel = await connect_channel(runtime, tenant.organization_id)
    scheduled = await create_post(client, tenant, post_body(channel, scheduledAt=future()))
    response = await client.patch(
        f"/api/v1/posts/{scheduled['id']}", json={"tags": ["launch"]}, headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    await create_post(client, tenant, post_body(channel, publishNow=True))
    await publish_all_due(runtime)
    doomed = await create_post(client, tenant, post_body(channel, scheduledAt=future()))
    response = await client.delete(f"/api/v1/posts/{doomed['id']}", headers=tenant.headers)
    assert response.status_code == 200, response.text
    uploaded = await upload(client, tenant, [FormPart(png_bytes(), "a.png", "image/png")])
    assert uploaded.status_code == 201, uploaded.text
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/catalog")
    response = await client.post(
        f"/api/v1/webhooks/{endpoint['id']}/test",
        json={"event": "webhook.test.v1"},
        headers=tenant.headers,
    )
    assert response.status_code == 202, response.text
    other = await connect_channel(runtime, tenant.organization_id)
    async with unit_of_work(runtime.sessions) as session:
        await channels.mark_reconnect_required(
            session, runtime, channel_id=other, reason="token revoked"
        )
    # Disconnecting fails the scheduled post's pending target (post.failed.v1).
    response = await client.delete(f"/api/v1/channels/{channel}", headers=tenant.headers)
    assert response.status_code == 200, response.text


async def test_every_emitted_event_is_valid_against_its_declared_body(
    app: FastAPI, client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    await _emit_every_event_type(client, runtime, tenant)
    document = app.openapi()
    events = await events_of(runtime, tenant.organization_id)
    assert {event["type"] for event in events} == set(EVENT_TYPES)
    for event in events:
        errors = list(_validator(document, event["type"]).iter_errors(event))
        assert errors == [], (event["type"], [error.message for error in errors])
    assert uuid.UUID(events[0]["organizationId"]) == tenant.organization_id


@pytest.mark.parametrize("event_type", ["post.created.v1", "post.published.v1"])
async def test_a_body_missing_its_data_is_invalid(app: FastAPI, event_type: str) -> None:
    event = {
        "id": str(uuid.uuid4()),
        "type": event_type,
        "createdAt": "2026-03-01T00:00:00.000Z",
        "organizationId": str(uuid.uuid4()),
        "data": {},
    }
    assert not _validator(app.openapi(), event_type).is_valid(event)
