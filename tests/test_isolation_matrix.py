"""Organizations are sealed from each other (contract section 2), proven over the route table:
every operation whose path names an object answers an object of another organization exactly
like a missing one (404 `not_found`, nothing of it in the answer, the object untouched), and an
id of another organization inside a body or a query is a 400 naming the field."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import uuid
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from sqlalchemy import select

from pressroom.analytics.importer import import_history
from pressroom.db import unit_of_work
from pressroom.posts.models import Post
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.media.factories import CONTENT_TYPE
from tests.media.factories import FormPart
from tests.media.factories import image_bytes
from tests.media.factories import multipart_body

# Path parameters that name an object of an organization: the fixture world below holds a
# real one of each. A route with any other path parameter fails
# test_every_path_parameter_names_a_fixture_object until it is added here and to the world.
OBJECT_PARAMETERS = ("channelId", "postId", "mediaId", "webhookEndpointId", "webhookDeliveryId")
# Path parameters that name nothing of an organization, with a value to call them with:
# provider ids are the same for everyone, so there is nothing of another organization to reach
# through them.
SHARED_PARAMETERS = {"providerId": "sandbox", "provider": "x"}

# A valid body for each object operation that takes one: valid for any object of its kind, so
# the only answer left for another organization's object is the 404 (validation comes first
# in the contract's order of checks, so an invalid body would hide the lookup).
BODIES: dict[str, dict[str, Any]] = {
    "updatePost": {"text": "Rewritten by another organization", "tags": ["intruder"]},
    "updateWebhookEndpoint": {
        "url": "https://intruder.example.com/hook",
        "description": "taken over",
        "enabled": False,
    },
    "rotateWebhookEndpointSecret": {"expireCurrentInSeconds": 60},
    "sendWebhookTest": {"event": "webhook.test.v1"},
}


@dataclass(frozen=True)
class Operation:
    operation_id: str
    method: str
    path: str
    parameters: tuple[str, ...]
    takes_body: bool


def path_parameters(path: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\{([^}]+)\}", path))


def all_routes(routes: list[Any]) -> Iterator[APIRoute]:
    """Every endpoint of a route table, through included routers, whatever its route class."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from all_routes(list(inner.routes))


def operations(app: FastAPI) -> list[Operation]:
    """Every operation under /api/v1, from the application's route table."""
    found = []
    for route in all_routes(list(app.routes)):
        if not route.path.startswith("/api/v1"):
            continue
        for method in sorted(route.methods):
            found.append(
                Operation(
                    operation_id=route.operation_id or route.name,
                    method=method,
                    # As the document writes it: `{postId}`, not its convertor `{postId:post_id}`.
                    path=route.path_format,
                    parameters=path_parameters(route.path_format),
                    takes_body=_takes_body(route),
                )
            )
    return found


def _takes_body(route: APIRoute) -> bool:
    return route.body_field is not None


def object_operations(app: FastAPI) -> list[Operation]:
    return [
        op for op in operations(app) if any(name not in SHARED_PARAMETERS for name in op.parameters)
    ]


# -- the fixture world: one real object of each kind in an organization -----------------------


@dataclass
class World:
    """One organization's objects, made the way clients and the command line make them."""

    tenant: Tenant
    label: str
    ids: dict[str, str]
    target_id: str
    provider_token: str
    imported_post: str = ""
    secrets: set[str] = field(default_factory=set)
    values: set[str] = field(default_factory=set)


def _future(days: float) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).isoformat().replace("+00:00", "Z")


