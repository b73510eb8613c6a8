"""The query parameters of `getAnalytics`, checked and turned into one `ReportQuery`.

Every problem is a field error naming the parameter as the client wrote it; all of them are
reported together. Checks that need the database (channel ids of the caller's
organization) happen in the service."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Final
from zoneinfo import ZoneInfo, available_timezones

from pressroom.analytics.buckets import GROUPINGS, Bucket, buckets_for, resolve_grouping
from pressroom.analytics.comparison import (
    CUSTOM,
    MAX_RANGE,
    PRESETS,
    Comparison,
    TimeRange,
    comparison_for,
)
from pressroom.analytics.metrics import METRICS
from pressroom.kit.errors import FieldError, validation_error
from pressroom.providers.declarations import DECLARATIONS

SORT_FIELDS: Final = ("publishedAt", *METRICS)
SORT_ORDERS: Final = ("asc", "desc")
LIST_PARAMETERS: Final = ("channelIds", "tagValues", "contentKinds", "metrics")
SCALAR_PARAMETERS: Final = (
    "start",
    "end",
    "comparison",
    "comparisonStart",
    "comparisonEnd",
    "timezone",
    "groupBy",
    "sortBy",
    "sortOrder",
    "page",
    "pageSize",
)
DEFAULT_PAGE_SIZE: Final = 25
MAX_PAGE_SIZE: Final = 100
# Deep pages cost a sort of every post in range anyway; past this nobody is paging by hand.
MAX_PAGE: Final = 1_000_000
# Values per comma-separated filter.
MAX_LIST_VALUES: Final = 100

CONTENT_KINDS: Final = frozenset(
    kind.kind for declaration in DECLARATIONS.values() for kind in declaration.content_kinds
)

# The documented shapes of the comma-separated parameters (validated by the code below,
# which also names the offending value).
_UUID_TEXT = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


def list_pattern(item: str) -> str:
    """A regular expression for 1 to MAX_LIST_VALUES comma-separated `item`s."""
    return f"^ *(?:{item}) *(?:, *(?:{item}) *){{0,{MAX_LIST_VALUES - 1}}}$"


CHANNEL_IDS_PATTERN: Final = list_pattern(_UUID_TEXT)
TAG_VALUES_PATTERN: Final = list_pattern("[^,\\x00]*[^,\\s\\x00][^,\\x00]*")
CONTENT_KINDS_PATTERN: Final = list_pattern("|".join(sorted(CONTENT_KINDS)))
METRICS_PATTERN: Final = list_pattern("|".join(METRICS))

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_SPACE_FOR_PLUS = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})? \d{2}:\d{2}$")


@dataclass(frozen=True)
class ReportQuery:
    organization_id: uuid.UUID
    range: TimeRange
    timezone: str
    zone: ZoneInfo
    group_by: str  # day, week or month (`auto` resolved)
    buckets: tuple[Bucket, ...]
    comparison: Comparison | None
    channel_ids: tuple[uuid.UUID, ...]
    tag_values: tuple[str, ...]
    content_kinds: tuple[str, ...]
    metrics: tuple[str, ...]
    sort_by: str
    sort_order: str
    page: int
    page_size: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.page_size


@lru_cache(maxsize=1)
def _zone_names() -> frozenset[str]:
    return frozenset(available_timezones())


def zone_names() -> list[str]:
    """Every IANA timezone name this server knows (its tzdata), sorted."""
    return sorted(_zone_names())


def parse_zone(name: str) -> ZoneInfo | None:
    """The IANA zone of that exact name, or None (no file paths, no abbreviations)."""
    if name not in _zone_names():
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


class _Collector:
    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def add(self, name: str, code: str, message: str) -> None:
        self.errors.append(FieldError(name, code, message))


def _split(raw: Sequence[str], name: str, errors: _Collector) -> tuple[str, ...] | None:
    """Comma-separated values, repeated parameters merged, duplicates dropped."""
    if not raw:
        return None
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
                return None
            if item not in values:
                values.append(item)
    if len(values) > MAX_LIST_VALUES:
        errors.add(name, "too_many_values", f"takes at most {MAX_LIST_VALUES} values")
        return None
    return tuple(values)


def _range(
    start_raw: str | None,
    end_raw: str | None,
    start_name: str,
    end_name: str,
    errors: _Collector,
) -> TimeRange | None:
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


def parse_query(
    organization_id: uuid.UUID,
    scalars: Mapping[str, str | None],
    lists: Mapping[str, Sequence[str]],
    repeated: Sequence[str] = (),
) -> ReportQuery:
    """The validated query; a 400 naming every invalid parameter otherwise. (Parameters
    getAnalytics does not take are refused earlier, by the route layer, for every operation.)"""
    errors = _Collector()
    for name in repeated:
        errors.add(name, "repeated", "is given more than once")

    current = _range(scalars.get("start"), scalars.get("end"), "start", "end", errors)

    zone_name = scalars.get("timezone") or "UTC"
    zone = parse_zone(zone_name)
    if zone is None:
        errors.add(
            "timezone", "unknown_timezone", "is not an IANA timezone name such as Europe/Berlin"
        )

    preset = scalars.get("comparison") or "previous_period"
    if preset not in (*PRESETS, CUSTOM):
        errors.add("comparison", "invalid", f"must be one of {', '.join(PRESETS)}")
    custom_start, custom_end = scalars.get("comparisonStart"), scalars.get("comparisonEnd")
    custom: TimeRange | None = None
    if custom_start is not None or custom_end is not None:
        custom = _range(custom_start, custom_end, "comparisonStart", "comparisonEnd", errors)
    elif preset == CUSTOM:
        errors.add("comparisonStart", "required", "is required with comparison=custom")

    group_by = scalars.get("groupBy") or "auto"
    if group_by not in GROUPINGS:
        errors.add("groupBy", "invalid", f"must be one of {', '.join(GROUPINGS)}")
    sort_by = scalars.get("sortBy") or "publishedAt"
    if sort_by not in SORT_FIELDS:
        errors.add("sortBy", "invalid", f"must be publishedAt or a metric: {', '.join(METRICS)}")
    sort_order = scalars.get("sortOrder") or "desc"
    if sort_order not in SORT_ORDERS:
        errors.add("sortOrder", "invalid", "must be asc or desc")
    page = _integer(scalars.get("page"), "page", 1, MAX_PAGE, 1, errors)
    page_size = _integer(
        scalars.get("pageSize"), "pageSize", 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE, errors
    )

    channel_ids = _channel_ids(_split(lists.get("channelIds", ()), "channelIds", errors), errors)
    # A value no tag can have (longer than a tag may be) simply matches no post.
    tag_values = _split(lists.get("tagValues", ()), "tagValues", errors) or ()
    if any("\x00" in value for value in tag_values):
        errors.add("tagValues", "invalid_character", "must not contain NUL characters")
    content_kinds = _split(lists.get("contentKinds", ()), "contentKinds", errors) or ()
    for kind in content_kinds:
        if kind not in CONTENT_KINDS:
            errors.add(
                "contentKinds",
                "unknown_content_kind",
                f"{kind!r} is not a content kind of any provider "
                f"({', '.join(sorted(CONTENT_KINDS))})",
            )
    requested = _split(lists.get("metrics", ()), "metrics", errors)
    for key in requested or ():
        if key not in METRICS:
            errors.add(
                "metrics", "unknown_metric", f"{key!r} is not a metric: {', '.join(METRICS)}"
            )

    if errors.errors:
        raise validation_error(errors.errors)
    assert current is not None and zone is not None
    unit = resolve_grouping(group_by, current)
    comparison = (
        Comparison(CUSTOM, custom) if custom is not None else comparison_for(preset, current, zone)
    )
    metrics = tuple(key for key in METRICS if key in requested) if requested else METRICS
    return ReportQuery(
        organization_id=organization_id,
        range=current,
        timezone=zone_name,
        zone=zone,
        group_by=unit,
        buckets=tuple(buckets_for(current, zone, unit)),
        comparison=comparison,
        channel_ids=channel_ids,
        tag_values=tag_values,
        content_kinds=content_kinds,
        metrics=metrics,
        sort_by=sort_by,
        sort_order=sort_order,
        page=page,
        page_size=page_size,
    )


def _integer(
    raw: str | None, name: str, low: int, high: int, default: int, errors: _Collector
) -> int:
    if raw is None:
        return default
    if not re.fullmatch(r"[+]?\d{1,12}", raw.strip()):
        errors.add(name, "invalid_integer", "must be an integer")
        return default
    value = int(raw)
    if not low <= value <= high:
        errors.add(name, "out_of_range", f"must be between {low} and {high}")
    return value


def _channel_ids(values: tuple[str, ...] | None, errors: _Collector) -> tuple[uuid.UUID, ...]:
    ids: list[uuid.UUID] = []
    for index, value in enumerate(values or ()):
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
