"""GET /providers and GET /providers/{providerId} (contract section 7, "Providers")."""

from __future__ import annotations

import httpx
import pytest

from pressroom.providers.registry import configured_providers
from pressroom.runtime import Runtime
from tests.factories import Tenant
from tests.factories import add_member_with_key
from tests.providers.test_declarations import CONTRACT_PROVIDER_IDS
from tests.providers.test_declarations import TEXT_RULES


async def test_list_is_every_declaration_in_order_in_the_collection_envelope(
    client: httpx.AsyncClient, tenant: Tenant
):
    response = await client.get("/api/v1/providers", headers=tenant.headers)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"items", "nextCursor"}
    assert [item["id"] for item in body["items"]] == list(CONTRACT_PROVIDER_IDS)
    assert body["nextCursor"] is None


async def test_configured_means_an_adapter_can_publish_there(
    client: httpx.AsyncClient, tenant: Tenant
):
    items = (await client.get("/api/v1/providers", headers=tenant.headers)).json()["items"]
    configured = {item["id"]: item["configured"] for item in items}
    assert configured["sandbox"] is True
    assert configured == {provider: provider in configured_providers() for provider in configured}
    # Networks without an adapter in this deployment are not configured.
    assert configured["pinterest"] is False
    assert configured["tiktok"] is False


async def test_page_size_and_cursor_walk_the_collection_once(
    client: httpx.AsyncClient, tenant: Tenant
):
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        params: dict[str, str | int] = {"pageSize": 4}
        if cursor:
            params["cursor"] = cursor
        body = (await client.get("/api/v1/providers", params=params, headers=tenant.headers)).json()
        assert len(body["items"]) <= 4
        seen += [item["id"] for item in body["items"]]
        cursor = body["nextCursor"]
        if cursor is None:
            break
    assert seen == list(CONTRACT_PROVIDER_IDS)


@pytest.mark.parametrize("params", [{"pageSize": 0}, {"pageSize": 101}, {"cursor": "bogus"}])
async def test_bad_page_parameters_are_400(
    client: httpx.AsyncClient, tenant: Tenant, params: dict[str, object]
):
    response = await client.get("/api/v1/providers", params=params, headers=tenant.headers)
    assert response.status_code == 400
    assert response.json()["code"] == "validation_failed"
    assert response.json()["errors"][0]["field"] in {"pageSize", "cursor"}


async def test_a_tampered_cursor_is_400(client: httpx.AsyncClient, tenant: Tenant):
    first = await client.get("/api/v1/providers", params={"pageSize": 2}, headers=tenant.headers)
    cursor = first.json()["nextCursor"]
    tampered = cursor[:-2] + ("AA" if cursor[-2:] != "AA" else "BB")
    response = await client.get(
        "/api/v1/providers", params={"cursor": tampered}, headers=tenant.headers
    )
    assert response.status_code == 400


@pytest.mark.parametrize("provider_id", CONTRACT_PROVIDER_IDS)
async def test_get_provider_states_its_text_rule(
    client: httpx.AsyncClient, tenant: Tenant, provider_id: str
):
    response = await client.get(f"/api/v1/providers/{provider_id}", headers=tenant.headers)
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == provider_id
    text = body["contentKinds"][0]["text"]
    assert {k: text[k] for k in ("maxLength", "unit", "urlLength")} == TEXT_RULES[provider_id]


async def test_declaration_has_the_contract_fields(client: httpx.AsyncClient, tenant: Tenant):
    body = (await client.get("/api/v1/providers/x", headers=tenant.headers)).json()
    assert {"id", "name", "configured", "connection", "contentKinds", "capabilities"} <= set(body)
    assert body["connection"] == "oauth2"
    assert set(body["capabilities"]) == {"threads", "firstComment", "delete", "metrics"}
    media = body["contentKinds"][0]["media"]
    assert {
        "minItems",
        "maxItems",
        "mimeTypes",
        "maxBytes",
        "maxDurationSeconds",
        "aspectRatios",
    } <= set(media)
    assert set(body["metrics"]) <= {
        "impressions",
        "reach",
        "views",
        "likes",
        "comments",
        "shares",
        "saves",
        "clicks",
    }


async def test_sandbox_declaration_is_the_contracts(client: httpx.AsyncClient, tenant: Tenant):
    body = (await client.get("/api/v1/providers/sandbox", headers=tenant.headers)).json()
    assert body["configured"] is True
    assert body["connection"] == "none"
    [kind] = body["contentKinds"]
    assert kind["kind"] == "post"
    assert kind["text"]["maxLength"] == 300 and kind["text"]["unit"] == "graphemes"
    assert kind["media"]["maxItems"] == 4


async def test_unknown_provider_is_404(client: httpx.AsyncClient, tenant: Tenant):
    response = await client.get("/api/v1/providers/myspace", headers=tenant.headers)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


async def test_providers_need_channels_read(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    reader = await add_member_with_key(runtime, tenant.organization_id, scopes=["channels:read"])
    other = await add_member_with_key(runtime, tenant.organization_id, scopes=["posts:read"])
    assert (await client.get("/api/v1/providers", headers=reader.headers)).status_code == 200
    denied = await client.get("/api/v1/providers/x", headers=other.headers)
    assert denied.status_code == 403
    assert denied.json()["requiredScope"] == "channels:read"


async def test_providers_are_described_in_the_openapi_document(client: httpx.AsyncClient):
    document = (await client.get("/openapi.json")).json()
    operations = {
        operation["operationId"]
        for path in document["paths"].values()
        for operation in path.values()
    }
    assert {"listProviders", "getProvider"} <= operations
