"""Webhook endpoint lifecycle through the API: create, read, list, update, delete, rotate."""

from __future__ import annotations

import base64
import uuid

import httpx
import pytest
from sqlalchemy import select

from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from pressroom.webhooks.models import WebhookEndpoint
from pressroom.webhooks.outbox import EVENT_TYPES
from tests.factories import Tenant
from tests.factories import add_member_with_key

from .factories import create_endpoint
from .test_destination import HOSTILE

URL = "https://hooks.example.com/pressroom"


async def test_create_returns_the_endpoint_and_a_one_time_secret(
    client: httpx.AsyncClient, tenant: Tenant
):
    response = await client.post(
        "/api/v1/webhooks",
        json={"url": URL, "events": ["post.published.v1", "post.failed.v1"], "description": "CRM"},
        headers=tenant.headers,
    )
    assert response.status_code == 201
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert set(body) == {
        "id",
        "url",
        "events",
        "enabled",
        "description",
        "secret",
        "createdAt",
        "updatedAt",
        "signingSecret",
    }
    assert response.headers["location"] == f"/api/v1/webhooks/{body['id']}"
    assert body["url"] == URL
    assert body["events"] == ["post.published.v1", "post.failed.v1"]
    assert body["enabled"] is True
    assert body["description"] == "CRM"
    secret = body["signingSecret"]
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 32
    assert body["secret"] == {
        "prefix": "whsec_",
        "last4": secret[-4:],
        "createdAt": body["secret"]["createdAt"],
        "previousExpiresAt": None,
    }
    assert body["createdAt"].endswith("Z")


async def test_reads_show_masked_secret_metadata_only(client: httpx.AsyncClient, tenant: Tenant):
    created = await create_endpoint(client, tenant, URL)
    read = await client.get(f"/api/v1/webhooks/{created['id']}", headers=tenant.headers)
    assert read.status_code == 200
    assert "signingSecret" not in read.json()
    assert created["signingSecret"] not in read.text
    assert created["signingSecret"].removeprefix("whsec_") not in read.text
    assert read.json()["secret"]["last4"] == created["signingSecret"][-4:]
    listed = await client.get("/api/v1/webhooks", headers=tenant.headers)
    assert created["signingSecret"].removeprefix("whsec_") not in listed.text


