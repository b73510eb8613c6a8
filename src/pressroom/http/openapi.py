"""The OpenAPI document: problem+json errors declared on every operation, 400 not 422."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import TypeVar

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from pressroom.http.idempotency import IDEMPOTENT_OPERATIONS
from pressroom.http.problems import PROBLEM_REF
from pressroom.http.routing import api_routes
from pressroom.kit.errors import PROBLEMS

Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])


def answer_examples(
    status: int, examples: dict[str, dict[str, Any]]
) -> Callable[[Endpoint], Endpoint]:
    """Examples of an operation's JSON answer, put into the document exactly as given.

    Declared through `responses=`, they would pass through FastAPI's encoding of the document,
    which drops every null: an example with a null field would then contradict its schema."""

    def mark(endpoint: Endpoint) -> Endpoint:
        endpoint.answer_examples = {status: examples}  # type: ignore[attr-defined]
        return endpoint

    return mark


def _add_answer_examples(app: FastAPI, document: dict[str, Any]) -> None:
    for route in api_routes(list(app.routes)):
        for status, examples in getattr(route.endpoint, "answer_examples", {}).items():
            for method in route.methods or ():
                operation = document["paths"][route.path_format][method.lower()]
                content = operation["responses"][str(status)]["content"]["application/json"]
                content["examples"] = examples


_PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "RFC 9457 problem details.",
    "required": ["type", "title", "status", "detail", "code", "requestId"],
    "properties": {
        "type": {"type": "string", "description": "A relative link to `/problems/{code}`."},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "code": {"type": "string", "enum": sorted(PROBLEMS)},
        "requestId": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["field", "code", "message"],
                "properties": {
                    "field": {"type": "string", "examples": ["targets[1].text"]},
                    "code": {"type": "string"},
                    "message": {"type": "string"},
                },
            },
        },
        "reason": {
            "type": "string",
            "description": "Why a delivery cannot be replayed (`delivery_not_replayable`).",
        },
        "requiredScope": {"type": "string", "description": "With `insufficient_scope`."},
    },
}

_HEADERS: dict[str, Any] = {
    "X-Request-ID": {
        "description": "The request id (echoed or generated).",
        "schema": {"type": "string"},
    },
    "X-Service-API-Version": {"description": "Always `1`.", "schema": {"type": "string"}},
    "RateLimit-Limit": {"schema": {"type": "integer"}},
    "RateLimit-Remaining": {"schema": {"type": "integer"}},
    "RateLimit-Reset": {
        "description": "Seconds to the end of the window.",
        "schema": {"type": "integer"},
    },
    "RateLimit-Policy": {"description": "`<limit>;w=<seconds>`", "schema": {"type": "string"}},
}

_REQUEST_ID_PARAMETER: dict[str, Any] = {
    "name": "X-Request-ID",
    "in": "header",
    "required": False,
    "description": "Your own request id, echoed in the `X-Request-ID` response header and in "
    "error bodies when it is 1-128 characters of `A-Z a-z 0-9 . _ : -`; any other value is "
    "ignored (never rejected) and the server generates an id instead.",
    "schema": {"type": "string"},
}
_IDEMPOTENCY_PARAMETER: dict[str, Any] = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "1-255 visible ASCII characters (`!` to `~`: no spaces or control "
    "characters; anything else is a 400 naming `Idempotency-Key`). A repeat of the same "
    "request within "
    "24 hours returns the stored response with `Idempotent-Replayed: true` and has no second "
    "effect; the same key with a different request is 409 `idempotency_key_reused`; while the "
    "first is running, 409 `idempotency_key_in_progress` with `Retry-After`: the seconds (1-30) "
    "until the first request's claim lapses unless it renews it. A running request renews its "
    "claim every 10 seconds however long it runs; a request whose server died stops renewing, "
    "so a retry after `Retry-After` either gets the stored response, another 409 (still "
    "running), or runs as the first request (the abandoned claim is released at most 30 "
    "seconds after the server died).",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]{1,255}$"},
}
_JSON_BODY_415: dict[str, Any] = {
    "description": "The body's Content-Type is not JSON (`unsupported_media_type`).",
    "content": {"application/problem+json": {"schema": PROBLEM_REF}},
}

DESCRIPTION = """\
Pressroom: an organization-scoped publishing API for social media accounts.

A bearer API key (`Authorization: Bearer prk_...`) selects one organization. Errors are
RFC 9457 problem details (`application/problem+json`); validation failures are 400 and name
each field. Collections use keyset pagination (`pageSize` 1-100, default 25; opaque `cursor`;
`{"items": [...], "nextCursor": ...}`), newest first. Mutating operations that accept an
`Idempotency-Key` header store their outcome for 24 hours. Every response carries
`X-Request-ID`, `X-Service-API-Version` and the `RateLimit-*` headers.

