"""The analytics report on the wire (contract section 9)."""

from __future__ import annotations

import uuid

from pydantic import Field

from pressroom.analytics.metrics import MetricValue
from pressroom.kit.schema import APIModel, UTCDatetime


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
    change: MetricValue = Field(description="value - previous; null if either is null.")
    change_ratio: float | None = Field(
        description="change / previous; null when previous is 0 or null."
    )


class TimeseriesBucket(APIModel):
    start: UTCDatetime = Field(description="Inclusive: a local midnight, or the range start.")
    end: UTCDatetime = Field(
        description="Exclusive: the next bucket's start; the last bucket ends at the range "
        "end and includes it."
    )
    values: dict[str, MetricValue] = Field(description="Zero counts when nothing was published.")


class BreakdownRow(APIModel):
    key: str | None = Field(
        description="Channel id, campaign tag value, model (null: written by a person), "
        "topic, approval status or content kind."
    )
    label: str
    posts: int = Field(description="Distinct posts of this row in the range.")
    values: dict[str, MetricValue]
    previous: dict[str, MetricValue] | None = Field(
        description="The same metrics in the comparison range; null without one."
    )


class AnalyticsBreakdowns(APIModel):
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
        description="Ordered by `sortBy`/`sortOrder`; ties by publishedAt, then post id."
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
