"""getAnalytics over 200,000 published targets vs. the same aggregates in one hand-written
SQL statement (issue 6).

Loads one organization's year of history into a fresh PostgreSQL database with COPY:
100,000 posts with 200,000 published targets on 12 channels of ten providers, each target
with 8 metrics (its latest values and one snapshot), campaign tags and topics. Then:

- the API: Pressroom under uvicorn (one process, pinned to CPU 0), one client sending a
  90-day query with its previous-period comparison, every breakdown and page 1 of posts
  (timezone Europe/Berlin, weekly buckets), sequentially; p50 and p95 latency;
- the floor: the same aggregates as one hand-written PostgreSQL statement, run directly
  through asyncpg in the same run, interleaved with the API rounds; p50 and p95.

Targets (issue 20): API p95 under 300 ms and at most 15% of the raw-scan statement's p95.

    uv run python bench/bench_analytics.py [--requests 60] [--targets 200000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import statistics
import sys
import time
import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT
from common import SERVER_KEY
from common import free_port
from common import fresh_database
from common import server

# (provider, content kinds) of the 12 channels.
CHANNELS = [
    ("x", ["post"]),
    ("x", ["post"]),
    ("linkedin", ["post"]),
    ("facebook", ["post", "reel", "story"]),
    ("instagram", ["post", "reel", "story", "carousel"]),
    ("instagram", ["post", "reel", "carousel"]),
    ("threads", ["post"]),
    ("bluesky", ["post"]),
    ("mastodon", ["post"]),
    ("tiktok", ["video"]),
    ("youtube", ["video", "short"]),
    ("sandbox", ["post"]),
]
CAMPAIGNS = [f"campaign-{i:02d}" for i in range(40)]
TOPICS = [f"topic-{i:02d}" for i in range(30)]
MODELS = [None, None, "gpt-5", "claude-sonnet-4.5", "gemini-2.5-pro"]
APPROVALS = ["not_required", "not_required", "approved", "rejected"]
RAW = ["impressions", "reach", "views", "likes", "comments", "shares", "saves", "clicks"]
HISTORY_DAYS = 365
TIMEZONE = "Europe/Berlin"


def uuid7_at(moment: datetime, rng: random.Random) -> uuid.UUID:
    """A UUIDv7 for a time in the past (ids of history are as old as the history)."""
    millis = int(moment.timestamp() * 1000)
    value = (millis << 80) | (0x7 << 76) | (rng.getrandbits(12) << 64)
    value |= (0b10 << 62) | rng.getrandbits(62)
    return uuid.UUID(int=value)


CHANNEL_COLUMNS = [
    "id", "organization_id", "provider", "name", "handle", "simulated",
    "health_state", "connected_at", "created_at", "updated_at", "health_checked_at",
]  # fmt: skip


def generate(organization_id: uuid.UUID, targets: int) -> list[tuple[str, list[Any], list[str]]]:
    """The organization's year of history: (table, rows, columns), channels first."""
    rng = random.Random(6)
    now = datetime.now(UTC)
    channel_rows, channel_kinds = [], []
    for index, (provider, kinds) in enumerate(CHANNELS):
        channel_id = uuid7_at(now - timedelta(days=HISTORY_DAYS + 1), rng)
        channel_rows.append(
            (
                channel_id, organization_id, provider, f"{provider} {index}", f"h{index}",
                False, "healthy", now, now, now, now,
            )
        )  # fmt: skip
        channel_kinds.append((channel_id, provider, kinds))
    post_rows, tag_rows, topic_rows, target_rows, metric_rows, snapshot_rows = (
        [], [], [], [], [], []
    )  # fmt: skip
    made = 0
    while made < targets:
        published = now - timedelta(seconds=rng.uniform(0, HISTORY_DAYS * 86400))
        post_id = uuid7_at(published, rng)
        approval = rng.choice(APPROVALS)
        post_rows.append(
            (
                post_id, organization_id, "text", '{"ids": []}', "published",
                rng.choice(MODELS), approval != "not_required", approval, published,
                published, published,
            )
        )  # fmt: skip
        for position, tag in enumerate(rng.sample(CAMPAIGNS, rng.choice([0, 1, 1, 2, 3]))):
            tag_rows.append((post_id, tag, organization_id, position))
        for position, topic in enumerate(rng.sample(TOPICS, rng.choice([0, 1, 2]))):
            topic_rows.append((post_id, topic, organization_id, position))
        fan_out = min(targets - made, rng.choice([1, 2, 2, 3]))
        for channel_id, provider, kinds in rng.sample(channel_kinds, fan_out):
            target_id = uuid7_at(published, rng)
            at = published + timedelta(seconds=rng.uniform(0, 5))
            target_rows.append(
                (
                    target_id, organization_id, post_id, channel_id, provider,
                    rng.choice(kinds), "{}", "published", at, f"p{made}", 1, 1, at, at,
                )
            )  # fmt: skip
            impressions = int(rng.lognormvariate(7, 1.2))
            values = [
                impressions,
                int(impressions * rng.uniform(0.5, 0.9)),
                int(impressions * rng.uniform(0.2, 0.7)),
                int(impressions * rng.uniform(0.01, 0.08)),
                int(impressions * rng.uniform(0.0, 0.01)),
                int(impressions * rng.uniform(0.0, 0.01)),
                int(impressions * rng.uniform(0.0, 0.01)),
                int(impressions * rng.uniform(0.0, 0.03)),
            ]
            captured = min(now, at + timedelta(days=30))
            metric_rows.append((target_id, organization_id, at, captured, *values))
            snapshot_rows.append(
                (
                    uuid7_at(captured, rng),
                    organization_id,
                    target_id,
                    captured,
                    "import",
                    *values,
                )
            )
            made += 1
    tables = [
        ("posts", post_rows, [
            "id", "organization_id", "text", "media_ids", "status", "model",
            "approval_required", "approval_status", "first_published_at", "created_at",
            "updated_at",
        ]),
        ("post_tags", tag_rows, ["post_id", "value", "organization_id", "position"]),
        ("post_topics", topic_rows, ["post_id", "value", "organization_id", "position"]),
        ("post_targets", target_rows, [
            "id", "organization_id", "post_id", "channel_id", "provider", "content_kind",
            "options", "status", "published_at", "provider_post_id", "attempts",
            "schedule_version", "created_at", "updated_at",
        ]),
        ("target_metrics", metric_rows, [
            "target_id", "organization_id", "published_at", "captured_at", *RAW,
        ]),
        ("metric_snapshots", snapshot_rows, [
            "id", "organization_id", "target_id", "captured_at", "source", *RAW,
        ]),
    ]  # fmt: skip
    return [("channels", channel_rows, CHANNEL_COLUMNS), *tables]


