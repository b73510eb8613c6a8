"""Wire conventions: headers on every response, problem+json errors, docs."""

from __future__ import annotations

import httpx
import pytest

from tests.factories import Tenant

CONTRACT_HEADERS = (
    "x-request-id",
    "x-service-api-version",
    "ratelimit-limit",
    "ratelimit-remaining",
    "ratelimit-reset",
    "ratelimit-policy",
)


def assert_contract_headers(response: httpx.Response) -> None:
    for name in CONTRACT_HEADERS:
        assert name in response.headers, (name, response.status_code)
    assert response.headers["x-service-api-version"] == "1"
    assert response.headers["ratelimit-policy"].endswith(";w=60")


async def test_headers_on_success(client: httpx.AsyncClient, tenant: Tenant):
    response = await client.get("/api/v1/tenant", headers=tenant.headers)
    assert response.status_code == 200
    assert_contract_headers(response)
    assert response.headers["ratelimit-limit"] == "600"
    assert response.headers["ratelimit-policy"] == "600;w=60"
    assert int(response.headers["ratelimit-remaining"]) == 599


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/api/v1/nothing-here", 404, "not_found"),
        ("DELETE", "/api/v1/tenant", 405, "method_not_allowed"),
        ("GET", "/api/v1/test/members?pageSize=0", 400, "validation_failed"),
        ("GET", "/api/v1/test/members?pageSize=101", 400, "validation_failed"),
        ("GET", "/api/v1/test/members?cursor=bogus", 400, "validation_failed"),
        ("GET", "/api/v1/test/boom", 500, "internal_error"),
    ],
)
async def test_errors_are_problem_json_with_headers(
    test_client: httpx.AsyncClient, tenant: Tenant, method: str, path: str, status: int, code: str
):
    response = await test_client.request(method, path, headers=tenant.headers)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    assert_contract_headers(response)
    body = response.json()
    assert body["code"] == code
    assert body["status"] == status
    assert body["type"] == f"/problems/{code}"
    assert body["requestId"] == response.headers["x-request-id"]
    assert body["title"] and body["detail"]


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/api/v1/tenant", "GET"),
        ("PUT", "/api/v1/posts", "GET, POST"),
        ("POST", "/api/v1/media/01a21439-b038-71f2-92d3-8f3177e3314e", "DELETE, GET"),
        ("GET", "/api/v1/posts/preflight", "POST"),
    ],
)
async def test_a_405_names_every_method_of_the_path_in_allow(
    client: httpx.AsyncClient, tenant: Tenant, method: str, path: str, allowed: str
):
    response = await client.request(method, path, headers=tenant.headers)
    assert response.status_code == 405
    assert response.headers["allow"] == allowed


async def test_headers_on_unauthenticated_and_public_responses(client: httpx.AsyncClient):
    for path in ("/api/v1/tenant", "/openapi.json", "/docs", "/problems/not_found"):
        response = await client.get(path)
        assert_contract_headers(response)


async def test_internal_error_reveals_no_internals(test_client: httpx.AsyncClient, tenant: Tenant):
    response = await test_client.get("/api/v1/test/boom", headers=tenant.headers)
    assert response.status_code == 500
    assert "hunter2" not in response.text
    assert "prk_" not in response.text
    assert "Traceback" not in response.text


@pytest.mark.parametrize("given", ["abc-123", "req:1.2_3", "x" * 128])
async def test_valid_request_id_is_echoed(client: httpx.AsyncClient, tenant: Tenant, given: str):
    response = await client.get("/api/v1/tenant", headers={**tenant.headers, "X-Request-ID": given})
    assert response.headers["x-request-id"] == given


@pytest.mark.parametrize("given", [b"has space", b"x" * 129, b"semi;colon", "ünï".encode()])
async def test_invalid_request_id_is_replaced(
    client: httpx.AsyncClient, tenant: Tenant, given: bytes
):
    response = await client.get("/api/v1/tenant", headers={**tenant.headers, "X-Request-ID": given})
    assert response.headers["x-request-id"].encode() != given
    assert 1 <= len(response.headers["x-request-id"]) <= 128


async def test_error_request_id_matches_header_when_client_sends_one(
    client: httpx.AsyncClient,
):
    response = await client.get("/api/v1/tenant", headers={"X-Request-ID": "trace-42"})
    assert response.status_code == 401
    assert response.json()["requestId"] == "trace-42"