async def test_secret_is_encrypted_at_rest(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    created = await create_endpoint(client, tenant, URL)
    async with unit_of_work(runtime.sessions) as session:
        row = await session.scalar(
            select(WebhookEndpoint).where(WebhookEndpoint.id == uuid.UUID(created["id"]))
        )
        assert row is not None
        stored = " ".join(str(getattr(row, c)) for c in row.__table__.columns.keys())  # noqa: SIM118
    assert created["signingSecret"].removeprefix("whsec_") not in stored
    assert runtime.box.decrypt(row.secret_encrypted) == created["signingSecret"]


async def test_both_secrets_of_a_rotation_grace_are_encrypted_at_rest(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    created = await create_endpoint(client, tenant, URL)
    rotated = await client.post(
        f"/api/v1/webhooks/{created['id']}/rotate",
        json={"expireCurrentInSeconds": 3600},
        headers=tenant.headers,
    )
    async with unit_of_work(runtime.sessions) as session:
        row = await session.get(WebhookEndpoint, uuid.UUID(created["id"]))
        assert row is not None
        stored = " ".join(str(getattr(row, c)) for c in row.__table__.columns.keys())  # noqa: SIM118
    for secret in (created["signingSecret"], rotated.json()["signingSecret"]):
        assert secret.removeprefix("whsec_") not in stored
    assert row.previous_secret_encrypted is not None
    assert runtime.box.decrypt(row.previous_secret_encrypted) == created["signingSecret"]
    assert runtime.box.decrypt(row.secret_encrypted) == rotated.json()["signingSecret"]


async def test_list_is_newest_first_and_paginated(client: httpx.AsyncClient, tenant: Tenant):
    ids = [(await create_endpoint(client, tenant, f"{URL}/{i}"))["id"] for i in range(3)]
    first = (await client.get("/api/v1/webhooks?pageSize=2", headers=tenant.headers)).json()
    assert [item["id"] for item in first["items"]] == ids[::-1][:2]
    second = (
        await client.get(
            f"/api/v1/webhooks?pageSize=2&cursor={first['nextCursor']}", headers=tenant.headers
        )
    ).json()
    assert [item["id"] for item in second["items"]] == [ids[0]]
    assert second["nextCursor"] is None


async def test_other_organizations_endpoints_are_invisible(
    client: httpx.AsyncClient, tenant: Tenant, other_tenant: Tenant
):
    theirs = await create_endpoint(client, other_tenant, URL)
    listed = (await client.get("/api/v1/webhooks", headers=tenant.headers)).json()
    assert theirs["id"] not in {item["id"] for item in listed["items"]}
    for method, suffix in [
        ("GET", ""),
        ("PATCH", ""),
        ("DELETE", ""),
        ("POST", "/rotate"),
        ("GET", "/deliveries"),
    ]:
        response = await client.request(
            method,
            f"/api/v1/webhooks/{theirs['id']}{suffix}",
            headers=tenant.headers,
            json={} if method == "PATCH" else None,
        )
        assert response.status_code == 404, (method, suffix)
        assert response.json()["code"] == "not_found"


@pytest.mark.parametrize(
    ("events", "field", "code"),
    [
        ([], "events", "too_short"),
        (["post.nope.v1"], "events[0]", "unknown_event"),
        (["post.created.v1", "post.created.v2"], "events[1]", "unknown_event"),
        (["post.created.v1", "post.created.v1"], "events[1]", "duplicate"),
        (["Post.Created.v1"], "events[0]", "unknown_event"),
    ],
)
async def test_bad_event_filters_are_400_naming_the_entry(
    client: httpx.AsyncClient, tenant: Tenant, events: list[str], field: str, code: str
):
    response = await client.post(
        "/api/v1/webhooks", json={"url": URL, "events": events}, headers=tenant.headers
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_failed"
    assert {"field": field, "code": code} in [
        {"field": e["field"], "code": e["code"]} for e in body["errors"]
    ]


async def test_all_eleven_event_kinds_may_be_subscribed(client: httpx.AsyncClient, tenant: Tenant):
    created = await create_endpoint(client, tenant, URL, list(EVENT_TYPES))
    assert created["events"] == list(EVENT_TYPES)


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/x",
        "https://user:pw@hooks.example.com/x",
        "https://hooks.example.com/x?token=1",
        "https://hooks.example.com/x#frag",
        "https://hooks.example.com:8443/x",
        "https://127.0.0.1/x",
        "https://[::1]/x",
        "https://2130706433/x",
        "https://0x7f.1/x",
        "https://localhost/x",
        "https://api.localhost/x",
        "https://printer.local/x",
        "https://metadata.google.internal/x",
        "https://router.home.arpa/x",
        "https://169.254.169.254/latest",
        "https://hooks.example.com/" + "a" * 2040,
    ],
)
async def test_hostile_destination_is_400_naming_url(
    client: httpx.AsyncClient, tenant: Tenant, url: str
):
    response = await client.post(
        "/api/v1/webhooks", json={"url": url, "events": ["post.created.v1"]}, headers=tenant.headers
    )
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["field"] == "url"


async def test_every_hostile_destination_is_refused_by_create_and_update(
    client: httpx.AsyncClient, tenant: Tenant
):
    """The whole hostile list of test_destination.py, through the API."""
    assert len(HOSTILE) >= 60
    endpoint = await create_endpoint(client, tenant, URL)
    accepted = []
    for name, url in HOSTILE:
        for method, path, body in [
            ("POST", "/api/v1/webhooks", {"url": url, "events": ["post.created.v1"]}),
            ("PATCH", f"/api/v1/webhooks/{endpoint['id']}", {"url": url}),
        ]:
            response = await client.request(method, path, json=body, headers=tenant.headers)
            errors = response.json().get("errors", []) if response.status_code == 400 else []
            if [e["field"] for e in errors] != ["url"]:
                accepted.append((name, method, response.status_code))
    assert accepted == []
    listed = (await client.get("/api/v1/webhooks", headers=tenant.headers)).json()
    assert [item["url"] for item in listed["items"]] == [URL]


@pytest.mark.parametrize(
    "url",
    ["https://receiver.test/hook", "https://hooks.example/hook", "https://gone.invalid/hook"],
)
async def test_reserved_test_names_are_accepted(
    client: httpx.AsyncClient, tenant: Tenant, url: str
):
    created = await create_endpoint(client, tenant, url)
    assert created["url"] == url


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"events": ["post.created.v1"]}, "url"),
        ({"url": URL}, "events"),
        ({"url": URL, "events": ["post.created.v1"], "secret": "mine"}, "secret"),
        ({"url": URL, "events": "post.created.v1"}, "events"),
        ({"url": URL, "events": ["post.created.v1"], "enabled": "yes"}, "enabled"),
        ({"url": URL, "events": ["post.created.v1"], "description": "x" * 501}, "description"),
    ],
)
async def test_malformed_create_body_is_400(
    client: httpx.AsyncClient, tenant: Tenant, body: dict[str, object], field: str
):
    response = await client.post("/api/v1/webhooks", json=body, headers=tenant.headers)
    assert response.status_code == 400
    assert field in [e["field"] for e in response.json()["errors"]]