def counts_of(tables: list[tuple[str, list[Any], list[str]]]) -> dict[str, int]:
    count = {table: len(rows) for table, rows, _ in tables}
    return {
        "posts": count["posts"],
        "targets": count["post_targets"],
        "tags": count["post_tags"],
        "topics": count["post_topics"],
    }


def load_sqlite(database_url: str, organization_id: uuid.UUID, targets: int) -> dict[str, Any]:
    """The same history written into the embedded SQLite database through SQLAlchemy (its
    triggers append every post to the rollups' log; the rebuild then empties it)."""
    from sqlalchemy import create_engine
    from sqlalchemy import insert

    import pressroom.tables  # noqa: F401  (every table in the metadata)
    from pressroom.db import Base

    started = time.perf_counter()
    tables = generate(organization_id, targets)
    generated = time.perf_counter() - started
    engine = create_engine(database_url)
    json_columns = {"options", "media_ids"}
    try:
        with engine.begin() as connection:
            for table, rows, columns in tables:
                records = [
                    {
                        column: json.loads(value) if column in json_columns else value
                        for column, value in zip(columns, row, strict=True)
                    }
                    for row in rows
                ]
                connection.execute(insert(Base.metadata.tables[table]), records)
            connection.exec_driver_sql("ANALYZE")
    finally:
        engine.dispose()
    return {
        **counts_of(tables[1:]),
        "load_seconds": round(time.perf_counter() - started, 2),
        "generate_seconds": round(generated, 2),
    }