async def build_world(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, label: str
) -> World:
    token = f"provider-token-{label}-{uuid.uuid4().hex}"
    channel = await connect_channel(
        runtime,
        tenant.organization_id,
        name=f"{label} channel",
        handle=f"@{label}-handle",
        credentials={"accessToken": token},
    )
    picture = image_bytes("PNG", (48, 32), noise=True)  # noise: unlike any other's bytes
    uploaded = await client.post(
        "/api/v1/media",
        content=multipart_body([FormPart(picture, f"{label}-picture.png", "image/png")]),
        headers={**tenant.headers, "Content-Type": CONTENT_TYPE},
    )
    assert uploaded.status_code == 201, uploaded.text
    (media,) = uploaded.json()["items"]
    post = await client.post(
        "/api/v1/posts",
        json={
            "text": f"{label} post text",
            "mediaIds": [media["id"]],
            "scheduledAt": _future(2),
            "tags": [f"{label}-campaign"],
            "topics": [f"{label}-topic"],
            "model": f"{label}-model",
            "targets": [{"channelId": str(channel), "text": f"{label} target text"}],
        },
        headers=tenant.headers,
    )
    assert post.status_code == 201, post.text
    endpoint = await client.post(
        "/api/v1/webhooks",
        json={
            "url": f"https://hooks.example.com/{label}",
            "events": ["post.created.v1", "post.updated.v1"],
            "description": f"{label} endpoint",
        },
        headers=tenant.headers,
    )
    assert endpoint.status_code == 201, endpoint.text
    test = await client.post(
        f"/api/v1/webhooks/{endpoint.json()['id']}/test",
        json={"event": "webhook.test.v1"},
        headers=tenant.headers,
    )
    assert test.status_code == 202, test.text
    ids = {
        "channelId": str(channel),
        "postId": post.json()["id"],
        "mediaId": media["id"],
        "webhookEndpointId": endpoint.json()["id"],
        "webhookDeliveryId": test.json()["deliveryId"],
    }
    assert set(ids) == set(OBJECT_PARAMETERS)
    world = World(tenant, label, ids, post.json()["targets"][0]["id"], token)
    # Published history, as `pressroom analytics import` loads it: what analytics reports.
    history = {
        "channelId": str(channel),
        "publishedAt": (_NOW - timedelta(days=2)).isoformat().replace("+00:00", "Z"),
        "text": f"{label} imported post",
        "contentKind": "post",
        "tags": [f"{label}-history"],
        "topics": [f"{label}-history-topic"],
        "model": f"{label}-history-model",
        "approvalStatus": "not_required",
        "metrics": {"impressions": 1000, "likes": 40, "comments": 3},
    }
    async with unit_of_work(runtime.sessions) as session:
        assert await import_history(session, tenant.organization_id, [json.dumps(history)]) == 1
        world.imported_post = str(
            await session.scalar(
                select(Post.id).where(
                    Post.organization_id == tenant.organization_id, Post.text == history["text"]
                )
            )
        )
    world.secrets = {
        token,
        endpoint.json()["signingSecret"],
        endpoint.json()["signingSecret"].removeprefix("whsec_"),
        tenant.key,
    }
    return world


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SHA256 = re.compile(r"[0-9a-f]{64}")


def distinctive_values(world: World, documents: list[Any]) -> set[str]:
    """What only the world's organization has: the ids (every UUID) and digests in its
    owner's reads, every name, text and url (each carries the world's label), its key, its
    members and its secrets. Shared vocabulary (`sandbox`, `image/png`, event kinds) and
    timestamps are left out: they appear in any organization's answers."""
    found: set[str] = set(world.secrets) | {
        str(world.tenant.organization_id),
        str(world.tenant.member_id),
        str(world.tenant.key_id),
        world.tenant.key[:12],  # the key's prefix, shown by getTenant
    }

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str):
            found.update(UUID.findall(node.lower()))
            found.update(SHA256.findall(node))
            if world.label in node:
                found.add(node)

    for document in documents:
        walk(document)
    return found


def concrete(op: Operation, owners: dict[str, World]) -> str:
    """The operation's path with each object parameter taken from its owner's world."""
    path = op.path
    for name in op.parameters:
        if name in SHARED_PARAMETERS:
            value = SHARED_PARAMETERS[name]
        else:
            assert name in owners[name].ids, f"no fixture object for {name}"
            value = owners[name].ids[name]
        path = path.replace("{" + name + "}", value)
    return path


