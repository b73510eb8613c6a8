"""Base Pydantic models: camelCase on the wire, unknown input fields rejected."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from typing import Annotated
from typing import Any
from typing import TypeVar

from pydantic import AfterValidator
from pydantic import BaseModel
from pydantic import BeforeValidator
from pydantic import ConfigDict
from pydantic import GetJsonSchemaHandler
from pydantic import PlainSerializer
from pydantic import StrictInt
from pydantic import WithJsonSchema
from pydantic import field_validator
from pydantic.alias_generators import to_camel
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError
from pydantic_core import core_schema

T = TypeVar("T")


class APIModel(BaseModel):
    """A response body: camelCase field names."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, from_attributes=True)


def _allows_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_allows_null(branch) for branch in schema.get("anyOf", ()))


def _drop_null_defaults(schema: dict[str, Any]) -> None:
    """A property that may be left out but not be null (`NotNull`) has no default to show:
    `"default": null` would contradict its type."""
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None and not _allows_null(prop):
            del prop["default"]


NUL = "\x00"
NUL_MESSAGE = "must not contain NUL characters (U+0000)"


def nul_places(value: object, place: str = "") -> Iterator[str]:
    """Where a JSON-like value holds a NUL character (in a string or an object key), as field
    names the way a client writes them (`targets[1].text`); an object whose key holds one is
    named itself. Iterative, so deeply nested input cannot exhaust the stack."""
    stack: list[tuple[object, str]] = [(value, place)]
    while stack:
        current, where = stack.pop()
        if isinstance(current, str):
            if NUL in current:
                yield where
        elif isinstance(current, dict):
            children = []
            for key, item in current.items():
                if NUL in str(key):
                    yield where
                else:
                    children.append((item, f"{where}.{key}" if where else str(key)))
            stack.extend(reversed(children))
        elif isinstance(current, list | tuple):
            stack.extend((current[i], f"{where}[{i}]") for i in reversed(range(len(current))))


class APIInput(BaseModel):
    """A request body: camelCase field names; an unknown field is a 400, never ignored; no
    string may hold a NUL character (PostgreSQL cannot store one; no field has a use for it)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        str_strip_whitespace=False,
        json_schema_extra=_drop_null_defaults,
    )

    @field_validator("*", mode="before")
    @classmethod
    def _refuse_nul(cls, value: object) -> object:
        # The HTTP boundary names the exact place (`tags[1]`) before this runs; this keeps
        # every other reader of these models (the importer, the command line) just as safe.
        if next(nul_places(value), None) is not None:
            raise PydanticCustomError("invalid_character", NUL_MESSAGE)
        return value


def _refuse_null(value: object) -> object:
    if value is None:
        raise PydanticCustomError("null", "must not be null")
    return value


class _NotNullSchema:
    """Shows `T | None` as plain `T` in the document: null is refused, only absence is
    allowed (Python keeps None for "absent")."""

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        value = handler(schema)
        branches = [b for b in value.get("anyOf", ()) if b.get("type") != "null"]
        if "anyOf" in value and len(branches) == 1:
            rest = {key: item for key, item in value.items() if key != "anyOf"}
            return {**branches[0], **rest}
        return value


# A merge (PATCH) field that may be left out but never sent as null: `null` is a 400 naming
# it, and the document's schema has no null branch.
NotNull = Annotated[T | None, BeforeValidator(_refuse_null), _NotNullSchema()]


def _integral_number(value: object) -> object:
    # JSON Schema calls 60.0 an integer; JSON true is not one (Python's bool is an int).
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# An integer body field: a JSON integer or an integral number (60.0); never a string or a bool.
JSONInt = Annotated[StrictInt, BeforeValidator(_integral_number)]


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
    try:
        return value.astimezone(UTC)
    except OverflowError:
        # 9999-12-31T20:00:00-14:00 is a valid text whose UTC instant is in the year 10000.
        raise PydanticCustomError("out_of_range", "is outside the years 1-9999 in UTC") from None


# An input time: offset required (naive is a 400), normalized to UTC.
AwareDatetime = Annotated[
    datetime, BeforeValidator(_require_rfc3339_text), AfterValidator(_require_offset)
]

# An output time: always UTC with `Z`. The serializer returns text, so the document would say
# only `string`: it says `date-time` so that clients parse it as a time.
UTCDatetime = Annotated[
    datetime,
    PlainSerializer(format_utc, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