async def load(database_url: str, organization_id: uuid.UUID, targets: int) -> dict[str, Any]:
    """COPY the history in; returns counts and seconds taken."""
    import asyncpg

    connection = await asyncpg.connect(database_url)
    # The rows are consistent by construction: skip the per-row foreign-key triggers, as a
    # restore does (pg_restore --disable-triggers).
    await connection.execute("SET session_replication_role = replica")
    started = time.perf_counter()
    try:
        generated_tables = generate(organization_id, targets)
        tables = generated_tables[1:]
        await connection.copy_records_to_table(
            "channels", records=generated_tables[0][1], columns=CHANNEL_COLUMNS
        )
        generated = time.perf_counter() - started
        # Secondary indexes are built once after the COPY rather than row by row during it
        # (as pg_restore does); primary keys stay, so duplicates would still be refused.
        names = [table for table, _, _ in tables]
        secondary = await connection.fetch(
            """SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS ddl
               FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
               WHERE c.relname = ANY($1::text[]) AND NOT i.indisprimary AND NOT i.indisunique""",
            names,
        )
        for index in secondary:
            await connection.execute(f'DROP INDEX "{index["name"]}"')
        copied = {}
        for table, rows, columns in tables:
            began = time.perf_counter()
            await connection.copy_records_to_table(table, records=rows, columns=columns)
            copied[table] = round(time.perf_counter() - began, 2)
        began = time.perf_counter()
        for index in secondary:
            await connection.execute(index["ddl"])
        copied["secondary indexes"] = round(time.perf_counter() - began, 2)
        loaded = time.perf_counter() - started
        # What autovacuum does to a table that just grew: statistics and the visibility map.
        await connection.execute("VACUUM ANALYZE")
        return {
            **counts_of(tables),
            "load_seconds": round(loaded, 2),
            "generate_seconds": round(generated, 2),
            "copy_seconds": copied,
            "vacuum_analyze_seconds": round(time.perf_counter() - started - loaded, 2),
        }
    finally:
        await connection.close()