def ownerships(op: Operation, mine: World, theirs: World) -> Iterator[dict[str, World]]:
    """Every way of naming the operation's objects with at least one of the other
    organization's: all theirs, and for nested paths each mix (my endpoint with their
    delivery, their endpoint with my delivery)."""
    names = [name for name in op.parameters if name not in SHARED_PARAMETERS]
    for owners in itertools.product((mine, theirs), repeat=len(names)):
        if theirs in owners:
            yield dict(zip(names, owners, strict=True))


# Query parameters of the reads that require some: a fixed window around the imported history.
_NOW = datetime.now(UTC)
READ_QUERIES = {
    "getAnalytics": {
        "start": (_NOW - timedelta(days=30)).isoformat(),
        "end": (_NOW + timedelta(days=1)).isoformat(),
    }
}


async def reads(client: httpx.AsyncClient, app: FastAPI, world: World) -> dict[str, httpx.Response]:
    """Every read of the route table by the world's owner, objects taken from its world."""
    everyone = dict.fromkeys(OBJECT_PARAMETERS, world)
    answers = {}
    for op in operations(app):
        if op.method != "GET":
            continue
        response = await client.get(
            concrete(op, everyone),
            params=READ_QUERIES.get(op.operation_id),
            headers=world.tenant.headers,
        )
        assert response.status_code == 200, (op.operation_id, response.text)
        answers[op.operation_id] = response
    return answers


async def read_back(client: httpx.AsyncClient, app: FastAPI, world: World) -> dict[str, Any]:
    """What the owner reads through every read of the route table: the state against which
    'unchanged' is judged."""
    readings: dict[str, Any] = {}
    for operation_id, response in (await reads(client, app, world)).items():
        if response.headers["content-type"].startswith("application/json"):
            readings[operation_id] = response.json()
        else:
            readings[operation_id] = hashlib.sha256(response.content).hexdigest()
    return readings


def assert_reveals_nothing(response: httpx.Response, values: set[str], context: object) -> None:
    answer = response.text + json.dumps(dict(response.headers))
    leaked = sorted(value for value in values if value in answer)
    assert not leaked, (context, leaked, answer)


def assert_not_found(response: httpx.Response, world: World, context: object) -> None:
    assert response.status_code == 404, (context, response.status_code, response.text)
    assert response.headers["content-type"] == "application/problem+json", context
    body = response.json()
    assert body["code"] == "not_found", (context, body)
    assert body["type"] == "/problems/not_found", (context, body)
    assert_reveals_nothing(response, world.values, context)


@pytest.fixture
async def worlds(
    app: FastAPI, client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
) -> tuple[World, World]:
    """(A, B): two organizations with one object of each kind."""
    mine = await build_world(client, runtime, tenant, f"orga-{uuid.uuid4().hex[:8]}")
    theirs = await build_world(client, runtime, other_tenant, f"orgb-{uuid.uuid4().hex[:8]}")
    for world in (mine, theirs):
        readings = await read_back(client, app, world)
        world.values = distinctive_values(world, list(readings.values()))
    return mine, theirs


# -- the route table is covered ------------------------------------------------------------


def test_every_path_parameter_names_a_fixture_object(app: FastAPI):
    unknown = {
        (op.operation_id, name)
        for op in operations(app)
        for name in op.parameters
        if name not in OBJECT_PARAMETERS and name not in SHARED_PARAMETERS
    }
    assert not unknown, (
        f"no fixture object for {sorted(unknown)}: add the kind to OBJECT_PARAMETERS and "
        "build a real one in build_world"
    )
    # Every object kind the world holds is still addressed by some route.
    used = {name for op in operations(app) for name in op.parameters}
    assert set(OBJECT_PARAMETERS) <= used


