"""The page of posts of a report from the rollups (analytics/rollup_query.py): the posts
wholly inside the range ranked in the database from `analytics_post_facts`, merged with the
few posts crossing its ends."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from typing import Any

from sqlalchemy import Float
from sqlalchemy import cast
from sqlalchemy import func
from sqlalchemy import nulls_last
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from pressroom.analytics.metrics import ENGAGEMENT_PARTS
from pressroom.analytics.metrics import RAW_METRICS
from pressroom.analytics.metrics import derive
from pressroom.analytics.params import AnalyticsQuery
from pressroom.analytics.query import CURRENT
from pressroom.analytics.query import AggregateRow
from pressroom.analytics.rollups import Fact
from pressroom.analytics.rollups import post_facts
from pressroom.kit.schema import as_utc


@dataclass
class Straddlers:
    """Posts with facts both inside and outside the current period, by post."""

    posts: dict[uuid.UUID, list[Fact]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Ranked:
    post_id: uuid.UUID
    first_at: datetime
    sums: dict[str, int]


def _metric(sort_by: str, sums: dict[str, int], first_at: datetime) -> Any:
    if sort_by == "publishedAt":
        return first_at
    return derive(sums)[sort_by]


def _order(items: list[_Ranked], query: AnalyticsQuery) -> list[_Ranked]:
    """The raw statement's order: the sort field, then publishedAt, then post id, all in
    the requested direction; nulls last."""
    descending = query.sort_order == "desc"

    def key(item: _Ranked) -> tuple[Any, ...]:
        value = _metric(query.sort_by, item.sums, item.first_at)
        parts = [value] if query.sort_by == "publishedAt" else [value, item.first_at]
        return (*parts, str(item.post_id))

    present = [i for i in items if _metric(query.sort_by, i.sums, i.first_at) is not None]
    missing = [i for i in items if _metric(query.sort_by, i.sums, i.first_at) is None]
    present.sort(key=key, reverse=descending)
    missing.sort(key=lambda i: (i.first_at, str(i.post_id)), reverse=descending)
    return present + missing


def _sql_order(query: AnalyticsQuery) -> list[Any]:
    descending = query.sort_order == "desc"
    engagements = sum((post_facts.c[key] for key in ENGAGEMENT_PARTS[1:]), post_facts.c.likes)
    keys: list[Any]
    if query.sort_by == "publishedAt":
        keys = [post_facts.c.first_at]
    else:
        if query.sort_by == "engagements":
            lead: Any = engagements
        elif query.sort_by == "engagementRate":
            lead = cast(engagements, Float) / func.nullif(post_facts.c.impressions, 0)
        else:
            lead = post_facts.c[query.sort_by]
        keys = [lead, post_facts.c.first_at]
    keys.append(post_facts.c.post_id)
    return [nulls_last(k.desc() if descending else k.asc()) for k in keys]


async def page_rows(
    connection: AsyncConnection,
    organization_id: uuid.UUID,
    query: AnalyticsQuery,
    straddlers: Straddlers,
) -> list[AggregateRow]:
    """The page of posts: the best of the posts wholly in range (by their summed rows, in
    the database) merged with the posts crossing its ends (summed over their facts inside)."""
    wanted = query.offset + query.page_size
    start, end = query.range.start, query.range.end
    result = await connection.execute(
        select(post_facts)
        .where(
            post_facts.c.organization_id == organization_id,
            post_facts.c.first_at >= start,
            post_facts.c.first_at <= end,
            post_facts.c.last_at <= end,
        )
        .order_by(*_sql_order(query))
        .limit(wanted)
    )
    items = [
        _Ranked(
            post_id=row.post_id,
            first_at=as_utc(row.first_at),
            sums={key: int(row._mapping[key]) for key in RAW_METRICS},
        )
        for row in result
    ]
    for post_id, inside in straddlers.posts.items():
        items.append(
            _Ranked(
                post_id=post_id,
                first_at=min(fact.published_at for fact in inside),
                sums={key: sum(fact.values[key] for fact in inside) for key in RAW_METRICS},
            )
        )
    ranked = _order(items, query)[query.offset : wanted]
    return [
        AggregateRow(
            section="page",
            period=CURRENT,
            key=str(item.post_id),
            posts=query.offset + position + 1,
            first_at=item.first_at,
            sums=item.sums,
        )
        for position, item in enumerate(ranked)
    ]
