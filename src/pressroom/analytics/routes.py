"""GET /analytics."""

from __future__ import annotations

from fastapi import APIRouter

from pressroom.analytics.params import AnalyticsParams
from pressroom.analytics.report import build_report
from pressroom.analytics.schemas import AnalyticsReport
from pressroom.http.access import AnalyticsRead
from pressroom.http.openapi import error_responses
from pressroom.http.routing import PressroomRoute, RuntimeDep

router = APIRouter(prefix="/api/v1", route_class=PressroomRoute, tags=["Analytics"])

DESCRIPTION = """\
Scope `analytics:read`. Attributed performance of the organization's published posts in a
range, beside a comparison range: totals, a time series, breakdowns by channel, campaign
(tag), model, topic, approval status and content kind, and one page of posts.

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


@router.get(
    "/analytics",
    operation_id="getAnalytics",
    response_model=AnalyticsReport,
    status_code=200,
    responses=error_responses(),
    description=DESCRIPTION,
)
async def get_analytics(
    principal: AnalyticsRead, runtime: RuntimeDep, query: AnalyticsParams
) -> AnalyticsReport:
    """Get attributed analytics for a range, with a comparison range."""
    return await build_report(runtime, principal.organization_id, query)
