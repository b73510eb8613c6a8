"""The one error type of the service, rendered once as RFC 9457 problem+json."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import TypeVar

# Each code's status, title and the explanation served at /problems/{code}.
PROBLEMS: dict[str, tuple[int, str, str]] = {
    "validation_failed": (
        400,
        "Validation failed",
        "The request was malformed: bad JSON, a missing or mistyped field, an unknown field, "
        "a value out of range, or a tampered cursor. `errors[]` names each field and the reason. "
        "Fix the request; repeating it unchanged will fail again.",
    ),
    "unauthenticated": (
        401,
        "Authentication required",
        "The Authorization header is missing, malformed, or carries a key that is unknown, "
        "revoked or expired. Send `Authorization: Bearer prk_...` with a live key.",
    ),
    "insufficient_scope": (
        403,
        "Insufficient scope",
        "The API key is valid but lacks the scope this operation requires. The `requiredScope` "
        "member names it; issue a key that carries it.",
    ),
    "insufficient_role": (
        403,
        "Insufficient role",
        "The operation needs an organization owner or admin (webhook lifecycle operations and "
        "approval decisions). The key belongs to a member with a lesser role.",
    ),
    "not_found": (
        404,
        "Not found",
        "No such resource exists in the organization of this API key. Objects of other "
        "organizations answer exactly like nonexistent ones.",
    ),
    "method_not_allowed": (
        405,
        "Method not allowed",
        "The path exists but does not accept this HTTP method. The `Allow` header lists the "
        "methods it accepts.",
    ),
    "idempotency_key_reused": (
        409,
        "Idempotency key reused",
        "This Idempotency-Key was already used for a different request (another operation, path "
        "or body). Use a fresh key for a new request.",
    ),
    "idempotency_key_in_progress": (
        409,
        "Idempotency key in progress",
        "A request with this Idempotency-Key is still being processed. Retry after the "
        "`Retry-After` seconds to receive its stored response; if the server handling it died, "
        "its claim lapses within 30 seconds and the retry runs instead.",
    ),
    "post_not_editable": (
        409,
        "Post not editable",
        "The change would alter or remove a target that is publishing or already published. "
        "Published copies cannot be edited through this API.",
    ),
    "endpoint_disabled": (
        409,
        "Endpoint disabled",
        "The webhook endpoint is disabled. Enable it with PATCH before sending tests.",
    ),
    "delivery_not_replayable": (
        409,
        "Delivery not replayable",
        "Only an exhausted, unexpired delivery of an enabled endpoint can be replayed. The "
        "`reason` member says why this one cannot: endpoint_disabled, expired, succeeded, "
        "pending or processing.",
    ),
    "replay_in_progress": (
        409,
        "Replay in progress",
        "A replay of this delivery is already queued or running. Wait for its attempt to finish.",
    ),
    "conflict": (
        409,
        "Conflict",
        "The request conflicts with the current state of the resource.",
    ),
    "payload_too_large": (
        413,
        "Payload too large",
        "A file or the whole request exceeds the configured size limit. `detail` names the file "
        "and the limit.",
    ),
    "unsupported_media_type": (
        415,
        "Unsupported media type",
        "On uploadMedia: the file's bytes are not one of the accepted formats (JPEG, PNG, WebP, "
        "GIF, MP4, QuickTime, WebM), or the request is not multipart/form-data; the declared type "
        "is never trusted. On a JSON operation: the body's Content-Type is not JSON (a form, "
        "text, or none at all); send it with `Content-Type: application/json` (another "
        "`application/*+json` type is accepted too).",
    ),
    "range_not_satisfiable": (
        416,
        "Range not satisfiable",
        "The `Range` header asks for bytes past the end of the file (a signed media link). "
        "`Content-Range: bytes */<size>` gives the file's size.",
    ),
    "unprocessable_media": (
        422,
        "Unprocessable media",
        "The file has an accepted type but cannot be decoded: it is empty, truncated, corrupt, "
        "a decompression bomb, or a video without a video stream.",
    ),
    "rate_limited": (
        429,
        "Rate limited",
        "Too many requests in the current window. Wait for the number of seconds in "
        "`Retry-After`; the RateLimit-* headers describe the policy.",
    ),
    "internal_error": (
        500,
        "Internal error",
        "The server failed to process the request. Nothing was half-written: the transaction was "
        "rolled back. Quote `requestId` when reporting it.",
    ),
}


@dataclass(frozen=True)
class FieldError:
    """One invalid field: a JSON-path-like name (`targets[1].text`), a code and a message."""

    field: str
    code: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "code": self.code, "message": self.message}


@dataclass
class PressroomError(Exception):
    """Raised anywhere; rendered as problem+json by the application's error handler."""

    code: str
    detail: str | None = None
    errors: list[FieldError] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    status: int = 0

    def __post_init__(self) -> None:
        if self.code not in PROBLEMS:
            raise ValueError(f"unknown problem code {self.code!r}")
        if not self.status:
            self.status = PROBLEMS[self.code][0]
        super().__init__(self.code)

    @property
    def title(self) -> str:
        return PROBLEMS[self.code][1]

    def body(self, request_id: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": f"/problems/{self.code}",
            "title": self.title,
            "status": self.status,
            "detail": self.detail or self.title,
            "code": self.code,
            "requestId": request_id,
        }
        if self.errors:
            body["errors"] = [e.as_dict() for e in self.errors]
        body.update(self.extra)
        return body


def validation_error(errors: list[FieldError], detail: str | None = None) -> PressroomError:
    """A 400 naming every invalid field; the detail defaults to the first field's message."""
    if detail is None and errors:
        first = errors[0]
        detail = f"{first.field}: {first.message}"
        if len(errors) > 1:
            detail += f" (and {len(errors) - 1} more)"
    return PressroomError("validation_failed", detail=detail, errors=errors)


def field_error(field_name: str, code: str, message: str) -> PressroomError:
    """A 400 for a single invalid field."""
    return validation_error([FieldError(field_name, code, message)])


def not_found(what: str = "resource") -> PressroomError:
    return PressroomError("not_found", detail=f"No such {what} in this organization.")


_Found = TypeVar("_Found")


def found(value: _Found | None, what: str) -> _Found:
    """`value`, or the 404 of a `what` that is not there (or is another organization's, which
    looks the same)."""
    if value is None:
        raise not_found(what)
    return value