def test_every_object_operation_with_a_body_has_a_valid_one(app: FastAPI):
    missing = [op.operation_id for op in object_operations(app) if op.takes_body]
    assert set(missing) <= set(BODIES), f"add a valid body to BODIES for {missing}"
    assert set(BODIES) <= {op.operation_id for op in object_operations(app)}


# -- objects of another organization in the path are 404 -----------------------------------


async def test_every_object_operation_answers_another_organizations_object_as_missing(
    app: FastAPI, client: httpx.AsyncClient, worlds: tuple[World, World]
):
    mine, theirs = worlds
    before = await read_back(client, app, theirs)
    assert set(before) >= {"getChannel", "getPost", "getMedia", "getWebhookDelivery"}
    cases = 0
    covered = set()
    for op in object_operations(app):
        for owners in ownerships(op, mine, theirs):
            path = concrete(op, owners)
            variants: list[dict[str, str]] = [{}]
            if op.method == "GET":
                # A conditional read must not turn into a 304 that confirms the object exists.
                variants.append({"If-None-Match": "*"})
            else:
                variants.append({"Idempotency-Key": f"isolation-{uuid.uuid4()}"})
            for extra in variants:
                response = await client.request(
                    op.method,
                    path,
                    headers={**mine.tenant.headers, **extra},
                    json=BODIES.get(op.operation_id),
                )
                context = (op.operation_id, path, extra)
                assert_not_found(response, theirs, context)
                cases += 1
            # Nothing of theirs moved: every read of their owner answers as before.
            assert await read_back(client, app, theirs) == before, (op.operation_id, path)
            covered.add(op.operation_id)
    assert covered == {op.operation_id for op in object_operations(app)}
    print(f"\n{len(covered)} object operations, {cases} cross-organization requests: all 404")


async def test_reads_of_one_organization_show_nothing_of_another(
    app: FastAPI, client: httpx.AsyncClient, worlds: tuple[World, World]
):
    """Every read of A (collections, analytics, its own objects) holds none of B's objects,
    ids, texts or published history."""
    mine, theirs = worlds
    answers = await reads(client, app, mine)
    for operation_id, response in answers.items():
        assert_reveals_nothing(response, theirs.values, operation_id)
    # The reads are not empty: A's own things are there to be seen beside B's absence.
    analytics = answers["getAnalytics"].json()
    assert [item["postId"] for item in analytics["posts"]["items"]] == [mine.imported_post]
    listed = answers["listPosts"].json()["items"]
    assert {post["id"] for post in listed} == {mine.ids["postId"], mine.imported_post}


# -- ids of another organization inside bodies and queries are 400 ---------------------------


def id_references(document: dict[str, Any]) -> set[tuple[str, str]]:
    """(operationId, where) of every id a request carries outside its path, from the OpenAPI
    document: JSON body fields of `format: uuid` (as `targets[].channelId`) and query
    parameters that take ids (`format: uuid`, or named `...Id` / `...Ids`)."""
    schemas = document["components"]["schemas"]
    found: set[tuple[str, str]] = set()

    def walk(operation_id: str, node: Any, where: str, seen: frozenset[str]) -> None:
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if ref is not None:
            name = ref.rsplit("/", 1)[-1]
            if name not in seen:
                walk(operation_id, schemas[name], where, seen | {name})
            return
        if node.get("format") == "uuid":
            found.add((operation_id, where))
        for option in node.get("anyOf", []) + node.get("oneOf", []) + node.get("allOf", []):
            walk(operation_id, option, where, seen)
        if "items" in node:
            walk(operation_id, node["items"], f"{where}[]", seen)
        for name, child in node.get("properties", {}).items():
            walk(operation_id, child, f"{where}.{name}" if where else name, seen)

    for methods in document["paths"].values():
        for operation in methods.values():
            operation_id = operation["operationId"]
            for parameter in operation.get("parameters", []):
                name = parameter["name"]
                schema = json.dumps(parameter.get("schema", {}))
                if parameter["in"] == "query" and (
                    '"format": "uuid"' in schema or name.endswith(("Id", "Ids"))
                ):
                    found.add((operation_id, f"?{name}"))
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None:
                walk(operation_id, body["schema"], "", frozenset())
    return found


