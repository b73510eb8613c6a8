"""The canonical metric keys and the derived metrics computed from their sums."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from typing import Final
from typing import Literal
from typing import get_args

# What networks report, one column each in the metric tables (contract section 9).
RawMetric = Literal[
    "impressions", "reach", "views", "likes", "comments", "shares", "saves", "clicks"
]
DerivedMetric = Literal["engagements", "engagementRate"]
# Every key a client may ask for, in the order responses list them (a nested Literal is
# flattened, so this is one enum of ten keys in the OpenAPI document).
Metric = Literal[RawMetric, DerivedMetric]

RAW_METRICS: Final[tuple[str, ...]] = get_args(RawMetric)
DERIVED_METRICS: Final[tuple[str, ...]] = get_args(DerivedMetric)
METRICS: Final[tuple[str, ...]] = get_args(Metric)
# The parts of `engagements`.
ENGAGEMENT_PARTS: Final = ("likes", "comments", "shares", "saves", "clicks")

MetricValue = int | float | None


def derive(sums: Mapping[str, int]) -> dict[str, MetricValue]:
    """All ten metrics from the sums of the raw ones.

    Derived metrics come from sums, never from averaging per-post values:
    `engagementRate` of a group is its total engagements over its total impressions
    (null when there were no impressions)."""
    values: dict[str, MetricValue] = {key: int(sums.get(key) or 0) for key in RAW_METRICS}
    engagements = sum(int(sums.get(key) or 0) for key in ENGAGEMENT_PARTS)
    impressions = int(sums.get("impressions") or 0)
    values["engagements"] = engagements
    values["engagementRate"] = engagements / impressions if impressions else None
    return values


def select_metrics(
    values: Mapping[str, MetricValue], keys: Iterable[str]
) -> dict[str, MetricValue]:
    """The values of `keys`, in that order."""
    return {key: values[key] for key in keys}
