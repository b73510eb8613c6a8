"""The query parameters of `getAnalytics`: declared once (names, types, documentation) and
checked into one `AnalyticsQuery`, the typed query the report runs.

FastAPI enforces what the declared types say (required parameters, enums, integer bounds)
and reports those errors on its own; the checks here run once they pass. Every problem is a
field error naming the parameter as the client wrote it, and all of them are reported
together. Parameters the operation does not take are refused earlier, by the route layer,
for every operation; checks that need the database (channel ids of the caller's
organization) happen in the report."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated
from typing import Any
from typing import Final
from typing import Literal
from zoneinfo import ZoneInfo

from fastapi import Depends
from fastapi import Query
from fastapi import Request

from pressroom.analytics import parsing
from pressroom.analytics.buckets import Bucket
from pressroom.analytics.buckets import Grouping
from pressroom.analytics.buckets import buckets_for
from pressroom.analytics.buckets import resolve_grouping
from pressroom.analytics.comparison import CUSTOM
from pressroom.analytics.comparison import Comparison
from pressroom.analytics.comparison import Preset
from pressroom.analytics.comparison import TimeRange
from pressroom.analytics.comparison import comparison_for
from pressroom.analytics.metrics import METRICS
from pressroom.analytics.metrics import Metric
from pressroom.analytics.parsing import CONTENT_KINDS
from pressroom.analytics.parsing import MAX_LIST_VALUES
from pressroom.analytics.parsing import UUID_TEXT
from pressroom.analytics.parsing import FieldErrors
from pressroom.kit.errors import validation_error
from pressroom.kit.pagination import DEFAULT_PAGE_SIZE
from pressroom.kit.pagination import MAX_PAGE_SIZE

SortField = Literal["publishedAt", Metric]
SortOrder = Literal["asc", "desc"]
# Parameters that take one value: given twice, they are a 400 (the comma-separated filters
# may be repeated instead).
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
# Deep pages cost a sort of every post in range anyway; past this nobody is paging by hand.
MAX_PAGE: Final = 1_000_000


_TIME = {"format": "date-time", "examples": ["2026-03-01T00:00:00Z"]}


def _optional_time(schema: dict[str, Any]) -> None:
    """An optional time's schema is `anyOf: [string, null]`: the format belongs to the
    string branch (beside `anyOf` it would apply to no type)."""
    for branch in schema.get("anyOf", ()):
        if branch.get("type") == "string":
            branch["format"] = "date-time"
    schema["examples"] = _TIME["examples"]


Start = Annotated[
    str,
    Query(
        description="Inclusive range start: RFC 3339 with an offset (naive times are a "
        "400; in a query string encode `+` as `%2B`). The range may span at most 366 "
        "days.",
        json_schema_extra=_TIME,
    ),
]
End = Annotated[
    str,
    Query(
        description="Inclusive range end, not before `start`, at most 366 days after it.",
        json_schema_extra=_TIME,
    ),
]
ComparisonPreset = Annotated[
    Preset,
    Query(
        description="Comparison range preset. `previous_period`: the range of the same "
        "length ending just before `start`, where 'just before' is one unit of the finest "
        "precision used in `start` and `end` (a second for whole-second times, a "
        "millisecond, or a microsecond). `previous_week`, `previous_month`, "
        "`previous_year`: both ends shifted back by that calendar unit on the wall clock "
        "of `timezone`; a day past a shorter month's end clamps to its last day (March "
        "31 -> February 28/29). `none`: `comparison` and every `previous` are null. "
        "`custom` (the preset reported when comparisonStart/comparisonEnd are given) "
        "requires them."
    ),
]
ComparisonStart = Annotated[
    str | None,
    Query(
        alias="comparisonStart",
        description="Custom comparison start (inclusive); requires `comparisonEnd` and "
        "overrides the preset. Same format and 366-day limit as the range.",
        json_schema_extra=_optional_time,
    ),
]
ComparisonEnd = Annotated[
    str | None,
    Query(
        alias="comparisonEnd",
        description="Custom comparison end (inclusive); requires `comparisonStart`.",
        json_schema_extra=_optional_time,
    ),
]
Timezone = Annotated[
    str,
    Query(
        description="IANA time zone name (e.g. `Europe/Berlin`; the zones of the tz "
        "database, https://www.iana.org/time-zones) for the buckets and the calendar "
        "comparison presets. Abbreviations such as `CET` that are not zone names, and "
        "offsets, are a 400 naming `timezone`.",
        examples=["Europe/Berlin"],
        # A plain string, not an enum of the ~600 names: generated clients would turn the
        # enum into identifiers, and aliases such as `Etc/GMT+0` and `Etc/GMT-0` collide.
        json_schema_extra={"format": "iana-time-zone"},
    ),
]


def _comma_separated(alias: str, item: str, description: str) -> Any:
    """A filter of 1 to MAX_LIST_VALUES comma-separated values. It is declared as one
    string (its documented form), with `item` the regular expression of one value.

    Filters may also be repeated (`metrics=likes&metrics=reach`), and FastAPI hands over
    only the last value of a repeated parameter: `analytics_query` reads each filter's
    values from the query string itself."""
    pattern = f"^ *(?:{item}) *(?:, *(?:{item}) *){{0,{MAX_LIST_VALUES - 1}}}$"
    return Query(alias=alias, description=description, json_schema_extra={"pattern": pattern})


ChannelIds = Annotated[
    str | None,
    _comma_separated(
        "channelIds",
        UUID_TEXT,
        f"Comma-separated channel UUIDs (at most {MAX_LIST_VALUES}). Each must be a connected "
        "channel of the organization: an unknown, foreign or disconnected one is a 400.",
    ),
]
TagValues = Annotated[
    str | None,
    _comma_separated(
        "tagValues",
        "[^,\\x00]*[^,\\s\\x00][^,\\x00]*",
        "Comma-separated campaign tag values: posts with any of them. Values are matched "
        "exactly (case-sensitive, trimmed of surrounding spaces); a value no tag has matches "
        "no post.",
    ),
]
ContentKinds = Annotated[
    str | None,
    _comma_separated(
        "contentKinds",
        "|".join(sorted(CONTENT_KINDS)),
        "Comma-separated content kinds of the provider declarations (`post`, `reel`, "
        "`story`, `carousel`, `video`, `short`, `photo`, `pin`); unknown kinds are a 400.",
    ),
]
Metrics = Annotated[
    str | None,
    _comma_separated(
        "metrics",
        "|".join(METRICS),
        f"Comma-separated metric keys: {', '.join(METRICS)}. Default: all ten. Responses "
        "list them in this canonical order whatever the order asked for; duplicates are "
        "ignored.",
    ),
]
GroupBy = Annotated[
    Grouping,
    Query(
        alias="groupBy",
        description="Bucket size. `auto`: day for ranges up to 31 days, week up to 183, "
        "month beyond, counting elapsed time `end - start` (not calendar days; both limits "
        "inclusive). The response's `range.groupBy` names the size used.",
    ),
]
SortBy = Annotated[
    SortField,
    Query(
        alias="sortBy",
        description="Post sort field: `publishedAt` or a metric key (also one not in "
        "`metrics`). Ties are broken by `publishedAt`, then by post id, in the same "
        "direction, so the order is total and stable across pages. Posts whose "
        "`engagementRate` is null (no impressions) come last in both directions.",
    ),
]
SortDirection = Annotated[SortOrder, Query(alias="sortOrder", description="Post sort direction.")]
Page = Annotated[
    int,
    Query(ge=1, le=MAX_PAGE, description="One-based page of posts; past the last: empty."),
]
PageSize = Annotated[
    int,
    Query(
        alias="pageSize",
        ge=1,
        le=MAX_PAGE_SIZE,
        description=f"Posts per page, 1-{MAX_PAGE_SIZE}.",
    ),
]


@dataclass(frozen=True)
class AnalyticsQuery:
    """A checked getAnalytics query: what to report on (in the caller's organization)."""

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
    sort_by: SortField
    sort_order: SortOrder
    page: int
    page_size: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.page_size


async def analytics_query(
    request: Request,
    start: Start,
    end: End,
    comparison: ComparisonPreset = "previous_period",
    comparison_start: ComparisonStart = None,
    comparison_end: ComparisonEnd = None,
    timezone: Timezone = "UTC",
    channel_ids: ChannelIds = None,
    tag_values: TagValues = None,
    content_kinds: ContentKinds = None,
    metrics: Metrics = None,
    group_by: GroupBy = "auto",
    sort_by: SortBy = "publishedAt",
    sort_order: SortDirection = "desc",
    page: Page = 1,
    page_size: PageSize = DEFAULT_PAGE_SIZE,
) -> AnalyticsQuery:
    """The checked query; a 400 naming every invalid parameter otherwise."""
    given = request.query_params
    errors = FieldErrors()
    for name in SCALAR_PARAMETERS:
        if len(given.getlist(name)) > 1:
            errors.add(name, "repeated", "is given more than once")
    current = parsing.time_range(start, end, "start", "end", errors)
    # `timezone=` without a value is refused like any unknown zone: leave it out for UTC.
    zone_name = timezone
    zone = parsing.zone(zone_name, errors)
    custom = parsing.custom_range(comparison, comparison_start, comparison_end, errors)
    # Each filter is read whole: if repeated, its declared argument holds only the last value.
    channels = parsing.channel_ids(given.getlist("channelIds"), errors)
    tags = parsing.tag_values(given.getlist("tagValues"), errors)
    kinds = parsing.content_kinds(given.getlist("contentKinds"), errors)
    requested = parsing.metric_keys(given.getlist("metrics"), errors)
    if errors.errors:
        raise validation_error(errors.errors)
    assert current is not None and zone is not None
    unit = resolve_grouping(group_by, current)
    return AnalyticsQuery(
        range=current,
        timezone=zone_name,
        zone=zone,
        group_by=unit,
        buckets=tuple(buckets_for(current, zone, unit)),
        channel_ids=channels,
        tag_values=tags,
        content_kinds=kinds,
        metrics=requested,
        comparison=(
            Comparison(CUSTOM, custom)
            if custom is not None
            else comparison_for(comparison, current, zone)
        ),
        sort_by=sort_by,
        sort_order=sort_order,
        page=page,
        page_size=page_size,
    )


# An endpoint's getAnalytics parameters, checked.
AnalyticsParams = Annotated[AnalyticsQuery, Depends(analytics_query)]
