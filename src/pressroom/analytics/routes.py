"""GET /analytics."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request

from pressroom.analytics.params import (
    CHANNEL_IDS_PATTERN,
    CONTENT_KINDS_PATTERN,
    LIST_PARAMETERS,
    MAX_LIST_VALUES,
    MAX_PAGE,
    METRICS_PATTERN,
    SCALAR_PARAMETERS,
    TAG_VALUES_PATTERN,
    parse_query,
    zone_names,
)
from pressroom.analytics.report import build_report
from pressroom.analytics.schemas import AnalyticsReport
from pressroom.http.access import AnalyticsRead
from pressroom.http.openapi import error_responses
from pressroom.http.routing import PressroomRoute, RuntimeDep

router = APIRouter(prefix="/api/v1", route_class=PressroomRoute, tags=["Analytics"])

DESCRIPTION = """\
Attributed performance of the organization's published posts in a range, beside a
comparison range: totals, a time series, breakdowns by channel, campaign (tag), model,
topic, approval status and content kind, and one page of posts.

**Attribution.** A published target belongs to the range that holds its `publishedAt`; its
values are the latest snapshot of its metrics (zero until the first one). Targets of
deleted posts and targets that are not published are left out. Disconnected channels keep
their history: their targets count, and their rows appear in the channels breakdown.

**Metrics.** `engagements = likes + comments + shares + saves + clicks` and
`engagementRate = engagements / impressions` are computed from sums, never averaged: the
rate of a row is its total engagements over its total impressions, null when impressions
are 0. Counts are integers; `engagementRate` is a number or null.

**Totals.** `{value, previous, change, changeRatio}` per metric; `change = value -
previous`, `changeRatio = change / previous`, both null when `previous` is null (comparison
`none`) and `changeRatio` null when `previous` is 0.

**Time series.** Buckets follow calendar days, weeks (starting Monday) or months in
`timezone`, DST-correct (a day is 23 or 25 hours across a change). Each bucket is half-open
`[start, end)`; the first starts at `start` and the last ends at `end` and also holds that
instant (the range is inclusive). Empty buckets are present with zero counts (and a null
`engagementRate`).

