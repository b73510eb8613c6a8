"""Rendering errors as RFC 9457 problem+json, the problems every operation declares in the
OpenAPI document, and the /problems/{code} pages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from pressroom.kit.errors import PROBLEMS
from pressroom.kit.errors import FieldError
from pressroom.kit.errors import PressroomError
from pressroom.kit.errors import validation_error

PROBLEM_JSON = "application/problem+json"
PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}

_DESCRIPTIONS = {
    400: "Validation failed: `errors[]` names each field and the reason.",
    401: "Missing, malformed, unknown, revoked or expired API key.",
    403: "The key lacks the scope (`insufficient_scope`) or the member the role "
    "(`insufficient_role`).",
    404: "No such object in this organization (other organizations' objects look the same).",
    409: "Conflict with the current state or with an earlier use of the Idempotency-Key.",
    413: "A file or the request is over the size limit.",
    415: "The file's bytes are not an accepted media type.",
    422: "The file cannot be decoded.",
    429: "Rate limited; wait `Retry-After` seconds.",
    500: "Internal error; nothing was written. Quote the requestId.",
}


def error_responses(*extra: int) -> dict[int | str, dict[str, Any]]:
    """The error statuses every operation declares, plus `extra` ones."""
    statuses = [400, 401, 403, 404, 409, 429, 500, *extra]
    return {
        status: {
            "description": _DESCRIPTIONS[status],
            "content": {PROBLEM_JSON: {"schema": PROBLEM_REF}},
        }
        for status in sorted(statuses)
    }


def problem_response(error: PressroomError, request_id: str) -> Response:
    headers = dict(error.headers)
    if error.code == "unauthenticated":
        headers.setdefault("WWW-Authenticate", 'Bearer realm="pressroom"')
    return Response(
        content=json.dumps(error.body(request_id), ensure_ascii=False, separators=(",", ":")),
        status_code=error.status,
        media_type=PROBLEM_JSON,
        headers=headers,
    )


def field_name(loc: Sequence[int | str]) -> str:
    """A validation location as the client wrote it: ("body", "targets", 1, "text") ->
    `targets[1].text`; query, path and header parameters by their own name."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header", "cookie"):
        parts = parts[1:]
    name = ""
    for part in parts:
        if isinstance(part, int):
            name += f"[{part}]"
        elif part.startswith(("function-", "tagged-union")):
            continue
        else:
            name += ("." if name else "") + part
    return name or "body"


_MESSAGES = {
    "missing": "is required",
    "extra_forbidden": "is not a known field",
    "json_invalid": "is not valid JSON",
}


def _field_error(err: dict[str, Any]) -> FieldError:
    kind = str(err.get("type", "invalid"))
    loc = err.get("loc", ())
    if kind == "json_invalid":
        ctx = err.get("ctx", {}) or {}
        return FieldError("body", "invalid_json", f"is not valid JSON: {ctx.get('error', '')}")
    message = _MESSAGES.get(kind) or str(err.get("msg", "is invalid"))
    # Pydantic prefixes custom messages with "Value error, "; the field name says enough.
    message = message.removeprefix("Value error, ")
    code = {"missing": "required", "extra_forbidden": "unknown_field"}.get(kind, kind)
    return FieldError(field_name(loc), code, message)


def from_validation(exc: RequestValidationError) -> PressroomError:
    errors = [_field_error(dict(e)) for e in exc.errors()]
    # A missing body is reported by FastAPI as the body itself missing.
    return validation_error(errors or [FieldError("body", "invalid", "is invalid")])


def from_http_exception(exc: HTTPException) -> PressroomError:
    if exc.status_code == 404:
        return PressroomError("not_found", detail="No such route or resource.")
    if exc.status_code == 405:
        return PressroomError(
            "method_not_allowed",
            detail="This path does not accept this method.",
            headers=dict(exc.headers or {}),
        )
    if exc.status_code == 400:
        return PressroomError("validation_failed", detail=str(exc.detail))
    return PressroomError("internal_error")


def as_problem(exc: BaseException) -> PressroomError | None:
    """The problem for a known error, or None for an unexpected one (a 500)."""
    if isinstance(exc, PressroomError):
        return exc
    if isinstance(exc, RequestValidationError):
        return from_validation(exc)
    if isinstance(exc, HTTPException):
        return from_http_exception(exc)
    return None


def problem_page(code: str) -> dict[str, Any] | None:
    if code not in PROBLEMS:
        return None
    status, title, explanation = PROBLEMS[code]
    return {
        "type": f"/problems/{code}",
        "code": code,
        "status": status,
        "title": title,
        "explanation": explanation,
    }
