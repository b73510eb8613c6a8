"""Request input checks shared by every operation, before any field is read: the body's
Content-Type, the query's parameter names and repetitions, and NUL characters anywhere.

PostgreSQL cannot store U+0000 in text (nor in JSONB), and no field of the API has a use for
it, so it is refused at the boundary, on both databases alike, naming the field."""

from __future__ import annotations

import json
from types import UnionType
from typing import Any
from typing import Union
from typing import get_args
from typing import get_origin

from fastapi.dependencies.models import Dependant
from fastapi.params import Form
from starlette.requests import Request

from pressroom.kit.errors import FieldError
from pressroom.kit.errors import PressroomError
from pressroom.kit.errors import field_error
from pressroom.kit.errors import validation_error
from pressroom.kit.schema import NUL
from pressroom.kit.schema import NUL_MESSAGE
from pressroom.kit.schema import nul_places

# Enough to fix a request; a body of a million NUL strings does not get a million errors.
MAX_REPORTED = 20

# Query parameters documented as repeatable although their schema is a string: getAnalytics'
# comma-separated filters, where `tagValues=a&tagValues=b` means `tagValues=a,b`.
REPEATABLE_QUERY: dict[str, frozenset[str]] = {
    "getAnalytics": frozenset({"channelIds", "tagValues", "contentKinds", "metrics"}),
}


def is_json_media_type(content_type: str | None) -> bool:
    """`application/json` or a `+json` type such as `application/merge-patch+json`."""
    if not content_type:
        return False
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


def takes_form(dependant: Dependant) -> bool:
    return any(isinstance(param.field_info, Form) for param in dependant.body_params)


async def require_json_body(request: Request) -> None:
    """A body sent to a JSON operation must say it is JSON: a form or text body is a 415, not
    a 400 about its shape. No body at all is left to the body's own validation."""
    if not (await request.body()).strip():
        return
    given = request.headers.get("content-type")
    if is_json_media_type(given):
        return
    raise PressroomError(
        "unsupported_media_type",
        detail=(
            f"This operation takes a JSON body; Content-Type {given!r} is not accepted. "
            if given
            else "This operation takes a JSON body, and the request has no Content-Type. "
        )
        + "Send `Content-Type: application/json`.",
    )


def repeatable_query(dependant: Dependant, operation_id: str) -> frozenset[str]:
    """The query parameters an operation documents as repeatable: those of a list type, and
    those REPEATABLE_QUERY names."""
    names = set(REPEATABLE_QUERY.get(operation_id, ()))
    stack = [dependant]
    while stack:
        current = stack.pop()
        stack.extend(current.dependencies)
        for param in current.query_params:
            if _is_sequence(param.field_info.annotation):
                names.add(param.alias)
    return frozenset(names)


def _is_sequence(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        return any(_is_sequence(arg) for arg in get_args(annotation))
    return origin in (list, set, tuple, frozenset)


def check_query(request: Request, known: frozenset[str], repeatable: frozenset[str]) -> None:
    """A parameter the operation does not take, one given twice that is not documented as
    repeatable, or one holding a NUL character: a 400 naming it.

    An unknown parameter is refused like an unknown body field, so that a misspelt filter
    (`page_size`, `channelID`) never silently returns everything; a repeated one because the
    server would otherwise have to pick one of the values (`pageSize=1&pageSize=100`)."""
    if not request.scope.get("query_string") and not request.path_params:
        # Nothing to check (most requests): no query string is parsed.
        return
    params = request.query_params
    unknown = sorted({name for name in params if name not in known})
    if unknown:
        raise field_error(
            unknown[0] or "query",
            "unknown_parameter",
            f"this operation takes no query parameter {unknown[0]!r}"
            + (f" (allowed: {', '.join(sorted(known))})" if known else ""),
        )
    errors: list[FieldError] = []
    for name in sorted(set(params)):
        values = params.getlist(name)
        if len(values) > 1 and name not in repeatable:
            errors.append(FieldError(name, "repeated", "is given more than once"))
        if any(NUL in value for value in values):
            errors.append(FieldError(name, "invalid_character", NUL_MESSAGE))
    for name, value in request.path_params.items():
        if isinstance(value, str) and NUL in value:
            errors.append(FieldError(name, "invalid_character", NUL_MESSAGE))
    if errors:
        raise validation_error(errors[:MAX_REPORTED])


def check_body_characters(body: bytes) -> None:
    """A JSON body with a NUL character in any string or object key: a 400 naming each
    place (`targets[1].text`, `tags[0]`), whatever the field."""
    # JSON can carry U+0000 only as the escape \u0000 (a raw control character is not valid
    # JSON): bodies without that text, nearly all of them, are not parsed a second time.
    if b"\\u0000" not in body:
        return
    try:
        parsed = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return  # the body's own validation names the JSON error
    errors = [
        FieldError(place or "body", "invalid_character", NUL_MESSAGE)
        for _, place in zip(range(MAX_REPORTED), nul_places(parsed), strict=False)
    ]
    if errors:
        raise validation_error(errors)