Decisions where the specification is silent: an unknown route is a 404 `not_found` and a
wrong method a 405 `method_not_allowed`, both as problem+json; requests without a key to
documentation pages are counted per client address under the same policy as keys. A query
parameter an operation does not take is a 400 `validation_failed` naming it (code
`unknown_parameter`), like an unknown body field: a misspelt filter never silently widens a
read. The signed media links Pressroom hands to networks that fetch a post's media from a URL
(`GET`/`HEAD /media-links/{token}`: no key, expiring, 404 once expired or altered) are not
operations of this API and are not listed here.

Hostile or ambiguous input is refused, never guessed at: a query parameter given twice is a
400 naming it (code `repeated`) unless the operation documents it as repeatable; a NUL
character (U+0000) in any string of a body, query or path is a 400 naming the field (code
`invalid_character`); a body sent to a JSON operation with any Content-Type other than
`application/json` (or `application/*+json`), or with none, is a 415
`unsupported_media_type`; more than one `Authorization` header, or one carrying more than one
credential, is a 401; a path with a trailing slash (`/api/v1/posts/`) is an unknown route (404),
never a redirect. Integer fields accept integral numbers such as `60.0` (JSON Schema calls them
integers) but not strings or booleans. A field of a merge (PATCH) body whose schema has no
`null` may be left out but not sent as `null` (400 naming it, code `null`).
"""


# Declared so that documentation tools show each group with what it is, in this order.
TAGS: list[dict[str, str]] = [
    {"name": "Tenant", "description": "The organization, member and key behind a request."},
    {"name": "Providers", "description": "The networks and what each accepts."},
    {"name": "Channels", "description": "Connected network accounts, and connecting them."},
    {"name": "Media", "description": "Uploaded images and videos that posts attach."},
    {"name": "Posts", "description": "Posts to one or more channels: drafts, schedules, results."},
    {"name": "Analytics", "description": "Attributed performance of published posts."},
    {"name": "Webhooks", "description": "Endpoints that receive signed events, and deliveries."},
    {"name": "Events", "description": "The events Pressroom sends to webhook endpoints."},
]
# Relative: the document is served by the API it describes, at whatever address it is reached.
SERVERS: list[dict[str, str]] = [{"url": "/", "description": "The server serving this document."}]


def install_openapi(
    app: FastAPI, events: tuple[dict[str, Any], dict[str, Any]] | None = None
) -> None:
    """`events`: the `webhooks` section and the component schemas it refers to."""

    def build() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        document = get_openapi(
            title="Pressroom API",
            version="1.0.0",
            openapi_version="3.1.0",
            description=DESCRIPTION,
            routes=app.routes,
            license_info={"name": "Apache-2.0", "identifier": "Apache-2.0"},
            tags=TAGS,
            servers=SERVERS,
        )
        _add_answer_examples(app, document)
        components = document.setdefault("components", {})
        schemas = components.setdefault("schemas", {})
        schemas["Problem"] = _PROBLEM_SCHEMA
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        components.setdefault("headers", {}).update(_HEADERS)
        if events is not None:
            document["webhooks"], event_schemas = events
            schemas.update(event_schemas)
        components.setdefault("securitySchemes", {})["apiKey"] = {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key: `Authorization: Bearer prk_...`. The key selects "
            "the organization; each operation requires the scope named in its description.",
        }
        header_refs = {name: {"$ref": f"#/components/headers/{name}"} for name in _HEADERS}
        for path, path_item in document.get("paths", {}).items():
            for operation in path_item.values():
                if path.startswith("/api/v1"):
                    operation["security"] = [{"apiKey": []}]
                parameters = operation.setdefault("parameters", [])
                parameters.append(_REQUEST_ID_PARAMETER)
                if operation.get("operationId") in IDEMPOTENT_OPERATIONS:
                    parameters.append(_IDEMPOTENCY_PARAMETER)
                responses = operation.get("responses", {})
                body_types = operation.get("requestBody", {}).get("content", {})
                if "application/json" in body_types:
                    responses.setdefault("415", dict(_JSON_BODY_415))
                # Validation is 400 here, never FastAPI's default 422 (uploads declare
                # their own 422 for undecodable media).
                if operation.get("operationId") != "uploadMedia":
                    responses.pop("422", None)
                for response in responses.values():
                    response.setdefault("headers", {}).update(header_refs)
        app.openapi_schema = document
        return document

    app.openapi = build  # type: ignore[method-assign]
