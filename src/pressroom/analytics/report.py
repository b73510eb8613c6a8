"""The analytics report use case: check the query against the organization, run the
aggregates in the database, and shape the response of contract section 9."""

from __future__ import annotations

import uuid
from typing import Final

from pressroom.analytics.details import PageDetails
from pressroom.analytics.details import run_details
from pressroom.analytics.details import usable_channel_ids
from pressroom.analytics.metrics import RAW_METRICS
from pressroom.analytics.metrics import MetricValue
from pressroom.analytics.metrics import derive
from pressroom.analytics.metrics import select_metrics
from pressroom.analytics.params import AnalyticsQuery
from pressroom.analytics.query import CURRENT
from pressroom.analytics.query import PREVIOUS
from pressroom.analytics.query import AggregateRow
from pressroom.analytics.query import report_connection
from pressroom.analytics.query import run_aggregates
from pressroom.analytics.rollup_query import run_rollups
from pressroom.analytics.rollups import APPLY_IN_REQUEST
from pressroom.analytics.rollups import apply_log
from pressroom.analytics.rollups import pending
from pressroom.analytics.schemas import AnalyticsBreakdowns
from pressroom.analytics.schemas import AnalyticsComparison
from pressroom.analytics.schemas import AnalyticsPostPage
from pressroom.analytics.schemas import AnalyticsRange
from pressroom.analytics.schemas import AnalyticsReport
from pressroom.analytics.schemas import BreakdownRow
from pressroom.analytics.schemas import MetricTotal
from pressroom.analytics.schemas import PostPerformance
from pressroom.analytics.schemas import TimeseriesBucket
from pressroom.kit.errors import FieldError
from pressroom.kit.errors import validation_error
from pressroom.runtime import Runtime

APPROVAL_LABELS: Final = {
    "not_required": "Not required",
    "pending": "Pending",
    "approved": "Approved",
    "rejected": "Rejected",
}
PERSON_LABEL: Final = "Written by a person"
_ZERO: Final = dict.fromkeys(RAW_METRICS, 0)
# Breakdown sections of the aggregate statement and where they go in the response.
_BREAKDOWNS: Final = ("channels", "campaigns", "models", "topics", "approvals", "contentKinds")


async def build_report(
    runtime: Runtime, organization_id: uuid.UUID, query: AnalyticsQuery
) -> AnalyticsReport:
    """The report of `query` on the organization's posts; a 400 if a channel of
    `query.channel_ids` is not a connected channel of the organization."""
    await apply_pending(runtime, organization_id)
    async with report_connection(runtime) as connection:
        if query.channel_ids:
            usable = await usable_channel_ids(connection, organization_id, query.channel_ids)
            unusable = [str(c) for c in query.channel_ids if c not in usable]
            if unusable:
                # Unknown, foreign and disconnected channels look alike (contract section 2).
                raise validation_error(
                    [
                        FieldError(
                            "channelIds",
                            "unknown_channel",
                            f"{', '.join(unusable)}: not a connected channel of this organization",
                        )
                    ]
                )
        rows = await run_rollups(connection, organization_id, query)
        if rows is None:
            rows = await run_aggregates(connection, organization_id, query)
        page_rows = sorted((r for r in rows if r.section == "page"), key=lambda r: r.posts or 0)
        page_ids = [uuid.UUID(str(r.key)) for r in page_rows]
        details = await run_details(connection, organization_id, query, page_ids)
    return assemble(query, rows, page_rows, details)


async def apply_pending(runtime: Runtime, organization_id: uuid.UUID) -> None:
    """Apply the organization's log of changes to the rollups before a report reads them,
    unless it is long (after an upgrade or a bulk import: `analytics rebuild` or the
    analytics worker applies it, and reports scan the raw rows until then)."""
    async with runtime.reader.connect() as connection:
        waiting = await pending(connection, organization_id, APPLY_IN_REQUEST)
    if 0 < waiting <= APPLY_IN_REQUEST:
        async with runtime.sessions() as session, session.begin():
            await apply_log(session, organization_id, limit=APPLY_IN_REQUEST)