def floor_statement() -> str:
    """The same aggregates as the API computes, written by hand for PostgreSQL only: the
    targets of both ranges once (weekly buckets by `date_trunc` in the timezone, no bucket
    table), then every section from them, and page 1 of posts by publishedAt. (A variant
    with GROUPING SETS measured slower on this machine.)"""
    metrics = ", ".join(f"coalesce(m.{m}, 0) AS {m}" for m in RAW)
    sums = ", ".join(f"sum({m}) AS {m}" for m in RAW)
    zeros = ", ".join("0" for _ in RAW)
    return f"""
    WITH base AS MATERIALIZED (
        SELECT 0 AS prev, t.post_id, t.channel_id, t.content_kind, t.published_at,
               date_trunc('week', t.published_at AT TIME ZONE $6) AS bucket, {metrics}
        FROM post_targets t
        LEFT JOIN target_metrics m ON m.target_id = t.id AND m.organization_id = $1
             AND m.published_at BETWEEN $2 AND $3
        WHERE t.organization_id = $1 AND t.status = 'published'
          AND t.published_at BETWEEN $2 AND $3
          AND NOT EXISTS (SELECT 1 FROM posts d WHERE d.id = t.post_id AND d.deleted_at IS NOT NULL)
        UNION ALL
        SELECT 1, t.post_id, t.channel_id, t.content_kind, t.published_at, NULL, {metrics}
        FROM post_targets t
        LEFT JOIN target_metrics m ON m.target_id = t.id AND m.organization_id = $1
             AND m.published_at BETWEEN $4 AND $5
        WHERE t.organization_id = $1 AND t.status = 'published'
          AND t.published_at BETWEEN $4 AND $5
          AND NOT EXISTS (SELECT 1 FROM posts d WHERE d.id = t.post_id AND d.deleted_at IS NOT NULL)
    ),
    cells AS MATERIALIZED (
        SELECT prev, bucket, channel_id, content_kind, {sums}
        FROM base GROUP BY prev, bucket, channel_id, content_kind
    ),
    per_post AS MATERIALIZED (
        SELECT prev, post_id, min(published_at) AS first_at, {sums}
        FROM base GROUP BY prev, post_id
    ),
    dims AS MATERIALIZED (
        SELECT pp.prev, p.model, p.approval_status, count(*) AS posts,
               {", ".join(f"sum(pp.{m}) AS {m}" for m in RAW)}
        FROM per_post pp JOIN posts p ON p.id = pp.post_id AND p.organization_id = $1
        GROUP BY pp.prev, p.model, p.approval_status
    )
    SELECT 'timeseries', prev, bucket::text, NULL::bigint, NULL::timestamptz, {sums}
      FROM cells WHERE prev = 0 GROUP BY prev, bucket
    UNION ALL SELECT 'channels', prev, channel_id::text, NULL, NULL, {sums}
      FROM cells GROUP BY prev, channel_id
    UNION ALL SELECT 'contentKinds', prev, content_kind, NULL, NULL, {sums}
      FROM cells GROUP BY prev, content_kind
    UNION ALL SELECT 'channelPosts', prev, channel_id::text, count(*), NULL, {zeros}
      FROM (SELECT DISTINCT prev, channel_id, post_id FROM base) x GROUP BY prev, channel_id
    UNION ALL SELECT 'kindPosts', prev, content_kind, count(*), NULL, {zeros}
      FROM (SELECT DISTINCT prev, content_kind, post_id FROM base) x GROUP BY prev, content_kind
    UNION ALL SELECT 'totals', prev, NULL, sum(posts), NULL, {sums} FROM dims GROUP BY prev
    UNION ALL SELECT 'models', prev, model, sum(posts), NULL, {sums} FROM dims GROUP BY prev, model
    UNION ALL SELECT 'approvals', prev, approval_status, sum(posts), NULL, {sums}
      FROM dims GROUP BY prev, approval_status
    UNION ALL SELECT 'campaigns', pp.prev, g.value, count(*), NULL,
           {", ".join(f"sum(pp.{m})" for m in RAW)}
      FROM per_post pp JOIN post_tags g ON g.post_id = pp.post_id AND g.organization_id = $1
      GROUP BY pp.prev, g.value
    UNION ALL SELECT 'topics', pp.prev, g.value, count(*), NULL,
           {", ".join(f"sum(pp.{m})" for m in RAW)}
      FROM per_post pp JOIN post_topics g ON g.post_id = pp.post_id AND g.organization_id = $1
      GROUP BY pp.prev, g.value
    UNION ALL (SELECT 'page', prev, post_id::text, NULL, first_at, {", ".join(RAW)}
      FROM per_post WHERE prev = 0 ORDER BY first_at DESC, post_id DESC LIMIT 25)
    """


# What the API sets for its report transaction (analytics/query.py), set here for the floor
# too, so both run under the same planner settings.
FLOOR_SETTINGS = "SET work_mem = '64MB'; SET jit = off"


class Floor:
    """One connection and one prepared statement, as a tuned client would hold them."""

    def __init__(self, database_url: str, args: tuple[Any, ...]) -> None:
        self.database_url = database_url
        self.args = args

    async def __aenter__(self) -> Floor:
        import asyncpg

        self.connection = await asyncpg.connect(self.database_url)
        await self.connection.execute(FLOOR_SETTINGS)
        self.statement = await self.connection.prepare(floor_statement())
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.connection.close()

    async def once(self) -> tuple[float, int]:
        started = time.perf_counter()
        rows = await self.statement.fetch(*self.args)
        return time.perf_counter() - started, len(rows)


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes so far (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / tick


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def figures(seconds: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(seconds, 0.5) * 1000, 1),
        "p95_ms": round(percentile(seconds, 0.95) * 1000, 1),
        "mean_ms": round(statistics.fmean(seconds) * 1000, 1),
    }


async def make_tenant(database_url: str, data_dir: Path) -> tuple[uuid.UUID, str]:
    from tests.factories import make_tenant as make

    from pressroom.config import Settings
    from pressroom.runtime import Runtime

    runtime = Runtime.build(
        Settings(database_url=database_url, data_dir=data_dir, secret_key=SERVER_KEY)
    )
    try:
        tenant = await make(runtime, name="Bench analytics")
        return tenant.organization_id, tenant.key
    finally:
        await runtime.close()


def _runtime(database_url: str, data_dir: Path) -> Any:
    from pressroom.config import Settings
    from pressroom.runtime import Runtime

    return Runtime.build(
        Settings(database_url=database_url, data_dir=data_dir, secret_key=SERVER_KEY)
    )