@pytest.mark.parametrize(
    ("content", "field", "code"),
    [
        (b'{"email": "a@example.com",', "body", "invalid_json"),
        (b'{"email": "a@example.com", "rol": "member"}', "rol", "unknown_field"),
        (b'{"role": "member"}', "email", "required"),
        (b'{"email": "a@example.com", "role": "king"}', "role", "literal_error"),
        (b"[]", "body", "model_attributes_type"),
        (b"", "body", "required"),
    ],
)
async def test_bad_bodies_are_400_naming_the_field(
    test_client: httpx.AsyncClient, tenant: Tenant, content: bytes, field: str, code: str
):
    response = await test_client.post(
        "/api/v1/test/members",
        content=content,
        headers={**tenant.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["code"] == "validation_failed"
    assert any(e["field"] == field and e["code"] == code for e in body["errors"]), body
    assert field in body["detail"]


async def test_failed_write_is_rolled_back(test_client: httpx.AsyncClient, tenant: Tenant):
    email = "rolled-back@example.com"
    response = await test_client.post(
        "/api/v1/test/members",
        json={"email": email, "failAfterWrite": True},
        headers=tenant.headers,
    )
    assert response.status_code == 400
    listed = (await test_client.get("/api/v1/test/members", headers=tenant.headers)).json()
    assert email not in {item["email"] for item in listed["items"]}


async def test_problem_pages_explain_each_code(client: httpx.AsyncClient):
    from pressroom.kit.errors import PROBLEMS

    for code, (status, title, _explanation) in PROBLEMS.items():
        response = await client.get(f"/problems/{code}")
        assert response.status_code == 200
        page = response.json()
        assert page["status"] == status and page["title"] == title and page["explanation"]
    html = await client.get("/problems/rate_limited", headers={"Accept": "text/html"})
    assert html.headers["content-type"].startswith("text/html")
    assert (await client.get("/problems/no_such_code")).status_code == 404


async def test_openapi_document_is_3_1_with_spec_operation_ids(client: httpx.AsyncClient):
    document = (await client.get("/openapi.json")).json()
    assert document["openapi"] == "3.1.0"
    operations = {
        op["operationId"]: op for item in document["paths"].values() for op in item.values()
    }
    assert "getTenant" in operations
    tenant_op = operations["getTenant"]
    assert "422" not in tenant_op["responses"]
    for status in ("400", "401", "403", "404", "409", "429", "500"):
        content = tenant_op["responses"][status]["content"]
        assert "application/problem+json" in content
    assert tenant_op["security"]
    assert "Problem" in document["components"]["schemas"]
    assert "HTTPValidationError" not in document["components"]["schemas"]


async def test_oversized_json_body_is_400_not_413(test_client: httpx.AsyncClient, tenant: Tenant):
    from pressroom.http.routing import MAX_JSON_BODY

    padding = "x" * (MAX_JSON_BODY + 10)
    response = await test_client.post(
        "/api/v1/test/members",
        content=b'{"email": "big@example.com", "pad": "' + padding.encode() + b'"}',
        headers={**tenant.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["errors"][0] == {
        "field": "body",
        "code": "too_large",
        "message": "is larger than 8 MiB",
    }


async def test_oversized_chunked_json_body_is_400(test_client: httpx.AsyncClient, tenant: Tenant):
    from pressroom.http.routing import MAX_JSON_BODY

    async def chunks():
        yield b'{"email": "big@example.com", "pad": "'
        for _ in range(MAX_JSON_BODY // 65536 + 2):
            yield b"y" * 65536
        yield b'"}'

    response = await test_client.post(
        "/api/v1/test/members",
        content=chunks(),
        headers={**tenant.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "too_large"


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/api/v1/tenant", {"verbose": "1"}),
        ("/api/v1/media", {"page_size": "5"}),
        ("/api/v1/posts", {"channelID": "x"}),
        ("/api/v1/webhooks", {"": "false"}),
    ],
)
async def test_unknown_query_parameter_is_400_naming_it(
    client: httpx.AsyncClient, tenant: Tenant, path: str, query: dict[str, str]
):
    response = await client.get(path, params=query, headers=tenant.headers)
    assert response.status_code == 400, response.text
    (name,) = query
    body = response.json()
    assert body["code"] == "validation_failed"
    assert body["errors"][0]["code"] == "unknown_parameter"
    assert body["errors"][0]["field"] == (name or "query")
    # The known parameters of the same operation still work.
    assert (await client.get(path, headers=tenant.headers)).status_code == 200