@dataclass(frozen=True)
class Reference:
    """A request carrying the ids of `owner` where the caller's own ids belong."""

    method: str
    path: str
    body: dict[str, Any] | None = None
    query: dict[str, str] | None = None
    field: str = ""  # the field a 400 must name
    success: int = 200  # the answer when the ids are the caller's own
    # The answer to another organization's ids: a 400, or a 200 that reports the field error
    # in its body (preflightPost: `ok` false, the same `errors` createPost's 400 would hold).
    refusal: int = 400


def _window() -> dict[str, str]:
    now = datetime.now(UTC)
    return {"start": (now - timedelta(days=7)).isoformat(), "end": now.isoformat()}


# (operationId, where the id goes) -> the request of `me` carrying `owner`'s id there.
REFERENCES: dict[tuple[str, str], Callable[[World, World], Reference]] = {
    ("createPost", "targets[].channelId"): lambda me, owner: Reference(
        "POST",
        "/api/v1/posts",
        {"text": "hello", "targets": [{"channelId": owner.ids["channelId"]}]},
        field="targets[0].channelId",
        success=201,
    ),
    ("createPost", "mediaIds[]"): lambda me, owner: Reference(
        "POST",
        "/api/v1/posts",
        {
            "text": "hello",
            "mediaIds": [owner.ids["mediaId"]],
            "targets": [{"channelId": me.ids["channelId"]}],
        },
        field="mediaIds[0]",
        success=201,
    ),
    ("createPost", "targets[].mediaIds[]"): lambda me, owner: Reference(
        "POST",
        "/api/v1/posts",
        {
            "text": "hello",
            "targets": [{"channelId": me.ids["channelId"], "mediaIds": [owner.ids["mediaId"]]}],
        },
        field="targets[0].mediaIds[0]",
        success=201,
    ),
    ("preflightPost", "targets[].channelId"): lambda me, owner: Reference(
        "POST",
        "/api/v1/posts/preflight",
        {"text": "hello", "targets": [{"channelId": owner.ids["channelId"]}]},
        field="targets[0].channelId",
        refusal=200,
    ),
    ("preflightPost", "mediaIds[]"): lambda me, owner: Reference(
        "POST",
        "/api/v1/posts/preflight",
        {
            "text": "hello",
            "mediaIds": [owner.ids["mediaId"]],
            "targets": [{"channelId": me.ids["channelId"]}],
        },
        field="mediaIds[0]",
        refusal=200,
    ),
    ("preflightPost", "targets[].mediaIds[]"): lambda me, owner: Reference(
        "POST",
        "/api/v1/posts/preflight",
        {
            "text": "hello",
            "targets": [{"channelId": me.ids["channelId"], "mediaIds": [owner.ids["mediaId"]]}],
        },
        field="targets[0].mediaIds[0]",
        refusal=200,
    ),
    ("updatePost", "mediaIds[]"): lambda me, owner: Reference(
        "PATCH",
        f"/api/v1/posts/{me.ids['postId']}",
        {"mediaIds": [owner.ids["mediaId"]]},
        field="mediaIds[0]",
    ),
    ("updatePost", "targets[].channelId"): lambda me, owner: Reference(
        "PATCH",
        f"/api/v1/posts/{me.ids['postId']}",
        {"targets": [{"channelId": owner.ids["channelId"], "text": "moved"}]},
        field="targets[0].channelId",
    ),
    ("updatePost", "targets[].id"): lambda me, owner: Reference(
        "PATCH",
        f"/api/v1/posts/{me.ids['postId']}",
        {"targets": [{"id": owner.target_id, "text": "retitled"}]},
        field="targets[0].id",
    ),
    ("updatePost", "targets[].mediaIds[]"): lambda me, owner: Reference(
        "PATCH",
        f"/api/v1/posts/{me.ids['postId']}",
        {"targets": [{"id": me.target_id, "mediaIds": [owner.ids["mediaId"]]}]},
        field="targets[0].mediaIds[0]",
    ),
    ("listPosts", "?channelId"): lambda me, owner: Reference(
        "GET", "/api/v1/posts", query={"channelId": owner.ids["channelId"]}, field="channelId"
    ),
    ("getAnalytics", "?channelIds"): lambda me, owner: Reference(
        "GET",
        "/api/v1/analytics",
        query={**_window(), "channelIds": owner.ids["channelId"]},
        field="channelIds",
    ),
}