async def rebuild_rollups(database_url: str, data_dir: Path, organization_id: uuid.UUID) -> float:
    from pressroom.analytics.rollups import rebuild
    from pressroom.db import unit_of_work

    runtime = _runtime(database_url, data_dir)
    try:
        started = time.perf_counter()
        async with unit_of_work(runtime.sessions) as session:
            await rebuild(session, organization_id)
        return round(time.perf_counter() - started, 2)
    finally:
        await runtime.close()


async def ingest_cost(
    database_url: str, data_dir: Path, organization_id: uuid.UUID, batches: int = 20
) -> dict[str, Any]:
    """Metric snapshots recorded as the poller records them (batches of 100 targets, one
    transaction each), with the rollups kept in the same transaction and without (the
    refresh skipped; the triggers still append their log entries). Median ms per batch."""
    from sqlalchemy import select

    from pressroom.analytics import recording
    from pressroom.analytics.models import TargetMetrics
    from pressroom.analytics.recording import Observation
    from pressroom.analytics.recording import record
    from pressroom.db import unit_of_work

    runtime = _runtime(database_url, data_dir)
    keep = recording.refresh_recorded

    async def skip(*_: Any) -> None:
        return None

    try:
        async with runtime.sessions() as session:
            rows = (
                await session.execute(
                    select(TargetMetrics.target_id, TargetMetrics.published_at)
                    .where(TargetMetrics.organization_id == organization_id)
                    .limit(batches * 2 * 100)
                )
            ).all()
        timings: dict[str, list[float]] = {"with_rollups": [], "without_rollups": []}
        for index in range(batches * 2):
            chunk = rows[index * 100 : (index + 1) * 100]
            variant = "with_rollups" if index % 2 == 0 else "without_rollups"
            recording.refresh_recorded = keep if variant == "with_rollups" else skip  # type: ignore[assignment]
            captured = datetime.now(UTC)
            started = time.perf_counter()
            async with unit_of_work(runtime.sessions) as session:
                await record(
                    session,
                    [
                        Observation(organization_id, target_id, published, captured,
                                    {"impressions": 1000 + index, "likes": 7}, "poller")
                        for target_id, published in chunk
                    ],
                )  # fmt: skip
            timings[variant].append(time.perf_counter() - started)
        recording.refresh_recorded = keep
        # What the skipped refreshes left in the log: applied now, as a report would.
        from pressroom.analytics.rollups import apply_log

        async with unit_of_work(runtime.sessions) as session:
            await apply_log(session, organization_id)
        medians = {k: round(statistics.median(v) * 1000, 1) for k, v in timings.items()}
        return {
            "batch_targets": 100,
            "batches_each": batches,
            "median_ms_per_batch": medians,
            "ratio_with_over_without": round(
                medians["with_rollups"] / medians["without_rollups"], 2
            ),
        }
    finally:
        recording.refresh_recorded = keep
        await runtime.close()


