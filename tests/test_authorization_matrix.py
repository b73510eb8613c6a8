"""Authorization matrices generated from the route table (not written by hand)."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest
from fastapi import FastAPI

from pressroom.http.routing import _find_requirements
from pressroom.http.routing import api_routes
from pressroom.runtime import Runtime
from tests.factories import Tenant
from tests.factories import add_member_with_key

WEBHOOK_LIFECYCLE = {
    "createWebhookEndpoint",
    "updateWebhookEndpoint",
    "deleteWebhookEndpoint",
    "rotateWebhookEndpointSecret",
    "sendWebhookTest",
    "replayWebhookDelivery",
}


def manager_only_operations(app: FastAPI) -> dict[str, tuple[str, str]]:
    found = {}
    for route in api_routes(list(app.routes)):
        _, manager_only = _find_requirements(route.dependant)
        if manager_only:
            (method,) = route.methods
            found[route.operation_id or route.name] = (method, route.path)
    return found


def test_exactly_the_webhook_lifecycle_operations_require_owner_or_admin(app: FastAPI):
    assert set(manager_only_operations(app)) == WEBHOOK_LIFECYCLE


@pytest.mark.parametrize("role", ["owner", "admin", "member"])
async def test_every_webhook_lifecycle_operation_by_role(
    app: FastAPI, client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, role: str
):
    person = await add_member_with_key(runtime, tenant.organization_id, role=role)
    for operation, (method, path) in manager_only_operations(app).items():
        concrete = re.sub(r"\{[^}]+\}", lambda _m: str(uuid.uuid4()), path)
        response = await client.request(method, concrete, headers=person.headers, json={})
        if role == "member":
            assert response.status_code == 403, operation
            assert response.json()["code"] == "insufficient_role", operation
        else:
            assert response.status_code != 403, (operation, response.text)