def test_every_id_carried_in_a_body_or_query_has_a_cross_organization_case(app: FastAPI):
    assert id_references(app.openapi()) == set(REFERENCES)


async def test_ids_of_another_organization_in_bodies_and_queries_are_400_field_errors(
    app: FastAPI, client: httpx.AsyncClient, worlds: tuple[World, World]
):
    mine, theirs = worlds
    before = await read_back(client, app, theirs)
    # Naming the ids the caller sent is fine; nothing else of theirs may come back.
    sent = {theirs.ids["channelId"], theirs.ids["mediaId"], theirs.target_id}
    for where, make in REFERENCES.items():
        mine_before = await read_back(client, app, mine)
        foreign = make(mine, theirs)
        response = await client.request(
            foreign.method,
            foreign.path,
            json=foreign.body,
            params=foreign.query,
            headers=mine.tenant.headers,
        )
        assert response.status_code == foreign.refusal, (where, response.text)
        body = response.json()
        if foreign.refusal == 400:
            assert body["code"] == "validation_failed", (where, body)
        else:
            assert body["ok"] is False, (where, body)
        assert foreign.field in {error["field"] for error in body["errors"]}, (where, body)
        assert_reveals_nothing(response, theirs.values - sent, where)
        # The refused request changed nothing of the caller's either (all or nothing).
        assert await read_back(client, app, mine) == mine_before, where
        # The same request with the caller's own ids is accepted: the 400 was the foreign id.
        own = make(mine, mine)
        accepted = await client.request(
            own.method, own.path, json=own.body, params=own.query, headers=mine.tenant.headers
        )
        assert accepted.status_code == own.success, (where, accepted.text)
        if own.refusal == 200:
            assert accepted.json()["ok"] is True, (where, accepted.text)
        if own.path == f"/api/v1/posts/{mine.ids['postId']}":
            mine.target_id = accepted.json()["targets"][0]["id"]
    assert await read_back(client, app, theirs) == before
    print(f"\n{len(REFERENCES)} ids in bodies and queries: another organization's is a 400")


# -- idempotency keys belong to one organization ---------------------------------------------


@dataclass(frozen=True)
class KeyedRequest:
    method: str
    path: str
    json: dict[str, Any] | None = None
    content: bytes | None = None
    content_type: str | None = None


def _upload(world: World) -> KeyedRequest:
    # The same file from both organizations: only the key's owner may tell them apart.
    picture = image_bytes("PNG", (20, 20))
    return KeyedRequest(
        "POST",
        "/api/v1/media",
        content=multipart_body([FormPart(picture, "same.png", "image/png")]),
        content_type=CONTENT_TYPE,
    )