class RawStatement:
    """The raw-scan statement the API runs without rollups (analytics/query.py), run
    directly on the database under the report's own transaction settings: SQLite's
    baseline (the embedded database has no hand-written floor) and, on both databases,
    the baseline of the filtered queries."""

    def __init__(
        self,
        database_url: str,
        organization_id: uuid.UUID,
        params: dict[str, str],
        filters: dict[str, tuple[Any, ...]] | None = None,
    ):
        self.database_url = database_url
        self.organization_id = organization_id
        self.params = params
        self.filters = filters or {}

    async def __aenter__(self) -> RawStatement:
        from zoneinfo import ZoneInfo

        from sqlalchemy.ext.asyncio import create_async_engine

        from pressroom.analytics.buckets import buckets_for
        from pressroom.analytics.buckets import resolve_grouping
        from pressroom.analytics.comparison import TimeRange
        from pressroom.analytics.comparison import comparison_for
        from pressroom.analytics.params import AnalyticsQuery
        from pressroom.db import async_url

        zone = ZoneInfo(TIMEZONE)
        current = TimeRange(
            datetime.fromisoformat(self.params["start"]),
            datetime.fromisoformat(self.params["end"]),
        )
        unit = resolve_grouping("auto", current)
        self.query = AnalyticsQuery(
            range=current, timezone=TIMEZONE, zone=zone, group_by=unit,
            buckets=tuple(buckets_for(current, zone, unit)),
            comparison=comparison_for("previous_period", current, zone),
            channel_ids=tuple(self.filters.get("channel_ids", ())),
            tag_values=tuple(self.filters.get("tag_values", ())),
            content_kinds=tuple(self.filters.get("content_kinds", ())),
            metrics=("impressions", "reach", "views", "likes", "comments", "shares", "saves",
                     "clicks", "engagements", "engagementRate"),
            sort_by="publishedAt", sort_order="desc", page=1, page_size=25,
        )  # fmt: skip
        self.engine = create_async_engine(async_url(self.database_url))
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.engine.dispose()

    async def once(self) -> tuple[float, int]:
        from pressroom.analytics.query import REPORT_SETTINGS
        from pressroom.analytics.query import run_aggregates

        started = time.perf_counter()
        async with self.engine.connect() as connection, connection.begin():
            if connection.dialect.name == "postgresql":
                await connection.execute(REPORT_SETTINGS)
            rows = await run_aggregates(connection, self.organization_id, self.query)
        return time.perf_counter() - started, len(rows)


async def filter_values(database_url: str) -> dict[str, dict[str, tuple[Any, ...]]]:
    """The filtered queries measured besides the benchmark's query: one channel; two
    campaign tags; two channels and one content kind."""
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    from pressroom.db import async_url

    engine = create_async_engine(async_url(database_url))
    try:
        async with engine.connect() as connection:
            rows = (await connection.execute(text("SELECT id, name FROM channels"))).all()
    finally:
        await engine.dispose()
    by_name = {name: uuid.UUID(str(channel_id)) for channel_id, name in rows}
    return {
        "one channel": {"channel_ids": (by_name["x 0"],)},
        "two campaigns": {"tag_values": ("campaign-00", "campaign-01")},
        "two channels, one kind": {
            "channel_ids": (by_name["instagram 4"], by_name["instagram 5"]),
            "content_kinds": ("reel",),
        },
    }


def filter_params(filters: dict[str, tuple[Any, ...]]) -> dict[str, str]:
    names = {
        "channel_ids": "channelIds",
        "tag_values": "tagValues",
        "content_kinds": "contentKinds",
    }
    return {names[key]: ",".join(str(v) for v in values) for key, values in filters.items()}