async def test_update_is_a_merge(client: httpx.AsyncClient, tenant: Tenant):
    created = await create_endpoint(client, tenant, URL, description="first")
    response = await client.patch(
        f"/api/v1/webhooks/{created['id']}",
        json={"events": ["media.created.v1"], "enabled": False},
        headers=tenant.headers,
    )
    assert response.status_code == 200
    body = response.json()
    assert body["events"] == ["media.created.v1"]
    assert body["enabled"] is False
    assert body["url"] == URL
    assert body["description"] == "first"
    assert "signingSecret" not in body
    cleared = await client.patch(
        f"/api/v1/webhooks/{created['id']}", json={"description": None}, headers=tenant.headers
    )
    assert cleared.json()["description"] is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "http://hooks.example.com/x"}, "url"),
        ({"url": None}, "url"),
        ({"events": ["post.created.v1", "post.created.v1"]}, "events[1]"),
        ({"events": None}, "events"),
        ({"enabled": None}, "enabled"),
        ({"unknown": 1}, "unknown"),
    ],
)
async def test_bad_update_is_400_before_lookup(
    client: httpx.AsyncClient, tenant: Tenant, body: dict[str, object], field: str
):
    # 400 comes before 404: the endpoint does not even exist.
    response = await client.patch(
        f"/api/v1/webhooks/{uuid.uuid4()}", json=body, headers=tenant.headers
    )
    assert response.status_code == 400
    assert field in [e["field"] for e in response.json()["errors"]]


async def test_delete_answers_a_deleted_resource_then_404(
    client: httpx.AsyncClient, tenant: Tenant
):
    created = await create_endpoint(client, tenant, URL)
    response = await client.delete(f"/api/v1/webhooks/{created['id']}", headers=tenant.headers)
    assert response.status_code == 200
    assert response.json() == {"id": created["id"], "object": "webhookEndpoint", "deleted": True}
    again = await client.get(f"/api/v1/webhooks/{created['id']}", headers=tenant.headers)
    assert again.status_code == 404
    listed = (await client.get("/api/v1/webhooks", headers=tenant.headers)).json()
    assert created["id"] not in {item["id"] for item in listed["items"]}


@pytest.mark.parametrize("body", [None, {}])
async def test_rotate_without_grace_retires_the_old_secret(
    client: httpx.AsyncClient, tenant: Tenant, body: dict[str, object] | None
):
    created = await create_endpoint(client, tenant, URL)
    response = await client.post(
        f"/api/v1/webhooks/{created['id']}/rotate", json=body, headers=tenant.headers
    )
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    rotated = response.json()
    assert rotated["signingSecret"].startswith("whsec_")
    assert rotated["signingSecret"] != created["signingSecret"]
    assert rotated["secret"]["last4"] == rotated["signingSecret"][-4:]
    assert rotated["secret"]["previousExpiresAt"] is None


async def test_rotate_with_grace_reports_when_the_previous_secret_expires(
    client: httpx.AsyncClient, tenant: Tenant
):
    created = await create_endpoint(client, tenant, URL)
    response = await client.post(
        f"/api/v1/webhooks/{created['id']}/rotate",
        json={"expireCurrentInSeconds": 3600},
        headers=tenant.headers,
    )
    assert response.status_code == 200
    expires = response.json()["secret"]["previousExpiresAt"]
    assert expires is not None and expires.endswith("Z")
    read = (await client.get(f"/api/v1/webhooks/{created['id']}", headers=tenant.headers)).json()
    assert read["secret"]["previousExpiresAt"] == expires


async def test_an_integral_number_is_an_integer_grace(client: httpx.AsyncClient, tenant: Tenant):
    # JSON Schema calls 60.0 an integer, and so does the server.
    created = await create_endpoint(client, tenant, URL)
    response = await client.post(
        f"/api/v1/webhooks/{created['id']}/rotate",
        json={"expireCurrentInSeconds": 60.0},
        headers=tenant.headers,
    )
    assert response.status_code == 200, response.text
    assert response.json()["secret"]["previousExpiresAt"] is not None