# Each operation that takes an Idempotency-Key, as an organization calls it on its own objects,
# in an order that keeps the objects usable (tests before disabling, deletes last).
KEYED: list[tuple[str, Callable[[World], KeyedRequest]]] = [
    (
        "createPost",
        lambda w: KeyedRequest(
            "POST",
            "/api/v1/posts",
            {"text": "same", "targets": [{"channelId": w.ids["channelId"]}]},
        ),
    ),
    ("uploadMedia", _upload),
    (
        "createWebhookEndpoint",
        lambda w: KeyedRequest(
            "POST",
            "/api/v1/webhooks",
            {"url": "https://hooks.example.com/same", "events": ["post.created.v1"]},
        ),
    ),
    (
        "sendWebhookTest",
        lambda w: KeyedRequest(
            "POST", f"/api/v1/webhooks/{w.ids['webhookEndpointId']}/test", BODIES["sendWebhookTest"]
        ),
    ),
    (
        "rotateWebhookEndpointSecret",
        lambda w: KeyedRequest(
            "POST",
            f"/api/v1/webhooks/{w.ids['webhookEndpointId']}/rotate",
            BODIES["rotateWebhookEndpointSecret"],
        ),
    ),
    (
        "updatePost",
        lambda w: KeyedRequest(
            "PATCH", f"/api/v1/posts/{w.ids['postId']}", {"text": "same", "tags": ["same"]}
        ),
    ),
    (
        "updateWebhookEndpoint",
        lambda w: KeyedRequest(
            "PATCH", f"/api/v1/webhooks/{w.ids['webhookEndpointId']}", {"description": "same"}
        ),
    ),
    ("deletePost", lambda w: KeyedRequest("DELETE", f"/api/v1/posts/{w.ids['postId']}")),
    (
        "deleteWebhookEndpoint",
        lambda w: KeyedRequest("DELETE", f"/api/v1/webhooks/{w.ids['webhookEndpointId']}"),
    ),
    (
        "disconnectChannel",
        lambda w: KeyedRequest("DELETE", f"/api/v1/channels/{w.ids['channelId']}"),
    ),
]


def keyed_operations(document: dict[str, Any]) -> set[str]:
    """The operations whose document declares the Idempotency-Key header."""
    return {
        operation["operationId"]
        for methods in document["paths"].values()
        for operation in methods.values()
        if any(p["name"] == "Idempotency-Key" for p in operation.get("parameters", []))
    }


def test_every_operation_taking_an_idempotency_key_has_a_same_key_case(app: FastAPI):
    assert {operation for operation, _ in KEYED} == keyed_operations(app.openapi())


async def test_the_same_idempotency_key_in_two_organizations_is_two_keys(
    client: httpx.AsyncClient, worlds: tuple[World, World]
):
    """Keys are scoped to the organization (contract section 6): another organization's use
    of a key neither replays its answer (or its secret) nor makes the key 'reused'."""
    mine, theirs = worlds

    async def send(world: World, request: KeyedRequest, key: str) -> httpx.Response:
        headers = {**world.tenant.headers, "Idempotency-Key": key}
        if request.content_type is not None:
            headers["Content-Type"] = request.content_type
        return await client.request(
            request.method,
            request.path,
            json=request.json,
            content=request.content,
            headers=headers,
        )

    for operation, make in KEYED:
        key = f"shared-{operation}"
        theirs_answer = await send(theirs, make(theirs), key)
        assert theirs_answer.status_code < 300, (operation, theirs_answer.text)
        mine_answer = await send(mine, make(mine), key)
        assert mine_answer.status_code == theirs_answer.status_code, (operation, mine_answer.text)
        assert "idempotent-replayed" not in mine_answer.headers, operation
        assert_reveals_nothing(mine_answer, theirs.values | set(json_ids(theirs_answer)), operation)
        # Within one organization the key does replay: it was honoured, just not shared.
        again = await send(mine, make(mine), key)
        assert again.headers.get("idempotent-replayed") == "true", (operation, again.text)
        assert again.content == mine_answer.content, operation
    print(f"\n{len(KEYED)} operations taking an Idempotency-Key: one key per organization")


def json_ids(response: httpx.Response) -> list[str]:
    """The ids in an answer (the objects one organization's request made)."""
    return UUID.findall(response.text)