def run(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """Load, rebuild, measure the API against the raw-scan statement on one database."""
    data_dir = ROOT / "bench" / "results" / f"analytics-data-{kind}"
    with fresh_database(kind) as database_url:
        organization_id, key = asyncio.run(make_tenant(database_url, data_dir))
        if kind == "postgres":
            loaded = asyncio.run(load(database_url, organization_id, args.targets))
        else:
            loaded = load_sqlite(database_url, organization_id, args.targets)
        print(json.dumps({"database": kind, "loaded": loaded}), flush=True)
        # The rows were written in bulk (on PostgreSQL with the triggers off, as a restore
        # does): build the rollups as `pressroom analytics rebuild` does.
        loaded["rebuild_seconds"] = asyncio.run(
            rebuild_rollups(database_url, data_dir, organization_id)
        )
        print(json.dumps({"rebuild_seconds": loaded["rebuild_seconds"]}), flush=True)
        loaded["ingest"] = asyncio.run(ingest_cost(database_url, data_dir, organization_id))
        print(json.dumps({"ingest": loaded["ingest"]}), flush=True)
        end = datetime.now(UTC).replace(microsecond=0)
        start = end - timedelta(days=90)
        previous_end = start - timedelta(seconds=1)
        previous_start = previous_end - (end - start)
        params = {"start": start.isoformat(), "end": end.isoformat(), "timezone": TIMEZONE}
        floor_args = (organization_id, start, end, previous_start, previous_end, TIMEZONE)
        env = {
            "PRESSROOM_DATABASE_URL": database_url,
            "PRESSROOM_DATA_DIR": str(data_dir),
            "PRESSROOM_SECRET_KEY": SERVER_KEY,
            "PRESSROOM_RATE_LIMIT": "100000000/60",
        }
        port = free_port()
        api: list[float] = []
        floor: list[float] = []
        api_cpu: list[float] = []
        body: dict[str, Any] = {}
        filtered: dict[str, Any] = {}
        with server(["--factory", "pressroom.app:create_app"], port, env, "/healthz") as process:
            url = f"http://127.0.0.1:{port}/api/v1/analytics"
            headers = {"Authorization": f"Bearer {key}"}

            async def measure() -> None:
                nonlocal body
                direct: Floor | RawStatement = (
                    Floor(database_url, floor_args)
                    if kind == "postgres"
                    else RawStatement(database_url, organization_id, params)
                )
                async with httpx.AsyncClient(headers=headers, timeout=60) as client, direct:
                    for _ in range(3):  # warm-up: connection pools, caches, plans
                        (await client.get(url, params=params)).raise_for_status()
                        await direct.once()
                    # Interleaved, so drift in the machine's speed hits both alike.
                    for _ in range(args.requests):
                        spent = cpu_seconds([process.pid])
                        started = time.perf_counter()
                        response = await client.get(url, params=params)
                        api.append(time.perf_counter() - started)
                        api_cpu.append(cpu_seconds([process.pid]) - spent)
                        response.raise_for_status()
                        body = response.json()
                        floor.append((await direct.once())[0])
                    # The filtered queries, each against the raw statement with its filters.
                    for name, chosen in (await filter_values(database_url)).items():
                        raw = RawStatement(database_url, organization_id, params, chosen)
                        asked = {**params, **filter_params(chosen)}
                        times: dict[str, list[float]] = {"api": [], "raw": []}
                        async with raw:
                            for round_ in range(2 + args.filtered_requests):
                                started = time.perf_counter()
                                response = await client.get(url, params=asked)
                                spent_api = time.perf_counter() - started
                                response.raise_for_status()
                                spent_raw = (await raw.once())[0]
                                if round_ >= 2:  # the first two warm up
                                    times["api"].append(spent_api)
                                    times["raw"].append(spent_raw)
                        api_f, raw_f = figures(times["api"]), figures(times["raw"])
                        filtered[name] = {
                            "params": filter_params(chosen),
                            "posts_in_range": response.json()["posts"]["totalItems"],
                            "api": api_f,
                            "raw_scan_statement": raw_f,
                            "p95_ratio_api_over_raw_scan": round(
                                api_f["p95_ms"] / raw_f["p95_ms"], 3
                            ),
                        }
                        print(json.dumps({"filtered": {name: filtered[name]}}), flush=True)

            asyncio.run(measure())
    api_figures, floor_figures = figures(api), figures(floor)
    ratio = api_figures["p95_ms"] / floor_figures["p95_ms"]
    return {
        "database": kind,
        "data": loaded,
        "query": {**params, "comparison": "previous_period", "groupBy": "auto (week)"},
        "requests": args.requests,
        "api": api_figures,
        "raw_scan_statement": floor_figures,
        "p95_ratio_api_over_raw_scan": round(ratio, 3),
        # CPU time of the server process per request (not its database's).
        "api_process_cpu_ms_median": round(statistics.median(api_cpu) * 1000, 1),
        "posts_in_range": body.get("posts", {}).get("totalItems"),
        "filtered": filtered,
        "targets": {
            "p95 < 300 ms": api_figures["p95_ms"] < 300,
            "p95 at most 15% of the raw-scan statement": ratio <= 0.15,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--targets", type=int, default=200_000)
    parser.add_argument("--filtered-requests", type=int, default=10)
    parser.add_argument("--database", choices=["postgres", "sqlite", "both"], default="both")
    args = parser.parse_args()
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    sys.path.insert(0, str(ROOT))
    kinds = ["postgres", "sqlite"] if args.database == "both" else [args.database]
    summary = {
        "machine": f"{platform.machine()}, {platform.python_version()}, {os.cpu_count()} CPUs",
        "load_average_at_start": os.getloadavg(),
        "runs": [],
    }
    for kind in kinds:
        summary["runs"].append(result := run(kind, args))
        print(json.dumps(result), flush=True)
    (ROOT / "bench" / "results" / "analytics.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
