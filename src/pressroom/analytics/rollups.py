"""Keeping the pre-aggregated report rows (analytics/models.py) equal to the raw rows.

Triggers append the post of every change a report counts to `analytics_dirty` (migration
0014), in the transaction of the change, whoever makes it. `refresh` recomputes a set of
posts from the raw rows: it takes back what their old facts added to the rollups, adds what
the new ones add, and replaces the facts. Applying the log refreshes the posts it names and
removes the entries it read; a report applies its organization's log before it reads, and
recording metric snapshots refreshes the posts it touched in its own transaction.

One applier per organization at a time (an advisory lock on PostgreSQL; SQLite has one
writer), so the increments of two appliers never interleave on a post."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import defaultdict
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any
from typing import Final
from typing import cast

from sqlalchemy import Table
from sqlalchemy import delete
from sqlalchemy import func
from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy import text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.analytics.metrics import RAW_METRICS
from pressroom.analytics.models import AnalyticsDirty
from pressroom.analytics.models import AnalyticsFact
from pressroom.analytics.models import AnalyticsPostFact
from pressroom.analytics.models import AnalyticsRollup
from pressroom.analytics.models import TargetMetrics
from pressroom.db import dialect_name
from pressroom.db import unit_of_work
from pressroom.kit.attributes import from_attributes
from pressroom.kit.schema import as_utc
from pressroom.posts.models import Post
from pressroom.posts.models import PostTag
from pressroom.posts.models import PostTarget
from pressroom.posts.models import PostTopic
from pressroom.runtime import Runtime

HOUR: Final = timedelta(hours=1)
DAY: Final = timedelta(days=1)
HOUR_GRAIN, DAY_GRAIN, MONTH_GRAIN = 0, 1, 2
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
# Posts refreshed per statement batch (bind parameters stay far below the limits).
_BATCH: Final = 500
# A report applies at most this many log entries itself; a longer log (after an upgrade,
# a bulk import) is left to `analytics rebuild` or the worker, and reports scan raw rows
# until then.
APPLY_IN_REQUEST: Final = 2000

facts = cast(Table, AnalyticsFact.__table__)
post_facts = cast(Table, AnalyticsPostFact.__table__)
rollups = cast(Table, AnalyticsRollup.__table__)
dirty = cast(Table, AnalyticsDirty.__table__)

RollupKey = tuple[int, datetime, str, str]  # grain, slot start, dimension, value


def hour_of(moment: datetime) -> datetime:
    """The start of the UTC hour holding `moment`."""
    return moment - (moment - _EPOCH) % HOUR


def day_of(moment: datetime) -> datetime:
    return moment - (moment - _EPOCH) % DAY


def month_of(moment: datetime) -> datetime:
    """The first instant of the UTC calendar month holding `moment`."""
    return day_of(moment).replace(day=1)


def next_month(month: datetime) -> datetime:
    return month.replace(year=month.year + month.month // 12, month=month.month % 12 + 1)


@dataclass
class Fact:
    """What one published target adds to the reports (a row of `analytics_facts`)."""

    target_id: uuid.UUID
    organization_id: uuid.UUID
    post_id: uuid.UUID
    published_at: datetime
    channel_id: uuid.UUID
    content_kind: str
    model: str | None
    approval_status: str
    tags: list[str]
    topics: list[str]
    values: dict[str, int]
    first_of_post: int = 0
    first_on_channel: int = 0
    first_of_kind: int = 0
    post_first_at: datetime | None = None

    def dimensions(self) -> Iterable[tuple[str, str, int]]:
        """(dimension, value, counts-its-post) of every rollup row this fact adds to."""
        yield "all", "", self.first_of_post
        yield "channel", str(self.channel_id), self.first_on_channel
        yield "kind", self.content_kind, self.first_of_kind
        yield "model", self.model or "", self.first_of_post
        yield "approval", self.approval_status, self.first_of_post
        for tag in self.tags:
            yield "tag", tag, self.first_of_post
        for topic in self.topics:
            yield "topic", topic, self.first_of_post

    def row(self) -> dict[str, Any]:
        assert self.post_first_at is not None
        return {
            "target_id": self.target_id,
            "organization_id": self.organization_id,
            "post_id": self.post_id,
            "published_at": self.published_at,
            "post_first_at": self.post_first_at,
            "lag_us": (self.published_at - self.post_first_at) // timedelta(microseconds=1),
            "channel_id": self.channel_id,
            "content_kind": self.content_kind,
            "model": self.model,
            "approval_status": self.approval_status,
            "tags": json.dumps(self.tags),
            "topics": json.dumps(self.topics),
            "first_of_post": self.first_of_post,
            "first_on_channel": self.first_on_channel,
            "first_of_kind": self.first_of_kind,
            **self.values,
        }


def _fact(row: Any, tags: list[str], topics: list[str], **flags: Any) -> Fact:
    """A fact from a row naming a target's columns (`target_id`, its post's model and
    approval, its metrics)."""
    return from_attributes(
        Fact,
        row,
        published_at=as_utc(row.published_at),
        tags=tags,
        topics=topics,
        values={key: int(row._mapping[key]) for key in RAW_METRICS},
        **flags,
    )


def fact_from_row(row: Any) -> Fact:
    """A stored fact (a row of `analytics_facts`)."""
    return _fact(
        row,
        json.loads(row.tags),
        json.loads(row.topics),
        first_of_post=int(row.first_of_post),
        first_on_channel=int(row.first_on_channel),
        first_of_kind=int(row.first_of_kind),
        post_first_at=as_utc(row.post_first_at),
    )


def mark_firsts(post_facts_: list[Fact]) -> None:
    """Flag, among one post's facts, the first overall, on each channel and of each kind
    (by publication time, ties by target id), and give each the post's first time."""
    ordered = sorted(post_facts_, key=lambda f: (f.published_at, str(f.target_id)))
    seen_channels: set[uuid.UUID] = set()
    seen_kinds: set[str] = set()
    for index, fact in enumerate(ordered):
        fact.first_of_post = int(index == 0)
        fact.first_on_channel = int(fact.channel_id not in seen_channels)
        fact.first_of_kind = int(fact.content_kind not in seen_kinds)
        seen_channels.add(fact.channel_id)
        seen_kinds.add(fact.content_kind)
        fact.post_first_at = ordered[0].published_at


