"""Answers built as plain JSON documents.

An operation whose answer is assembled as a document (a dict in the wire form) returns it
through `document_response`: serialized once by pydantic-core's encoder, without validating
it against the operation's response model a second time. The model still documents the
answer in the OpenAPI document, and the contract tests check the answers against it."""

from __future__ import annotations

from typing import Any

from pydantic_core import to_json
from starlette.responses import Response


class DocumentResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return to_json(content)


def document_response(
    document: Any, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return DocumentResponse(document, status_code=status_code, headers=headers)


def page_response(items: list[str], next_cursor: str | None) -> Response:
    """A page of a collection (`{"items": [...], "nextCursor": ...}`) whose items are JSON
    text already (written by the database): joined, not parsed and encoded again."""
    body = b'{"items":[' + ",".join(items).encode() + b'],"nextCursor":'
    return Response(body + to_json(next_cursor) + b"}", media_type="application/json")
