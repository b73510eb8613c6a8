"""Base Pydantic models: camelCase on the wire, unknown input fields rejected."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, PlainSerializer
from pydantic.alias_generators import to_camel


class APIModel(BaseModel):
    """A response body: camelCase field names."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, from_attributes=True)


class APIInput(BaseModel):
    """A request body: camelCase field names; an unknown field is a 400, never ignored."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", str_strip_whitespace=False
    )


def as_utc(value: datetime) -> datetime:
    """Make a stored time UTC-aware (SQLite returns naive values)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def format_utc(value: datetime) -> str:
    """RFC 3339 in UTC with a `Z`, millisecond precision."""
    return as_utc(value).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$"
)


def _require_rfc3339_text(value: object) -> object:
    """Pydantic would read a number (or a string of digits) as a Unix timestamp; the API
    accepts only RFC 3339 text for times."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not _RFC3339.match(value.strip()):
        raise ValueError("must be an RFC 3339 date-time such as 2026-12-01T09:00:00Z")
    return value


def _require_offset(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("must be an RFC 3339 date-time with an offset (for example Z or +02:00)")
    return value.astimezone(UTC)


# An input time: offset required (naive is a 400), normalized to UTC.
AwareDatetime = Annotated[
    datetime, BeforeValidator(_require_rfc3339_text), AfterValidator(_require_offset)
]

# An output time: always UTC with `Z`.
UTCDatetime = Annotated[datetime, PlainSerializer(format_utc, return_type=str, when_used="json")]