def assemble(
    query: AnalyticsQuery,
    rows: list[AggregateRow],
    page_rows: list[AggregateRow],
    details: PageDetails,
) -> AnalyticsReport:
    compared = query.comparison is not None
    index: dict[tuple[str, int, str | None], AggregateRow] = {
        (row.section, row.period, row.key): row for row in rows if row.section != "page"
    }
    current_totals = index.get(("totals", CURRENT, None))
    previous_totals = index.get(("totals", PREVIOUS, None))
    value_now = derive(current_totals.sums if current_totals else _ZERO)
    value_then = derive(previous_totals.sums if previous_totals else _ZERO) if compared else None
    totals = {
        key: _total(value_now[key], None if value_then is None else value_then[key])
        for key in query.metrics
    }

    timeseries = []
    for position, bucket in enumerate(query.buckets):
        found = index.get(("timeseries", CURRENT, str(position)))
        timeseries.append(
            TimeseriesBucket(
                start=bucket.start,
                end=bucket.end,
                values=select_metrics(derive(found.sums if found else _ZERO), query.metrics),
            )
        )

    sections = {
        name: _breakdown(
            query, name, [row for row in rows if row.section == name], details.channel_names
        )
        for name in _BREAKDOWNS
    }
    items = [
        PostPerformance(
            post_id=(post_id := uuid.UUID(str(row.key))),
            published_at=row.first_at or query.range.start,
            channel_ids=details.channel_ids.get(post_id, []),
            tags=details.tags.get(post_id, []),
            topics=details.topics.get(post_id, []),
            model=details.model.get(post_id),
            approval_status=details.approval.get(post_id, "not_required"),
            values=select_metrics(derive(row.sums), query.metrics),
        )
        for row in page_rows
    ]
    comparison = query.comparison
    return AnalyticsReport(
        range=AnalyticsRange(
            start=query.range.start,
            end=query.range.end,
            timezone=query.timezone,
            group_by=query.group_by,
        ),
        comparison=None
        if comparison is None
        else AnalyticsComparison(
            preset=comparison.preset, start=comparison.range.start, end=comparison.range.end
        ),
        metrics=list(query.metrics),
        totals=totals,
        timeseries=timeseries,
        breakdowns=AnalyticsBreakdowns(
            channels=sections["channels"],
            campaigns=sections["campaigns"],
            models=sections["models"],
            topics=sections["topics"],
            approvals=sections["approvals"],
            content_kinds=sections["contentKinds"],
        ),
        posts=AnalyticsPostPage(
            page=query.page,
            page_size=query.page_size,
            total_items=current_totals.posts or 0 if current_totals else 0,
            items=items,
        ),
    )


def _total(value: MetricValue, previous: MetricValue) -> MetricTotal:
    change = None if value is None or previous is None else value - previous
    ratio = None if change is None or not previous else change / previous
    return MetricTotal(value=value, previous=previous, change=change, change_ratio=ratio)


def _normalize_key(section: str, key: str | None) -> str | None:
    if section == "channels" and key is not None:
        return str(uuid.UUID(key))  # SQLite spells UUIDs as 32 hex digits
    return key


def _label(section: str, key: str | None, channel_names: dict[uuid.UUID, str]) -> str:
    if section == "channels" and key is not None:
        return channel_names.get(uuid.UUID(key), key)
    if section == "models":
        return PERSON_LABEL if key is None else key
    if section == "approvals" and key is not None:
        return APPROVAL_LABELS.get(key, key)
    return "" if key is None else key


def _breakdown(
    query: AnalyticsQuery,
    section: str,
    rows: list[AggregateRow],
    channel_names: dict[uuid.UUID, str],
) -> list[BreakdownRow]:
    """One row per key seen in the range or the comparison range, ordered by the first
    requested metric (highest first, nulls last), then by key (null last)."""
    by_key: dict[str | None, dict[int, AggregateRow]] = {}
    for row in rows:
        by_key.setdefault(_normalize_key(section, row.key), {})[row.period] = row
    result = []
    for key, periods in by_key.items():
        now, then = periods.get(CURRENT), periods.get(PREVIOUS)
        result.append(
            BreakdownRow(
                key=key,
                label=_label(section, key, channel_names),
                posts=(now.posts or 0) if now else 0,
                values=select_metrics(derive(now.sums if now else _ZERO), query.metrics),
                previous=select_metrics(derive(then.sums if then else _ZERO), query.metrics)
                if query.comparison is not None
                else None,
            )
        )
    lead = query.metrics[0]

    def order(row: BreakdownRow) -> tuple[bool, float, bool, str]:
        value = row.values[lead]
        return (value is None, -(value or 0), row.key is None, row.key or "")

    return sorted(result, key=order)
