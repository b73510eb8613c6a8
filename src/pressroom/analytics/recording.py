"""Recording metric observations: append the snapshot, upsert the latest values.

Used by the metrics poller and the importer. The latest value of each metric wins: a
snapshot overwrites the metrics it reports and leaves the others as they were, and a
snapshot older than the one already applied (a late import, a slow worker) is kept in the
history but does not roll the latest values back."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.analytics.metrics import RAW_METRICS
from pressroom.analytics.models import MetricSnapshot
from pressroom.analytics.models import TargetMetrics
from pressroom.analytics.rollups import refresh_recorded
from pressroom.db import dialect_name
from pressroom.kit.ids import uuid7
from pressroom.posts.models import PostTarget

# PostgreSQL takes at most 32767 bind parameters per statement; SQLite 32766.
_ROWS_PER_STATEMENT = 2000


@dataclass(frozen=True)
class Observation:
    organization_id: uuid.UUID
    target_id: uuid.UUID
    # The target's publishedAt, kept beside its latest values for the reports' range scans.
    published_at: datetime
    captured_at: datetime
    # Canonical raw metric keys only; a key left out was not reported.
    values: Mapping[str, int]
    source: str


def clean_values(values: Mapping[str, Any]) -> dict[str, int]:
    """The canonical raw metrics among `values` that are non-negative integers; anything
    else a provider sends (unknown keys, negative or non-integer values) is dropped."""
    return {
        key: int(value)
        for key, value in values.items()
        if key in RAW_METRICS
        and isinstance(value, int)
        and not isinstance(value, bool)
        and value >= 0
    }


async def record(session: AsyncSession, observations: Iterable[Observation]) -> int:
    """Store observations (snapshot history and latest values); returns how many."""
    batch = list(observations)
    if not batch:
        return 0
    snapshots = [
        {
            "id": uuid7(),
            "organization_id": o.organization_id,
            "target_id": o.target_id,
            "captured_at": o.captured_at,
            "source": o.source,
            **{key: o.values.get(key) for key in RAW_METRICS},
        }
        for o in batch
    ]
    for chunk in _chunks(snapshots):
        await session.execute(insert(MetricSnapshot), chunk)
    # One upsert per set of reported keys: the UPDATE must touch exactly those columns.
    by_keys: dict[tuple[str, ...], list[Observation]] = {}
    for o in batch:
        by_keys.setdefault(tuple(k for k in RAW_METRICS if k in o.values), []).append(o)
    for keys, group in by_keys.items():
        rows = [
            {
                "target_id": o.target_id,
                "organization_id": o.organization_id,
                "published_at": o.published_at,
                "captured_at": o.captured_at,
                **{key: int(o.values.get(key, 0)) for key in RAW_METRICS},
            }
            for o in _latest_per_target(group)
        ]
        for chunk in _chunks(rows):
            await _upsert_latest(session, chunk, keys)
    # The report rows follow in the same transaction (analytics/rollups.py).
    targets = PostTarget.__table__
    touched: set[uuid.UUID] = set()
    target_ids = sorted({o.target_id for o in batch}, key=str)
    for start in range(0, len(target_ids), _ROWS_PER_STATEMENT):
        found = await session.execute(
            select(targets.c.post_id).where(
                targets.c.id.in_(target_ids[start : start + _ROWS_PER_STATEMENT])
            )
        )
        touched.update(found.scalars())
    await refresh_recorded(session, {o.organization_id for o in batch}, touched)
    return len(batch)


def _latest_per_target(group: list[Observation]) -> list[Observation]:
    # One statement may not touch a row twice (PostgreSQL refuses): keep each target's newest.
    newest: dict[uuid.UUID, Observation] = {}
    for o in group:
        if o.target_id not in newest or newest[o.target_id].captured_at <= o.captured_at:
            newest[o.target_id] = o
    return list(newest.values())


async def _upsert_latest(
    session: AsyncSession, rows: list[dict[str, Any]], keys: tuple[str, ...]
) -> None:
    dialect_insert = pg_insert if dialect_name(session) == "postgresql" else sqlite_insert
    statement = dialect_insert(TargetMetrics).values(rows)
    excluded = statement.excluded
    statement = statement.on_conflict_do_update(
        index_elements=[TargetMetrics.target_id],
        set_={
            "captured_at": excluded.captured_at,
            "published_at": excluded.published_at,
            **{key: excluded[key] for key in keys},
        },
        where=TargetMetrics.captured_at <= excluded.captured_at,
    )
    await session.execute(statement)


def _chunks(rows: list[dict[str, Any]]) -> Iterable[list[dict[str, Any]]]:
    for start in range(0, len(rows), _ROWS_PER_STATEMENT):
        yield rows[start : start + _ROWS_PER_STATEMENT]
