"""Tools generated from the OpenAPI document: each tool is one operation, with the operation's
own summary and description and an input schema made of its parameters and request body, so
the tools never drift from the API."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

# The operations offered, by operationId: reads act at once; writes take two calls.
READS = (
    "getTenant",
    "listProviders",
    "getProvider",
    "listChannels",
    "getChannel",
    "listPosts",
    "getPost",
    "getAnalytics",
    "listMedia",
    "getMedia",
    "listWebhookEndpoints",
    "getWebhookEndpoint",
    "listWebhookDeliveries",
    "getWebhookDelivery",
)
WRITES = ("createPost", "updatePost", "deletePost", "replayWebhookDelivery")
# Preflight creates nothing: a read, offered under its own operationId once the API has it.
PREFLIGHT = ("post", "/api/v1/posts/preflight")
# What a write's preview shows as the object's state before the change.
CURRENT_STATE = {
    "updatePost": "getPost",
    "deletePost": "getPost",
    "replayWebhookDelivery": "getWebhookDelivery",
}
# Headers are the server's business (request ids, idempotency, caching), not the agent's.
_SKIPPED_IN = ("header", "cookie")
CONFIRMATION = "confirmationToken"
_REF = re.compile(r"^#/components/schemas/(.+)$")


@dataclass(frozen=True)
class Operation:
    name: str
    method: str
    path: str
    description: str
    input_schema: dict[str, Any]
    path_params: tuple[str, ...] = ()
    query_params: tuple[str, ...] = ()
    has_body: bool = False
    write: bool = False


def operations(document: dict[str, Any]) -> dict[str, Operation]:
    """Every offered operation the document has, by operationId."""
    found: dict[str, Operation] = {}
    preflight = document.get("paths", {}).get(PREFLIGHT[1], {}).get(PREFLIGHT[0], {})
    wanted = {*READS, *WRITES, preflight.get("operationId")} - {None}
    for path, item in document.get("paths", {}).items():
        for method, spec in item.items():
            if not isinstance(spec, dict) or spec.get("operationId") not in wanted:
                continue
            name = str(spec["operationId"])
            found[name] = _operation(document, name, method, path, spec)
    return found


def _operation(
    document: dict[str, Any], name: str, method: str, path: str, spec: dict[str, Any]
) -> Operation:
    properties: dict[str, Any] = {}
    required: list[str] = []
    path_params: list[str] = []
    query_params: list[str] = []
    for parameter in spec.get("parameters", []):
        where = parameter.get("in")
        if where in _SKIPPED_IN or "name" not in parameter:
            continue
        schema = dict(parameter.get("schema", {}))
        if parameter.get("description"):
            schema["description"] = parameter["description"]
        properties[parameter["name"]] = schema
        (path_params if where == "path" else query_params).append(parameter["name"])
        if parameter.get("required"):
            required.append(parameter["name"])
    body = spec.get("requestBody", {}).get("content", {}).get("application/json")
    if body is not None:
        properties["body"] = {**body.get("schema", {}), "description": "The request body."}
        if spec["requestBody"].get("required"):
            required.append("body")
    write = name in WRITES
    if write:
        properties[CONFIRMATION] = {
            "type": "string",
            "description": "Leave out to get a preview and a token; send the token back, with "
            "the same arguments, to act.",
        }
    tool_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        tool_schema["required"] = required
    return Operation(
        name=name,
        method=method.upper(),
        path=path,
        description=describe(spec, write=write),
        input_schema=with_definitions(document, tool_schema),
        path_params=tuple(path_params),
        query_params=tuple(query_params),
        has_body=body is not None,
        write=write,
    )


def describe(spec: dict[str, Any], *, write: bool) -> str:
    text = "\n\n".join(p for p in (spec.get("summary"), spec.get("description")) if p)
    if write:
        text += (
            "\n\nA write in two steps: called without `confirmationToken` it changes nothing "
            "and answers a preview with a token; called again with the same arguments and that "
            "token it acts, once, however often that second call is retried."
        )
    return text


def with_definitions(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every component it refers to (transitively) under `$defs`."""
    components = document.get("components", {}).get("schemas", {})
    result: dict[str, Any] = _rewrite(copy.deepcopy(schema))
    definitions: dict[str, Any] = {}
    pending = _references(result)
    while pending:
        name = pending.pop()
        if name in definitions or name not in components:
            continue
        definitions[name] = _rewrite(copy.deepcopy(components[name]))
        pending |= _references(definitions[name])
    if definitions:
        result["$defs"] = definitions
    return result


def _rewrite(node: Any) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and (match := _REF.match(ref)):
            node["$ref"] = f"#/$defs/{match.group(1)}"
        for value in node.values():
            _rewrite(value)
    elif isinstance(node, list):
        for value in node:
            _rewrite(value)
    return node


def _references(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found.add(ref.removeprefix("#/$defs/"))
        for value in node.values():
            found |= _references(value)
    elif isinstance(node, list):
        for value in node:
            found |= _references(value)
    return found
