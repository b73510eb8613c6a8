"""GET /analytics."""

from __future__ import annotations

from fastapi import APIRouter

from pressroom.analytics.params import AnalyticsParams
from pressroom.analytics.report import build_report
from pressroom.analytics.schemas import AnalyticsReport
from pressroom.http.access import AnalyticsRead
from pressroom.http.routing import PressroomRoute
from pressroom.http.routing import RuntimeDep

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
previous` and `changeRatio = change / previous`. `change` is null when either side is null
(comparison `none`, or an `engagementRate` without impressions on either side);
`changeRatio` is null when `change` is null or `previous` is 0.

**Comparison range.** `previous_period` ends exactly one unit before `start`, the unit being
the finest precision written in `start` and `end` (a second for whole-second times, else a
millisecond, else a microsecond), and starts `end - start` before that end: the same
elapsed length, both ends inclusive. With `start=2026-03-01T00:00:00Z` and
`end=2026-03-31T23:59:59Z` it is `2026-01-29T00:00:00Z` to `2026-02-28T23:59:59Z`.

**Time series.** Buckets follow calendar days, weeks (starting Monday) or months in
`timezone`, DST-correct (a day is 23 or 25 hours across a change). Each bucket is half-open
`[start, end)`: its `end` is the next bucket's `start` and belongs to that bucket. The
first bucket starts at `start`; the last ends at the range's `end` and also holds that
instant (the range is inclusive). When `end` is itself a bucket boundary (a local midnight
starting a day, a Monday or the 1st of a month), the last bucket is that single instant
(`start == end`) and a post published exactly then counts there, not in the bucket before.
Empty buckets are present with zero counts and a null `engagementRate`. `groupBy=auto`
measures elapsed time `end - start`, not calendar days: day up to 31 days (744 hours)
inclusive, week up to 183 days inclusive, month beyond.

**Breakdowns.** Rows `{key, label, posts, values, previous}`; `posts` counts distinct posts
in the range. `channels` are keyed by channel id (label: the channel's name);
`campaigns` by tag value, and a post with two tags counts in both rows; posts without tags
have no campaign row, nor posts without topics a topic row; `models` by model, with the
row `key: null` (label "Written by a person") for posts a person wrote; `approvals` by
approval status (`not_required`, `approved`, `rejected`); `contentKinds` by content kind.
A key seen only in the comparison range still has a row (zero values, `posts: 0`). Rows
are ordered by the value of the first metric of `metrics` in the range, highest first,
rows whose value is null (an `engagementRate` without impressions) last; ties by key,
ascending in code point order (channel ids as lowercase UUID text), the row with key null
last. The order does not follow `sortBy` or `sortOrder`, which page the posts. With
`tagValues`, the campaign rows are those of the requested values.

**Posts.** Logical posts with a target in the range (and in the channel and content-kind
filters), their values summed over those targets, `publishedAt` the earliest of those
targets' and `channelIds` their channels. They are ordered by `sortBy` in `sortOrder`,
ties by `publishedAt`, then by post id, both in the same direction; posts whose
`engagementRate` is null come last in both directions. `posts.totalItems` counts them all;
a page past the last is empty.

**Filters** combine with AND across parameters and OR within one (values separated by
commas, or the parameter repeated). Unknown query parameters are a 400, so that a
misspelt filter is never silently ignored.
"""


@router.get(
    "/analytics",
    operation_id="getAnalytics",
    summary="Get Analytics",
    description=DESCRIPTION,
)
async def get_analytics(
    principal: AnalyticsRead, runtime: RuntimeDep, query: AnalyticsParams
) -> AnalyticsReport:
    """Get attributed analytics for a range, with a comparison range."""
    return await build_report(runtime, principal.organization_id, query)