async def current_facts(session: AsyncSession, post_ids: Sequence[uuid.UUID]) -> list[Fact]:
    """The facts of these posts as the raw rows say now: their published targets, if the
    post is not deleted, with the latest metrics (0 before the first snapshot)."""
    targets, posts = PostTarget.__table__, Post.__table__
    latest = TargetMetrics.__table__
    result = await session.execute(
        select(
            targets.c.id.label("target_id"),
            targets.c.organization_id,
            targets.c.post_id,
            targets.c.published_at,
            targets.c.channel_id,
            targets.c.content_kind,
            posts.c.model,
            posts.c.approval_status,
            *[func.coalesce(latest.c[key], 0).label(key) for key in RAW_METRICS],
        )
        .select_from(
            targets.join(posts, posts.c.id == targets.c.post_id).outerjoin(
                latest, latest.c.target_id == targets.c.id
            )
        )
        .where(
            targets.c.post_id.in_(post_ids),
            targets.c.status == "published",
            targets.c.published_at.is_not(None),
            posts.c.deleted_at.is_(None),
        )
    )
    rows = result.all()
    labels: dict[str, dict[uuid.UUID, list[tuple[int, str]]]] = {"tag": {}, "topic": {}}
    if rows:
        for kind, table in (("tag", PostTag.__table__), ("topic", PostTopic.__table__)):
            found = await session.execute(
                select(table.c.post_id, table.c.value, table.c.position).where(
                    table.c.post_id.in_(post_ids)
                )
            )
            for post_id, value, position in found:
                labels[kind].setdefault(post_id, []).append((position, value))
    by_post: dict[uuid.UUID, list[Fact]] = defaultdict(list)
    for row in rows:
        by_post[row.post_id].append(
            _fact(
                row,
                [v for _, v in sorted(labels["tag"].get(row.post_id, []))],
                [v for _, v in sorted(labels["topic"].get(row.post_id, []))],
            )
        )
    for group in by_post.values():
        mark_firsts(group)
    return [fact for group in by_post.values() for fact in group]


def add_contributions(
    deltas: dict[tuple[uuid.UUID, RollupKey], list[int]], fact: Fact, sign: int
) -> None:
    """Add (sign 1) or take back (-1) `fact`'s share of its rows: its UTC month's and UTC
    day's rows of every dimension value it has, and its UTC hour's row of `all`."""
    metrics = [sign * fact.values[key] for key in RAW_METRICS]
    day, month = day_of(fact.published_at), month_of(fact.published_at)
    cells = [((HOUR_GRAIN, hour_of(fact.published_at), "all", ""), fact.first_of_post)]
    for dimension, value, counts in fact.dimensions():
        cells.append(((DAY_GRAIN, day, dimension, value), counts))
        cells.append(((MONTH_GRAIN, month, dimension, value), counts))
    for key, counts in cells:
        cell = deltas.get((fact.organization_id, key))
        if cell is None:
            cell = deltas[(fact.organization_id, key)] = [0] * (2 + len(RAW_METRICS))
        cell[0] += sign
        cell[1] += sign * counts
        for index, amount in enumerate(metrics, start=2):
            cell[index] += amount