async def test_the_update_document_refuses_null_where_the_server_does(client: httpx.AsyncClient):
    document = (await client.get("/openapi.json")).json()
    properties = document["components"]["schemas"]["WebhookEndpointUpdate"]["properties"]
    for name in ("url", "events", "enabled"):
        assert "anyOf" not in properties[name] and "default" not in properties[name], name
    assert {"type": "null"} in properties["description"]["anyOf"]


@pytest.mark.parametrize(
    "body",
    [
        {"expireCurrentInSeconds": -1},
        {"expireCurrentInSeconds": 604801},
        {"expireCurrentInSeconds": "soon"},
        {"expireCurrentInSeconds": "60"},
        {"expireCurrentInSeconds": 60.5},
        {"expireCurrentInSeconds": True},
        {"expireIn": 5},
    ],
)
async def test_bad_rotation_grace_is_400(
    client: httpx.AsyncClient, tenant: Tenant, body: dict[str, object]
):
    created = await create_endpoint(client, tenant, URL)
    response = await client.post(
        f"/api/v1/webhooks/{created['id']}/rotate", json=body, headers=tenant.headers
    )
    assert response.status_code == 400


async def test_idempotent_create_returns_the_same_endpoint_and_secret(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    headers = {**tenant.headers, "Idempotency-Key": f"create-{uuid.uuid4()}"}
    body = {"url": URL, "events": ["post.created.v1"]}
    first = await client.post("/api/v1/webhooks", json=body, headers=headers)
    second = await client.post("/api/v1/webhooks", json=body, headers=headers)
    assert first.status_code == second.status_code == 201
    assert second.headers["idempotent-replayed"] == "true"
    assert second.headers["cache-control"] == "no-store"
    assert second.json() == first.json()
    async with unit_of_work(runtime.sessions) as session:
        count = len(
            list(
                await session.scalars(
                    select(WebhookEndpoint).where(
                        WebhookEndpoint.organization_id == tenant.organization_id
                    )
                )
            )
        )
    assert count == 1


LIFECYCLE = [
    ("POST", "/api/v1/webhooks", {"url": URL, "events": ["post.created.v1"]}),
    ("PATCH", "/api/v1/webhooks/{id}", {"enabled": False}),
    ("DELETE", "/api/v1/webhooks/{id}", None),
    ("POST", "/api/v1/webhooks/{id}/rotate", None),
    ("POST", "/api/v1/webhooks/{id}/test", {"event": "webhook.test.v1"}),
    ("POST", "/api/v1/webhooks/{id}/deliveries/{delivery}/replay", None),
]


@pytest.mark.parametrize(("method", "path", "body"), LIFECYCLE)
async def test_lifecycle_operation_by_a_member_is_403_insufficient_role(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    method: str,
    path: str,
    body: dict[str, object] | None,
):
    endpoint = await create_endpoint(client, tenant, URL)
    member = await add_member_with_key(runtime, tenant.organization_id, role="member")
    concrete = path.format(id=endpoint["id"], delivery=uuid.uuid4())
    response = await client.request(method, concrete, json=body, headers=member.headers)
    assert response.status_code == 403
    assert response.json()["code"] == "insufficient_role"
    # The endpoint is untouched.
    read = await client.get(f"/api/v1/webhooks/{endpoint['id']}", headers=tenant.headers)
    assert read.status_code == 200
    assert read.json()["enabled"] is True


async def test_admin_may_manage_and_member_may_read(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    admin = await add_member_with_key(runtime, tenant.organization_id, role="admin")
    member = await add_member_with_key(runtime, tenant.organization_id, role="member")
    created = await create_endpoint(client, admin, URL)
    assert (
        await client.get(f"/api/v1/webhooks/{created['id']}", headers=member.headers)
    ).status_code == 200
    assert (
        await client.get(f"/api/v1/webhooks/{created['id']}/deliveries", headers=member.headers)
    ).status_code == 200


async def test_reads_need_only_webhooks_read(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    reader = await add_member_with_key(
        runtime, tenant.organization_id, role="member", scopes=["webhooks:read"]
    )
    assert (await client.get("/api/v1/webhooks", headers=reader.headers)).status_code == 200
    denied = await client.post(
        "/api/v1/webhooks", json={"url": URL, "events": ["post.created.v1"]}, headers=reader.headers
    )
    assert denied.status_code == 403
    assert denied.json()["code"] == "insufficient_scope"
