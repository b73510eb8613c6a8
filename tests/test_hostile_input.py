"""Hostile and ambiguous input at the HTTP boundary: each is a 4xx naming what is wrong,
never a 500 and never a guess, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Iterator

import httpx
import pytest

from pressroom.kit.logs import log_handler
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant

NUL = "\x00"


@pytest.fixture
async def channel(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    return await connect_channel(runtime, tenant.organization_id)


def field_errors(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "validation_failed"
    return {error["field"]: error["code"] for error in body["errors"]}


# --- NUL characters ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"text": f"a{NUL}b"}, "text"),
        ({"tags": ["ok", f"spring{NUL}"]}, "tags[1]"),
        ({"topics": [NUL]}, "topics[0]"),
        ({"model": f"gpt{NUL}5"}, "model"),
    ],
)
async def test_nul_in_a_post_field_is_400_naming_it(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID, fields: dict, field: str
):
    body = {"text": "hello", "targets": [{"channelId": str(channel)}], **fields}
    response = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
    assert field_errors(response) == {field: "invalid_character"}


async def test_nul_in_a_target_text_or_option_is_400_naming_it(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    body = {
        "text": "hello",
        "targets": [{"channelId": str(channel), "text": f"{NUL}", "options": {f"k{NUL}": 1}}],
    }
    response = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
    assert field_errors(response) == {
        "targets[0].text": "invalid_character",
        "targets[0].options": "invalid_character",
    }


async def test_nul_in_a_post_update_is_400_and_changes_nothing(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    created = await client.post(
        "/api/v1/posts",
        json={"text": "hello", "targets": [{"channelId": str(channel)}]},
        headers=tenant.headers,
    )
    post_id = created.json()["id"]
    response = await client.patch(
        f"/api/v1/posts/{post_id}", json={"text": f"x{NUL}"}, headers=tenant.headers
    )
    assert field_errors(response) == {"text": "invalid_character"}
    read = await client.get(f"/api/v1/posts/{post_id}", headers=tenant.headers)
    assert read.json()["text"] == "hello"


async def test_nul_in_a_webhook_description_is_400_naming_it(
    client: httpx.AsyncClient, tenant: Tenant
):
    response = await client.post(
        "/api/v1/webhooks",
        json={
            "url": "https://hooks.example.com/in",
            "events": ["post.created.v1"],
            "description": f"ops{NUL}",
        },
        headers=tenant.headers,
    )
    assert field_errors(response) == {"description": "invalid_character"}


async def test_nul_in_a_query_parameter_is_400_naming_it(client: httpx.AsyncClient, tenant: Tenant):
    response = await client.get("/api/v1/posts?tag=spring%00", headers=tenant.headers)
    assert field_errors(response) == {"tag": "invalid_character"}


async def test_nul_in_a_path_parameter_is_400_naming_it(client: httpx.AsyncClient, tenant: Tenant):
    response = await client.get("/api/v1/providers/x%00", headers=tenant.headers)
    assert field_errors(response) == {"providerId": "invalid_character"}


async def test_nul_in_an_idempotency_key_is_400_naming_it(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    response = await client.post(
        "/api/v1/posts",
        json={"text": "hello", "targets": [{"channelId": str(channel)}]},
        headers={**tenant.headers, "Idempotency-Key": "key\x00one"},
    )
    assert "Idempotency-Key" in field_errors(response)


async def test_an_escaped_backslash_before_u0000_is_not_a_nul(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    # The JSON text `\\u0000` is a backslash followed by "u0000": six ordinary characters.
    content = json.dumps({"text": "\\u0000", "targets": [{"channelId": str(channel)}]})
    response = await client.post(
        "/api/v1/posts",
        content=content.encode(),
        headers={**tenant.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 201, response.text
    assert response.json()["text"] == "\\u0000"


# --- Repeated query parameters -------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "query", "name"),
    [
        ("/api/v1/posts", "pageSize=1&pageSize=2", "pageSize"),
        ("/api/v1/posts", "status=draft&status=scheduled", "status"),
        ("/api/v1/webhooks", "cursor=a&cursor=b", "cursor"),
        ("/api/v1/media", "pageSize=5&pageSize=5", "pageSize"),
    ],
)
async def test_a_repeated_query_parameter_is_400_naming_it(
    client: httpx.AsyncClient, tenant: Tenant, path: str, query: str, name: str
):
    response = await client.get(f"{path}?{query}", headers=tenant.headers)
    assert field_errors(response) == {name: "repeated"}


async def test_documented_repeatable_filters_may_still_be_repeated(
    client: httpx.AsyncClient, tenant: Tenant
):
    response = await client.get(
        "/api/v1/analytics?start=2026-03-01T00:00:00Z&end=2026-03-31T00:00:00Z"
        "&metrics=likes&metrics=views",
        headers=tenant.headers,
    )
    assert response.status_code == 200, response.text
    assert response.json()["metrics"] == ["views", "likes"]


# --- Content types -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type", ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data", None]
)
async def test_a_non_json_body_to_a_json_operation_is_415(
    client: httpx.AsyncClient, tenant: Tenant, content_type: str | None
):
    headers = dict(tenant.headers)
    if content_type:
        headers["Content-Type"] = content_type
    response = await client.post("/api/v1/posts", content=b"text=hello", headers=headers)
    assert response.status_code == 415, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "unsupported_media_type"
    assert body["type"] == "/problems/unsupported_media_type"


async def test_a_form_body_to_a_patch_is_415(client: httpx.AsyncClient, tenant: Tenant):
    response = await client.patch(
        f"/api/v1/webhooks/{uuid.uuid4()}", data={"enabled": "false"}, headers=tenant.headers
    )
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "application/merge-patch+json"]
)
async def test_json_media_types_with_parameters_or_suffix_are_json(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID, content_type: str
):
    content = json.dumps({"text": "hello", "targets": [{"channelId": str(channel)}]}).encode()
    response = await client.post(
        "/api/v1/posts", content=content, headers={**tenant.headers, "Content-Type": content_type}
    )
    assert response.status_code == 201, response.text


async def test_json_operations_declare_415_in_the_document(client: httpx.AsyncClient):
    document = (await client.get("/openapi.json")).json()
    operations = {
        op["operationId"]: op for item in document["paths"].values() for op in item.values()
    }
    for operation_id in ("createPost", "updatePost", "createWebhookEndpoint", "sendWebhookTest"):
        problem = operations[operation_id]["responses"]["415"]["content"]
        assert "application/problem+json" in problem
    assert "415" not in operations["getPost"]["responses"]
    assert (
        "unsupported_media_type"
        in document["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]
    )


# --- Authorization -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"), [("key", "Bearer prk_bogus"), ("Bearer prk_bogus", "key"), ("key", "key")]
)
async def test_two_authorization_headers_are_401_whichever_is_valid(
    client: httpx.AsyncClient, tenant: Tenant, first: str, second: str
):
    values = [tenant.headers["Authorization"] if v == "key" else v for v in (first, second)]
    response = await client.get(
        "/api/v1/tenant", headers=[("Authorization", value) for value in values]
    )
    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated"
    assert response.json()["detail"].startswith("More than one credential")
    assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize("template", ["{key}, Bearer prk_other", "{key},{key}", "{key} {key}"])
async def test_one_authorization_header_with_two_credentials_is_401(
    client: httpx.AsyncClient, tenant: Tenant, template: str
):
    value = template.format(key=tenant.headers["Authorization"])
    response = await client.get("/api/v1/tenant", headers={"Authorization": value})
    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated"


# --- Trailing slashes ----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/posts/", "/api/v1/tenant/", "/api/v1/webhooks/"])
async def test_a_trailing_slash_is_404_not_a_redirect(
    client: httpx.AsyncClient, tenant: Tenant, path: str
):
    response = await client.get(path, headers={**tenant.headers, "Host": "evil.example"})
    assert response.status_code == 404
    assert "location" not in response.headers
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "not_found"


# --- Database errors in logs ---------------------------------------------------------------


@pytest.fixture
def service_log() -> Iterator[tuple[io.StringIO, list[logging.LogRecord]]]:
    """The service's own log handler on the root logger, and every record it handled."""
    stream = io.StringIO()
    handler = log_handler(stream)
    records: list[logging.LogRecord] = []
    handler.addFilter(lambda record: records.append(record) or True)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield stream, records
    finally:
        root.removeHandler(handler)


