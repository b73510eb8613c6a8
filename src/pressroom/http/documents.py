"""Answers built as plain JSON documents.

An operation whose answer is assembled as a document (a dict in the wire form) returns it
through `document_response`: serialized once by pydantic-core's encoder, without validating
it against the operation's response model a second time. The model still documents the
answer in the OpenAPI document, and the contract tests check the answers against it."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Hashable
from typing import Any

from pydantic_core import to_json
from starlette.responses import Response

from pressroom.runtime import Runtime


class DocumentResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return to_json(content)


def document_response(
    document: Any, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return DocumentResponse(document, status_code=status_code, headers=headers)


def page_body(items: list[str], next_cursor: str | None) -> bytes:
    """A page of a collection (`{"items": [...], "nextCursor": ...}`) whose items are JSON
    text already (written by the database): joined, not parsed and encoded again."""
    body = b'{"items":[' + ",".join(items).encode() + b'],"nextCursor":'
    return body + to_json(next_cursor) + b"}"


async def kept_answer(
    runtime: Runtime, key: Hashable, read: Callable[[], Awaitable[bytes]]
) -> Response:
    """The JSON answer that `read()` builds from the database alone (and `key`, which names
    everything else it depends on). On a SQLite file it is kept, and answered again, while
    the file has not changed: `runtime.answers` (kit/data_version.py)."""
    versions = runtime.data_version
    before = versions.read() if versions is not None else None
    if before is None:
        return Response(await read(), media_type="application/json")
    body = runtime.answers.get(before, key)
    if body is None:
        body = await read()
        runtime.answers.put(before, key, body)
    return Response(body, media_type="application/json")