async def refresh(session: AsyncSession, post_ids: Iterable[uuid.UUID]) -> int:
    """Bring the report rows of these posts up to date; returns how many facts changed
    hands (taken back plus added)."""
    ordered = sorted(set(post_ids), key=str)
    changed = 0
    for start in range(0, len(ordered), _BATCH):
        changed += await _refresh_batch(session, ordered[start : start + _BATCH])
    return changed


async def _refresh_batch(session: AsyncSession, post_ids: list[uuid.UUID]) -> int:
    old = [
        fact_from_row(row)
        for row in await session.execute(select(facts).where(facts.c.post_id.in_(post_ids)))
    ]
    new = await current_facts(session, post_ids)
    deltas: dict[tuple[uuid.UUID, RollupKey], list[int]] = {}
    for fact in old:
        add_contributions(deltas, fact, -1)
    for fact in new:
        add_contributions(deltas, fact, 1)
    await _apply_deltas(session, deltas)
    await session.execute(delete(AnalyticsFact).where(AnalyticsFact.post_id.in_(post_ids)))
    await session.execute(delete(AnalyticsPostFact).where(AnalyticsPostFact.post_id.in_(post_ids)))
    if new:
        # Core inserts on the session's connection: the ORM's bulk path costs more than
        # the statements themselves here.
        connection = await session.connection()
        await connection.execute(insert(facts), [fact.row() for fact in new])
        await connection.execute(insert(post_facts), _post_rows(new))
    return len(old) + len(new)


def _post_rows(new: list[Fact]) -> list[dict[str, Any]]:
    by_post: dict[uuid.UUID, list[Fact]] = defaultdict(list)
    for fact in new:
        by_post[fact.post_id].append(fact)
    return [
        {
            "post_id": post_id,
            "organization_id": group[0].organization_id,
            "first_at": min(f.published_at for f in group),
            "last_at": max(f.published_at for f in group),
            **{key: sum(f.values[key] for f in group) for key in RAW_METRICS},
        }
        for post_id, group in by_post.items()
    ]


async def _apply_deltas(
    session: AsyncSession, deltas: dict[tuple[uuid.UUID, RollupKey], list[int]]
) -> None:
    rows = [
        {
            "organization_id": organization_id,
            "grain": grain,
            "slot_start": start,
            "dimension": dimension,
            "value": value,
            "targets": cell[0],
            "posts": cell[1],
            **{key: cell[2 + i] for i, key in enumerate(RAW_METRICS)},
        }
        # Sorted, so that concurrent appliers of different organizations never wait on
        # each other in opposite orders.
        for (organization_id, (grain, start, dimension, value)), cell in sorted(
            deltas.items(), key=lambda item: (str(item[0][0]), item[0][1])
        )
        if any(cell)
    ]
    if not rows:
        return
    dialect_insert = pg_insert if dialect_name(session) == "postgresql" else sqlite_insert
    statement = dialect_insert(AnalyticsRollup)
    statement = statement.on_conflict_do_update(
        index_elements=["organization_id", "dimension", "grain", "slot_start", "value"],
        set_={
            column: rollups.c[column] + statement.excluded[column]
            for column in ("targets", "posts", *RAW_METRICS)
        },
    )
    # Many parameter sets for one compiled statement (sent in batches by the driver).
    await (await session.connection()).execute(statement, rows)


