"""sendWebhookTest: a webhook.test.v1 event for one endpoint, whatever its filters."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from sqlalchemy import func
from sqlalchemy import select

from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from pressroom.webhooks import verify
from pressroom.webhooks.models import Event
from tests.factories import Tenant

from .factories import create_endpoint
from .factories import requests_arriving
from .factories import settled_delivery
from .factories import unique_path
from .receiver import WebhookReceiver

TEST_BODY = {"event": "webhook.test.v1"}


def send_test_url(endpoint_id: object) -> str:
    return f"/api/v1/webhooks/{endpoint_id}/test"


@pytest.mark.usefixtures("worker")
async def test_test_event_is_queued_and_sent_regardless_of_filters(
    client: httpx.AsyncClient, tenant: Tenant, receiver: WebhookReceiver
):
    path = unique_path()
    endpoint = await create_endpoint(
        client, tenant, receiver.url_for(path), events=["post.published.v1"]
    )
    response = await client.post(
        send_test_url(endpoint["id"]), json=TEST_BODY, headers=tenant.headers
    )
    assert response.status_code == 202
    queued = response.json()
    assert set(queued) == {"deliveryId", "eventId", "status"}
    assert queued["status"] == "pending"
    (request,) = await requests_arriving(receiver, path, 1)
    verify(endpoint["signingSecret"], request.headers, request.body)
    assert request.headers["webhook-id"] == queued["eventId"]
    event = json.loads(request.body)
    assert event["type"] == "webhook.test.v1"
    assert event["data"] == {"endpointId": endpoint["id"]}
    assert event["organizationId"] == str(tenant.organization_id)
    settled = await settled_delivery(client, tenant, endpoint["id"], queued["deliveryId"])
    assert settled["eventType"] == "webhook.test.v1"
    assert settled["attempts"][0]["trigger"] == "test"


@pytest.mark.usefixtures("worker")
async def test_test_delivery_is_retried_like_any_other(
    client: httpx.AsyncClient, tenant: Tenant, receiver: WebhookReceiver
):
    path = unique_path()
    endpoint = await create_endpoint(client, tenant, receiver.url_for(path))
    receiver.respond(503, path=path)
    queued = (
        await client.post(send_test_url(endpoint["id"]), json=TEST_BODY, headers=tenant.headers)
    ).json()
    settled = await settled_delivery(client, tenant, endpoint["id"], queued["deliveryId"])
    assert settled["status"] == "succeeded"
    assert [a["trigger"] for a in settled["attempts"]] == ["test", "scheduled"]


async def test_test_event_reaches_only_that_endpoint(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    target = await create_endpoint(client, tenant, "https://hooks.example.com/a")
    other = await create_endpoint(
        client, tenant, "https://hooks.example.com/b", events=["webhook.test.v1"]
    )
    await client.post(send_test_url(target["id"]), json=TEST_BODY, headers=tenant.headers)
    listed = await client.get(f"/api/v1/webhooks/{other['id']}/deliveries", headers=tenant.headers)
    assert listed.json()["items"] == []


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"event": "post.created.v1"},
        {"event": "webhook.test.v2"},
        {"event": "webhook.test.v1", "data": {}},
        {"event": None},
        ["webhook.test.v1"],
        "webhook.test.v1",
    ],
)
async def test_anything_but_the_test_event_is_400(
    client: httpx.AsyncClient, tenant: Tenant, body: object
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/x")
    response = await client.post(send_test_url(endpoint["id"]), json=body, headers=tenant.headers)
    assert response.status_code == 400
    assert response.json()["code"] == "validation_failed"


async def test_missing_body_is_400(client: httpx.AsyncClient, tenant: Tenant):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/x")
    response = await client.post(send_test_url(endpoint["id"]), headers=tenant.headers)
    assert response.status_code == 400


async def test_same_idempotency_key_gives_the_same_event(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/x")
    headers = {**tenant.headers, "Idempotency-Key": f"test-{uuid.uuid4()}"}
    first = await client.post(send_test_url(endpoint["id"]), json=TEST_BODY, headers=headers)
    second = await client.post(send_test_url(endpoint["id"]), json=TEST_BODY, headers=headers)
    assert first.status_code == second.status_code == 202
    assert second.json() == first.json()
    assert second.headers["idempotent-replayed"] == "true"
    async with unit_of_work(runtime.sessions) as session:
        events = await session.scalar(
            select(func.count()).where(
                Event.organization_id == tenant.organization_id, Event.type == "webhook.test.v1"
            )
        )
    assert events == 1


async def test_test_of_disabled_endpoint_is_409(client: httpx.AsyncClient, tenant: Tenant):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/x", enabled=False)
    response = await client.post(
        send_test_url(endpoint["id"]), json=TEST_BODY, headers=tenant.headers
    )
    assert response.status_code == 409
    assert response.json()["code"] == "endpoint_disabled"


async def test_test_of_another_organizations_endpoint_is_404(
    client: httpx.AsyncClient, tenant: Tenant, other_tenant: Tenant
):
    theirs = await create_endpoint(client, other_tenant, "https://hooks.example.com/x")
    response = await client.post(
        send_test_url(theirs["id"]), json=TEST_BODY, headers=tenant.headers
    )
    assert response.status_code == 404
