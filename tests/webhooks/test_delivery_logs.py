"""Delivery logs: listWebhookDeliveries and getWebhookDelivery shapes, filters and privacy."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from pressroom.runtime import Runtime
from tests.factories import Tenant

from .factories import create_endpoint
from .factories import emit
from .factories import settled_delivery
from .factories import unique_path
from .receiver import WebhookReceiver

DELIVERY_FIELDS = {
    "id",
    "endpointId",
    "eventId",
    "eventType",
    "status",
    "responseStatus",
    "latencyMs",
    "attemptCount",
    "nextAttemptAt",
    "createdAt",
    "expiresAt",
    "payload",
}
ATTEMPT_FIELDS = {
    "id",
    "number",
    "trigger",
    "startedAt",
    "responseStatus",
    "latencyMs",
    "outcome",
    "error",
}


def deliveries_url(endpoint_id: object, query: str = "") -> str:
    return f"/api/v1/webhooks/{endpoint_id}/deliveries{query}"


async def test_pending_delivery_reads_with_its_payload(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/logs")
    event, (delivery,) = await emit(runtime, tenant, data={"post": {"id": "p-1"}})
    listed = (await client.get(deliveries_url(endpoint["id"]), headers=tenant.headers)).json()
    (item,) = listed["items"]
    assert set(item) == DELIVERY_FIELDS
    assert item["id"] == str(delivery.id)
    assert item["endpointId"] == endpoint["id"]
    assert item["eventId"] == str(event.id)
    assert item["eventType"] == "post.created.v1"
    assert item["status"] == "pending"
    assert item["attemptCount"] == 0
    assert item["responseStatus"] is None and item["latencyMs"] is None
    assert item["nextAttemptAt"].endswith("Z")
    assert item["payload"] == json.loads(event.body)
    detail = (
        await client.get(deliveries_url(endpoint["id"], f"/{delivery.id}"), headers=tenant.headers)
    ).json()
    assert set(detail) == DELIVERY_FIELDS | {"attempts"}
    assert detail["attempts"] == []


@pytest.mark.usefixtures("worker")
async def test_detail_holds_the_full_attempt_history(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    path = unique_path()
    endpoint = await create_endpoint(client, tenant, receiver.url_for(path))
    receiver.respond(500, path=path)
    _, (delivery,) = await emit(runtime, tenant)
    detail = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    failed, succeeded = detail["attempts"]
    assert set(failed) == ATTEMPT_FIELDS
    assert failed["error"] == {"code": "http_error", "message": failed["error"]["message"]}
    assert failed["responseStatus"] == 500
    assert succeeded["error"] is None
    assert detail["responseStatus"] == 200
    assert detail["latencyMs"] == succeeded["latencyMs"]


@pytest.mark.usefixtures("worker")
async def test_logs_never_show_signing_material_leases_or_workers(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint = await create_endpoint(client, tenant, receiver.url_for(unique_path()))
    _, (delivery,) = await emit(runtime, tenant)
    detail = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    listed = await client.get(deliveries_url(endpoint["id"]), headers=tenant.headers)
    for text in (json.dumps(detail), listed.text):
        lowered = text.lower()
        for word in ("signature", "secret", "lease", "worker", "whsec_", "v1="):
            assert word not in lowered, word


async def test_filters_by_status_and_event_type(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    endpoint = await create_endpoint(
        client,
        tenant,
        "https://hooks.example.com/filters",
        events=["post.created.v1", "media.created.v1"],
    )
    _, (post,) = await emit(runtime, tenant, "post.created.v1")
    _, (media,) = await emit(runtime, tenant, "media.created.v1", {"media": {"id": "m"}})

    async def ids(query: str) -> list[str]:
        response = await client.get(deliveries_url(endpoint["id"], query), headers=tenant.headers)
        assert response.status_code == 200, response.text
        return [item["id"] for item in response.json()["items"]]

    assert await ids("") == [str(media.id), str(post.id)]
    assert await ids("?eventType=post.created.v1") == [str(post.id)]
    assert await ids("?status=pending") == [str(media.id), str(post.id)]
    assert await ids("?status=succeeded") == []
    assert await ids("?status=pending&eventType=media.created.v1") == [str(media.id)]
    assert await ids("?pageSize=1") == [str(media.id)]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?status=done", "status"),
        ("?status=PENDING", "status"),
        ("?eventType=post.created", "eventType"),
        ("?pageSize=0", "pageSize"),
        ("?pageSize=101", "pageSize"),
        ("?cursor=not-a-cursor", "cursor"),
    ],
)
async def test_bad_filters_are_400_naming_the_parameter(
    client: httpx.AsyncClient, tenant: Tenant, query: str, field: str
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/x")
    response = await client.get(deliveries_url(endpoint["id"], query), headers=tenant.headers)
    assert response.status_code == 400
    assert field in [e["field"] for e in response.json()["errors"]]


async def test_cursor_of_another_endpoint_is_400(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    first = await create_endpoint(client, tenant, "https://hooks.example.com/1")
    second = await create_endpoint(client, tenant, "https://hooks.example.com/2")
    for _ in range(2):
        await emit(runtime, tenant)
    page = (
        await client.get(deliveries_url(first["id"], "?pageSize=1"), headers=tenant.headers)
    ).json()
    assert page["nextCursor"]
    response = await client.get(
        deliveries_url(second["id"], f"?cursor={page['nextCursor']}"), headers=tenant.headers
    )
    assert response.status_code == 400


async def test_delivery_of_another_endpoint_or_organization_is_404(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
):
    endpoint = await create_endpoint(client, tenant, "https://hooks.example.com/mine")
    sibling = await create_endpoint(
        client, tenant, "https://hooks.example.com/sibling", events=["media.created.v1"]
    )
    _, (delivery,) = await emit(runtime, tenant)
    theirs = await create_endpoint(client, other_tenant, "https://hooks.example.com/theirs")
    path = f"/{delivery.id}"
    mine = await client.get(deliveries_url(endpoint["id"], path), headers=tenant.headers)
    assert mine.status_code == 200
    for endpoint_id, caller in [
        (sibling["id"], tenant),  # right organization, wrong endpoint
        (theirs["id"], other_tenant),  # their endpoint, our delivery id
        (endpoint["id"], other_tenant),  # our endpoint, read by them
    ]:
        response = await client.get(deliveries_url(endpoint_id, path), headers=caller.headers)
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"
    missing = await client.get(
        deliveries_url(endpoint["id"], f"/{uuid.uuid4()}"), headers=tenant.headers
    )
    assert missing.status_code == 404
    malformed = await client.get(deliveries_url(endpoint["id"], "/nope"), headers=tenant.headers)
    assert malformed.status_code == 400
