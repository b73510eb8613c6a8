"""The analytics report on the wire (contract section 9)."""

from __future__ import annotations

import uuid

from pydantic import Field

from pressroom.analytics.metrics import MetricValue
from pressroom.kit.schema import APIModel
from pressroom.kit.schema import UTCDatetime


class AnalyticsRange(APIModel):
    start: UTCDatetime
    end: UTCDatetime
    timezone: str = Field(description="The IANA timezone the buckets follow.")
    group_by: str = Field(
        description="The bucket size used: `day`, `week` or `month` (`auto` resolved)."
    )


class AnalyticsComparison(APIModel):
    preset: str = Field(
        description="`previous_period`, `previous_week`, `previous_month`, `previous_year`, "
        "or `custom` when comparisonStart and comparisonEnd were given."
    )
    start: UTCDatetime
    end: UTCDatetime


class MetricTotal(APIModel):
    value: MetricValue = Field(description="In the range. `engagementRate` may be null.")
    previous: MetricValue = Field(description="In the comparison range; null without one.")
    change: MetricValue = Field(
        description="value - previous; null if either is null (comparison `none`, or an "
        "`engagementRate` without impressions on either side)."
    )
    change_ratio: float | None = Field(
        description="change / previous; null when change is null or previous is 0."
    )


class TimeseriesBucket(APIModel):
    start: UTCDatetime = Field(description="Inclusive: a local midnight, or the range start.")
    end: UTCDatetime = Field(
        description="Exclusive: the next bucket's start (which belongs to the next bucket). "
        "The last bucket ends at the range end and includes it; when the range end is a "
        "local midnight starting a day, week or month, the last bucket is that one instant "
        "(start == end)."
    )
    values: dict[str, MetricValue] = Field(
        description="Zero counts when nothing was published; `engagementRate` is then null."
    )


class BreakdownRow(APIModel):
    key: str | None = Field(
        description="Channel id, campaign tag value, model (null: written by a person), "
        "topic, approval status or content kind."
    )
    label: str
    posts: int = Field(
        description="Distinct posts of this row in the range (0 for a key seen only in the "
        "comparison range)."
    )
    values: dict[str, MetricValue] = Field(
        description="Rows are ordered by the first requested metric's value here, highest "
        "first, null last, then by key (null key last)."
    )
    previous: dict[str, MetricValue] | None = Field(
        description="The same metrics in the comparison range; null without one."
    )


class AnalyticsBreakdowns(APIModel):
    """Each list ordered by the first requested metric, highest first (null last), then by
    key in code point order (null key last); independent of `sortBy`."""

    channels: list[BreakdownRow]
    campaigns: list[BreakdownRow]
    models: list[BreakdownRow]
    topics: list[BreakdownRow]
    approvals: list[BreakdownRow]
    content_kinds: list[BreakdownRow]


class PostPerformance(APIModel):
    post_id: uuid.UUID
    published_at: UTCDatetime = Field(
        description="The earliest publishedAt of the post's targets in the range."
    )
    channel_ids: list[uuid.UUID] = Field(description="Channels of those targets.")
    tags: list[str]
    topics: list[str]
    model: str | None
    approval_status: str
    values: dict[str, MetricValue] = Field(description="Summed over those targets.")


class AnalyticsPostPage(APIModel):
    page: int = Field(description="The one-based page returned.")
    page_size: int
    total_items: int = Field(
        description="Posts with a target in the range (and the filters), on all pages."
    )
    items: list[PostPerformance] = Field(
        description="Ordered by `sortBy`/`sortOrder`; ties by publishedAt, then post id, in "
        "the same direction; a null `engagementRate` sorts last in both directions."
    )


class AnalyticsReport(APIModel):
    """Attributed performance in a range, with a comparison range."""

    range: AnalyticsRange
    comparison: AnalyticsComparison | None
    metrics: list[str]
    totals: dict[str, MetricTotal]
    timeseries: list[TimeseriesBucket]
    breakdowns: AnalyticsBreakdowns
    posts: AnalyticsPostPage