def _lock_key(organization_id: uuid.UUID) -> int:
    digest = hashlib.blake2b(b"analytics:" + organization_id.bytes, digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


async def lock_organization(session: AsyncSession, organization_id: uuid.UUID) -> None:
    """Serialize this transaction's refreshes with other appliers of the organization
    (held until the transaction ends; SQLite's single writer needs no lock)."""
    if dialect_name(session) == "postgresql":
        await session.execute(
            text("SELECT pg_advisory_xact_lock(:key)"), {"key": _lock_key(organization_id)}
        )


async def pending(
    connection: AsyncSession | AsyncConnection, organization_id: uuid.UUID, limit: int
) -> int:
    """How many log entries wait for the organization, counting up to `limit` + 1."""
    found = await connection.execute(
        select(func.count()).select_from(
            select(dirty.c.id)
            .where(dirty.c.organization_id == organization_id)
            .limit(limit + 1)
            .subquery()
        )
    )
    return int(found.scalar_one())


async def apply_log(
    session: AsyncSession,
    organization_id: uuid.UUID,
    *,
    limit: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> int:
    """Apply the organization's log (at most `limit` entries at a time, all if None);
    returns the entries applied. Call inside the caller's transaction."""
    await lock_organization(session, organization_id)
    applied = 0
    while True:
        query = (
            select(dirty.c.id, dirty.c.post_id)
            .where(dirty.c.organization_id == organization_id)
            .order_by(dirty.c.id)
            .limit(_BATCH * 4 if limit is None else min(limit, _BATCH * 4))
        )
        entries = (await session.execute(query)).all()
        if not entries:
            return applied
        await refresh(session, {post_id for _, post_id in entries})
        await session.execute(
            delete(AnalyticsDirty).where(AnalyticsDirty.id.in_([i for i, _ in entries]))
        )
        applied += len(entries)
        if progress is not None:
            progress(len(entries))
        if limit is not None and applied >= limit:
            return applied


async def refresh_recorded(
    session: AsyncSession, organization_ids: Iterable[uuid.UUID], post_ids: Iterable[uuid.UUID]
) -> None:
    """After metric snapshots in this transaction: refresh the posts they touched, and drop
    the log entries of those posts that the refresh covers (its own triggers' entries, and
    those committed before it read; one committed later stays for the next applier)."""
    wanted = sorted(set(post_ids), key=str)
    if not wanted:
        return
    for organization_id in sorted(set(organization_ids), key=str):
        await lock_organization(session, organization_id)
    covered: list[int] = []
    for start in range(0, len(wanted), _BATCH):
        found = await session.execute(
            select(dirty.c.id).where(dirty.c.post_id.in_(wanted[start : start + _BATCH]))
        )
        covered += found.scalars()
    await refresh(session, wanted)
    for start in range(0, len(covered), _BATCH * 4):
        chunk = covered[start : start + _BATCH * 4]
        await session.execute(delete(AnalyticsDirty).where(AnalyticsDirty.id.in_(chunk)))


async def count_posts(session: AsyncSession, organization_id: uuid.UUID) -> int:
    """The organization's posts with a published target (what `rebuild` goes through)."""
    return len(await _published_posts(session, organization_id))


async def _published_posts(session: AsyncSession, organization_id: uuid.UUID) -> list[uuid.UUID]:
    targets = PostTarget.__table__
    found = await session.execute(
        select(targets.c.post_id)
        .where(targets.c.organization_id == organization_id, targets.c.status == "published")
        .distinct()
    )
    return sorted(found.scalars(), key=str)


async def rebuild(
    session: AsyncSession,
    organization_id: uuid.UUID,
    *,
    progress: Callable[[int], object] | None = None,
) -> int:
    """Recompute every report row of the organization from the raw rows; returns the
    number of posts. Its log is emptied: everything it named is recomputed here."""
    await lock_organization(session, organization_id)
    for model in (AnalyticsRollup, AnalyticsFact, AnalyticsPostFact, AnalyticsDirty):
        await session.execute(delete(model).where(model.organization_id == organization_id))
    post_ids = await _published_posts(session, organization_id)
    for start in range(0, len(post_ids), _BATCH):
        batch = post_ids[start : start + _BATCH]
        await _refresh_batch(session, batch)
        if progress is not None:
            progress(len(batch))
    if dialect_name(session) == "postgresql":
        # The tables were just filled in bulk: fresh statistics, so that reports are
        # planned for their real size (autovacuum would get there later).
        await session.execute(
            text("ANALYZE analytics_facts, analytics_post_facts, analytics_rollups")
        )
    return len(post_ids)


async def organizations_with_log(session: AsyncSession) -> list[uuid.UUID]:
    found = await session.execute(select(dirty.c.organization_id).distinct())
    return list(found.scalars())


# Log entries one organization's pass applies in one transaction (a loop of the worker).
APPLY_PER_PASS: Final = 5000


async def apply_waiting_logs(runtime: Runtime) -> bool:
    """A worker loop: apply every organization's log, one transaction each; True when an
    organization has more waiting (the runner calls again at once)."""
    async with unit_of_work(runtime.sessions) as session:
        organizations = await organizations_with_log(session)
    busy = False
    for organization_id in organizations:
        async with unit_of_work(runtime.sessions) as session:
            applied = await apply_log(session, organization_id, limit=APPLY_PER_PASS)
        busy = busy or applied >= APPLY_PER_PASS
    return busy