async def test_a_database_error_is_logged_without_its_parameters(
    test_client: httpx.AsyncClient,
    tenant: Tenant,
    service_log: tuple[io.StringIO, list[logging.LogRecord]],
):
    stream, records = service_log
    marker = f"leaky-{uuid.uuid4().hex[:12]}@example.com"
    response = await test_client.post(
        "/api/v1/test/members/twice", json={"email": marker}, headers=tenant.headers
    )
    assert response.status_code == 500
    assert marker not in response.text
    failures = [record for record in records if record.getMessage() == "unhandled error"]
    assert failures, stream.getvalue()
    output = stream.getvalue()
    assert "IntegrityError" in output and "members" in output  # still diagnosable
    assert marker not in output
    for record in records:
        # Whatever formatter handles the record next sees only the withheld rendering.
        assert marker not in logging.Formatter().format(record)
        assert marker not in json.dumps(vars(record), default=str)


async def test_the_engines_keep_statement_parameters_out_of_their_errors(
    runtime: Runtime, tenant: Tenant
):
    from sqlalchemy.exc import IntegrityError

    from pressroom.auth.models import Member
    from pressroom.db import unit_of_work

    marker = f"param-{uuid.uuid4().hex[:12]}@example.com"

    async def add_twice() -> None:
        async with unit_of_work(runtime.sessions) as session:
            for _ in range(2):
                session.add(
                    Member(organization_id=tenant.organization_id, email=marker, role="member")
                )
                await session.flush()

    with pytest.raises(IntegrityError) as raised:
        await add_twice()
    assert "[SQL parameters hidden" in str(raised.value)


@pytest.mark.parametrize("given", ["x" * 100, "bad%00id"])
async def test_a_refused_request_with_a_hostile_path_id_is_still_audited(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, given: str
):
    from tests.posts.factories import audit_entries_of

    response = await client.patch(
        f"/api/v1/posts/{given}", json={"text": "x"}, headers=tenant.headers
    )
    assert response.status_code == 400
    ((resource_id, status),) = await audit_entries_of(runtime, tenant.organization_id, "updatePost")
    assert status == 400
    assert resource_id is not None and len(resource_id) <= 64 and NUL not in resource_id
