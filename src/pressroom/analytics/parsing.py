"""The values of getAnalytics' query checked one by one: RFC 3339 times and ranges, zone
names, comma-separated lists. Each problem is added to a `FieldErrors` as a field error
naming the parameter as the client wrote it, so that all of them are reported together."""

from __future__ import annotations

import re
import uuid
from collections.abc import Collection
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from functools import lru_cache
from typing import Final
from zoneinfo import ZoneInfo
from zoneinfo import available_timezones

from pressroom.analytics.comparison import CUSTOM
from pressroom.analytics.comparison import MAX_RANGE
from pressroom.analytics.comparison import TimeRange
from pressroom.analytics.metrics import METRICS
from pressroom.kit.errors import FieldError
from pressroom.providers.declarations import DECLARATIONS

# Values per comma-separated filter.
MAX_LIST_VALUES: Final = 100

CONTENT_KINDS: Final = frozenset(
    kind.kind for declaration in DECLARATIONS.values() for kind in declaration.content_kinds
)

# A UUID in its hyphenated form: the only one channelIds takes (no braces, no URN).
UUID_TEXT: Final = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$")
_UUID = re.compile(f"^{UUID_TEXT}$")
_SPACE_FOR_PLUS = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})? \d{2}:\d{2}$")


class FieldErrors:
    """The problems found so far, in the order found."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def add(self, name: str, code: str, message: str) -> None:
        self.errors.append(FieldError(name, code, message))


# In the zone data but not IANA zones an integrator means: the server's own local time (which
# differs between nodes) and tzdata's placeholder.
_NOT_ZONES = frozenset({"localtime", "Factory"})


@lru_cache(maxsize=1)
def _zone_names() -> frozenset[str]:
    return frozenset(available_timezones()) - _NOT_ZONES


def zone(name: str, errors: FieldErrors) -> ZoneInfo | None:
    """The IANA zone of that exact name (no file paths, no abbreviations, no offsets)."""
    if name not in _zone_names():
        errors.add(
            "timezone", "unknown_timezone", "is not an IANA timezone name such as Europe/Berlin"
        )
        return None
    return ZoneInfo(name)


def parse_time(value: str) -> datetime | str:
    """An RFC 3339 date-time with an offset, or the reason it is not one."""
    if _SPACE_FOR_PLUS.match(value):
        return (
            "has a space where its offset's `+` should be: encode `+` as %2B in a query "
            "string (2026-03-01T00:00:00%2B01:00), or use Z"
        )
    if not _RFC3339.match(value):
        return (
            "must be an RFC 3339 date-time with an offset, such as 2026-03-01T00:00:00Z "
            "(naive times are ambiguous and rejected)"
        )
    # Python takes at most six fractional digits; finer ones cannot matter here.
    text = re.sub(r"(\.\d{6})\d+", r"\1", value).upper().replace("Z", "+00:00")
    leap = text[17:19] == "60"
    if leap:
        # RFC 3339 allows a leap second (23:59:60); it is taken as the end of that minute.
        text = text[:17] + "59" + text[19:]
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return "is not a valid date-time (check the month, day and time fields)"
    return moment.replace(microsecond=999999) if leap else moment


def time_range(
    start_raw: str | None,
    end_raw: str | None,
    start_name: str,
    end_name: str,
    errors: FieldErrors,
) -> TimeRange | None:
    """The inclusive range of two parameters, at most MAX_RANGE long."""
    parsed: dict[str, datetime] = {}
    for name, raw, other, other_raw in (
        (start_name, start_raw, end_name, end_raw),
        (end_name, end_raw, start_name, start_raw),
    ):
        if raw is None:
            if other_raw is not None and name.startswith("comparison"):
                # Both or neither: the one given is named first, then the one missing.
                errors.add(other, "requires", f"requires {name}")
                errors.add(name, "required", f"is required with {other}")
            else:
                errors.add(name, "required", "is required")
            continue
        value = parse_time(raw)
        if isinstance(value, str):
            errors.add(name, "invalid_datetime", value)
        else:
            parsed[name] = value
    if len(parsed) != 2:
        return None
    start, end = parsed[start_name], parsed[end_name]
    # A rule between two parameters names both, the first-named one first.
    if start > end:
        errors.add(start_name, "after_end", f"is after {end_name}")
        errors.add(end_name, "before_start", f"is before {start_name}")
        return None
    if end - start > MAX_RANGE:
        errors.add(start_name, "range_too_long", f"is more than 366 days before {end_name}")
        errors.add(end_name, "range_too_long", f"is more than 366 days after {start_name}")
        return None
    try:
        return TimeRange(start.astimezone(UTC), end.astimezone(UTC))
    except OverflowError:
        errors.add(start_name, "out_of_range", "is outside the years 1-9999 in UTC")
        return None


def custom_range(
    preset: str, start: str | None, end: str | None, errors: FieldErrors
) -> TimeRange | None:
    """The comparison range given as comparisonStart/comparisonEnd, which overrides the
    preset; None when neither is given."""
    if start is not None or end is not None:
        return time_range(start, end, "comparisonStart", "comparisonEnd", errors)
    if preset == CUSTOM:
        errors.add("comparisonStart", "required", "is required with comparison=custom")
    return None


def _split(raw: Sequence[str], name: str, errors: FieldErrors) -> tuple[str, ...]:
    """Comma-separated values, repeated parameters merged, duplicates dropped; none when the
    parameter is absent or invalid."""
    values: list[str] = []
    for chunk in raw:
        for item in chunk.split(","):
            item = item.strip()
            if not item:
                errors.add(
                    name,
                    "empty_value",
                    "has an empty value; separate values with single commas, or omit "
                    "the parameter for no filter",
                )
                return ()
            if item not in values:
                values.append(item)
    if len(values) > MAX_LIST_VALUES:
        errors.add(name, "too_many_values", f"takes at most {MAX_LIST_VALUES} values")
        return ()
    return tuple(values)


def channel_ids(raw: Sequence[str], errors: FieldErrors) -> tuple[uuid.UUID, ...]:
    ids: list[uuid.UUID] = []
    for index, value in enumerate(_split(raw, "channelIds", errors)):
        if not _UUID.match(value):
            errors.add(
                "channelIds",
                "invalid_uuid",
                f"value {index + 1} ({value[:64]!r}) is not a UUID",
            )
            continue
        parsed = uuid.UUID(value)
        if parsed not in ids:
            ids.append(parsed)
    return tuple(ids)


def tag_values(raw: Sequence[str], errors: FieldErrors) -> tuple[str, ...]:
    # A value no tag can have (longer than a tag may be) simply matches no post.
    values = _split(raw, "tagValues", errors)
    if any("\x00" in value for value in values):
        errors.add("tagValues", "invalid_character", "must not contain NUL characters")
    return values


def content_kinds(raw: Sequence[str], errors: FieldErrors) -> tuple[str, ...]:
    return _known_values(
        raw,
        "contentKinds",
        CONTENT_KINDS,
        errors,
        "unknown_content_kind",
        f"is not a content kind of any provider ({', '.join(sorted(CONTENT_KINDS))})",
    )


def metric_keys(raw: Sequence[str], errors: FieldErrors) -> tuple[str, ...]:
    """The metrics asked for in canonical order; all of them when none is named."""
    values = _known_values(
        raw, "metrics", METRICS, errors, "unknown_metric", f"is not a metric: {', '.join(METRICS)}"
    )
    return tuple(key for key in METRICS if key in values) if values else METRICS


def _known_values(
    raw: Sequence[str],
    name: str,
    known: Collection[str],
    errors: FieldErrors,
    code: str,
    reason: str,
) -> tuple[str, ...]:
    """The values of the list parameter `name` (as `_split` reads them), with one error per
    value not in `known`, each naming the value."""
    values = _split(raw, name, errors)
    for value in values:
        if value not in known:
            errors.add(name, code, f"{value!r} {reason}")
    return values