**Breakdowns.** Rows `{key, label, posts, values, previous}`; `posts` counts distinct posts
in the range. `channels` are keyed by channel id (label: the channel's name);
`campaigns` by tag value, and a post with two tags counts in both rows; posts without tags
have no campaign row, nor posts without topics a topic row; `models` by model, with the
row `key: null` (label "Written by a person") for posts a person wrote; `approvals` by
approval status (`not_required`, `approved`, `rejected`); `contentKinds` by content kind.
A key seen only in the comparison range still has a row (zero values, `posts: 0`). Rows
are ordered by the first metric of `metrics`, highest first (null last), then by key.
With `tagValues`, the campaign rows are those of the requested values.

**Posts.** Logical posts with a target in the range (and in the channel and content-kind
filters), their values summed over those targets, `publishedAt` the earliest of those
targets' and `channelIds` their channels. `posts.totalItems` counts them all; a page past
the last is empty.

**Filters** combine with AND across parameters and OR within one (values separated by
commas, or the parameter repeated). Unknown query parameters are a 400, so that a
misspelt filter is never silently ignored.
"""

_TIME = {"format": "date-time", "examples": ["2026-03-01T00:00:00Z"]}


@router.get(
    "/analytics",
    operation_id="getAnalytics",
    response_model=AnalyticsReport,
    status_code=200,
    responses=error_responses(),
    description=DESCRIPTION,
)
async def get_analytics(
    request: Request,
    principal: AnalyticsRead,
    runtime: RuntimeDep,
    start: Annotated[
        str,
        Query(
            description="Inclusive range start: RFC 3339 with an offset (naive times are a "
            "400; in a query string encode `+` as `%2B`). The range may span at most 366 "
            "days.",
            json_schema_extra=_TIME,
        ),
    ],
    end: Annotated[
        str,
        Query(
            description="Inclusive range end, not before `start`, at most 366 days after it.",
            json_schema_extra=_TIME,
        ),
    ],
    comparison: Annotated[
        Literal[
            "previous_period", "previous_week", "previous_month", "previous_year", "none", "custom"
        ],
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
    ] = "previous_period",
    comparison_start: Annotated[
        str | None,
        Query(
            alias="comparisonStart",
            description="Custom comparison start (inclusive); requires `comparisonEnd` and "
            "overrides the preset. Same format and 366-day limit as the range.",
            json_schema_extra=_TIME,
        ),
    ] = None,
    comparison_end: Annotated[
        str | None,
        Query(
            alias="comparisonEnd",
            description="Custom comparison end (inclusive); requires `comparisonStart`.",
            json_schema_extra=_TIME,
        ),
    ] = None,
    timezone: Annotated[
        str,
        Query(
            description="IANA timezone name (e.g. `Europe/Berlin`) for the buckets and the "
            "calendar comparison presets. Abbreviations such as `CET` that are not zone "
            "names, and offsets, are a 400.",
            examples=["Europe/Berlin"],
            json_schema_extra={"enum": zone_names()},
        ),
    ] = "UTC",
    channel_ids: Annotated[
        str | None,
        Query(
            alias="channelIds",
            description="Comma-separated channel UUIDs (at most "
            f"{MAX_LIST_VALUES}). Each must be a connected channel of the organization: an "
            "unknown, foreign or disconnected one is a 400.",
            json_schema_extra={"pattern": CHANNEL_IDS_PATTERN},
        ),
    ] = None,
    tag_values: Annotated[
        str | None,
        Query(
            alias="tagValues",
            description="Comma-separated campaign tag values: posts with any of them. Values "
            "are matched exactly (case-sensitive, trimmed of surrounding spaces); a value no "
            "tag has matches no post.",
            json_schema_extra={"pattern": TAG_VALUES_PATTERN},
        ),
    ] = None,
    content_kinds: Annotated[
        str | None,
        Query(
            alias="contentKinds",
            description="Comma-separated content kinds of the provider declarations (`post`, "
            "`reel`, `story`, `carousel`, `video`, `short`, `photo`, `pin`); unknown kinds "
            "are a 400.",
            json_schema_extra={"pattern": CONTENT_KINDS_PATTERN},
        ),
    ] = None,
    metrics: Annotated[
        str | None,
        Query(
            description="Comma-separated metric keys: impressions, reach, views, likes, "
            "comments, shares, saves, clicks, engagements, engagementRate. Default: all ten. "
            "Responses list them in this canonical order whatever the order asked for; "
            "duplicates are ignored.",
            json_schema_extra={"pattern": METRICS_PATTERN},
        ),
    ] = None,
    group_by: Annotated[
        Literal["auto", "day", "week", "month"],
        Query(
            alias="groupBy",
            description="Bucket size. `auto`: day for ranges up to 31 days, week up to 183, "
            "month beyond. The response's `range.groupBy` names the size used.",
        ),
    ] = "auto",
    sort_by: Annotated[
        Literal[
            "publishedAt",
            "impressions",
            "reach",
            "views",
            "likes",
            "comments",
            "shares",
            "saves",
            "clicks",
            "engagements",
            "engagementRate",
        ],
        Query(
            alias="sortBy",
            description="Post sort field: `publishedAt` or a metric key (also one not in "
            "`metrics`). Ties are broken by `publishedAt`, then by post id, in the same "
            "direction, so the order is total and stable across pages. Posts whose "
            "`engagementRate` is null (no impressions) come last in both directions.",
        ),
    ] = "publishedAt",
    sort_order: Annotated[
        Literal["asc", "desc"], Query(alias="sortOrder", description="Post sort direction.")
    ] = "desc",
    page: Annotated[
        int,
        Query(ge=1, le=MAX_PAGE, description="One-based page of posts; past the last: empty."),
    ] = 1,
    page_size: Annotated[
        int, Query(alias="pageSize", ge=1, le=100, description="Posts per page, 1-100.")
    ] = 25,
) -> AnalyticsReport:
    """Get attributed analytics for a range, with a comparison range."""
    params = request.query_params
    repeated = [name for name in SCALAR_PARAMETERS if len(params.getlist(name)) > 1]
    query = parse_query(
        principal.organization_id,
        {
            "start": start,
            "end": end,
            "comparison": comparison,
            "comparisonStart": comparison_start,
            "comparisonEnd": comparison_end,
            "timezone": timezone,
            "groupBy": group_by,
            "sortBy": sort_by,
            "sortOrder": sort_order,
            "page": str(page),
            "pageSize": str(page_size),
        },
        {name: params.getlist(name) for name in LIST_PARAMETERS},
        repeated=repeated,
    )
    return await build_report(runtime, query)
