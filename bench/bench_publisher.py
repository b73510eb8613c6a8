"""Publisher lateness and throughput vs. the sandbox adapter's own ceiling (issue 3).

On a fresh PostgreSQL database, two `pressroom worker` processes publish through the sandbox
simulator at 50 ms per call:

1. scheduled: 10,000 targets (one per post, over 10 sandbox channels) due at random moments
   within one minute; reports lateness (publishedAt - scheduledAt) p50/p99/max and the
   throughput the workers sustained;
2. burst: 10,000 more targets all due at the same instant; reports how fast the two workers
   drain them (targets per second) and the lateness that queueing causes;
3. ceiling: the same adapter called directly in a loop by this process, with the same total
   concurrency as the two workers (2 x PRESSROOM_PUBLISHER_CONCURRENCY calls in flight) and
   the same connection pool capacity, for the same number of calls.

    uv run python bench/bench_publisher.py [--targets 10000] [--latency-ms 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT
from common import SERVER_KEY
from common import fresh_postgres_database

SECRET = SERVER_KEY


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def setup(database_url: str, data_dir: Path) -> tuple[uuid.UUID, list[uuid.UUID]]:
    from tests.channels.factories import connect_channel
    from tests.factories import make_tenant

    from pressroom.config import Settings
    from pressroom.runtime import Runtime

    runtime = Runtime.build(
        Settings(database_url=database_url, data_dir=data_dir, secret_key=SECRET)
    )
    try:
        tenant = await make_tenant(runtime, name="Bench")
        channels = [await connect_channel(runtime, tenant.organization_id) for _ in range(10)]
        return tenant.organization_id, channels
    finally:
        await runtime.close()


async def queue(
    database_url: str,
    data_dir: Path,
    organization_id: uuid.UUID,
    channels: list[uuid.UUID],
    due: list[datetime],
) -> None:
    """One scheduled post per due time, bulk inserted (post creation is not measured)."""
    from tests.posts.factories import insert_scheduled_posts

    from pressroom.config import Settings
    from pressroom.runtime import Runtime

    runtime = Runtime.build(
        Settings(database_url=database_url, data_dir=data_dir, secret_key=SECRET)
    )
    try:
        await insert_scheduled_posts(runtime, organization_id, channels, due)
    finally:
        await runtime.close()


async def outcome(database_url: str, data_dir: Path, since: datetime) -> dict[str, Any]:
    """Lateness of every target scheduled at or after `since`, and how many are published."""
    from sqlalchemy import select

    from pressroom.config import Settings
    from pressroom.db import unit_of_work
    from pressroom.posts.models import Post
    from pressroom.posts.models import PostTarget
    from pressroom.runtime import Runtime

    runtime = Runtime.build(
        Settings(database_url=database_url, data_dir=data_dir, secret_key=SECRET)
    )
    try:
        async with unit_of_work(runtime.sessions) as session:
            rows = (
                await session.execute(
                    select(Post.scheduled_at, PostTarget.published_at, PostTarget.status)
                    .join(Post, Post.id == PostTarget.post_id)
                    .where(Post.scheduled_at >= since)
                )
            ).all()
    finally:
        await runtime.close()
    published = [(s, p) for s, p, status in rows if status == "published" and p is not None]
    lateness = [(p - s).total_seconds() for s, p in published]
    figures: dict[str, Any] = {"targets": len(rows), "published": len(published)}
    if lateness:
        first_due = min(s for s, _ in published)
        last_published = max(p for _, p in published)
        span = (last_published - first_due).total_seconds()
        figures.update(
            lateness_p50_s=round(percentile(lateness, 0.50), 3),
            lateness_p99_s=round(percentile(lateness, 0.99), 3),
            lateness_max_s=round(max(lateness), 3),
            lateness_min_s=round(min(lateness), 3),
            span_s=round(span, 2),
            throughput_per_s=round(len(published) / span, 1) if span > 0 else None,
        )
    return figures


async def count_published(database_url: str, data_dir: Path, since: datetime) -> int:
    return int((await outcome(database_url, data_dir, since))["published"])


def start_workers(
    count: int, database_url: str, data_dir: Path, latency_ms: float, log_dir: Path
) -> list[subprocess.Popen[bytes]]:
    env = {
        **os.environ,
        "PRESSROOM_DATABASE_URL": database_url,
        "PRESSROOM_DATA_DIR": str(data_dir),
        "PRESSROOM_SECRET_KEY": SECRET,
        "PRESSROOM_SANDBOX_LATENCY_MS": str(latency_ms),
        "PRESSROOM_LOG_LEVEL": "INFO",
    }
    processes = []
    for number in range(count):
        log = open(log_dir / f"publisher-worker-{number}.log", "wb")  # noqa: SIM115
        processes.append(
            subprocess.Popen(
                [sys.executable, "-m", "pressroom", "worker"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
                cwd=ROOT,
            )
        )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        logs = [
            (log_dir / f"publisher-worker-{n}.log").read_text(errors="replace")
            for n in range(count)
        ]
        if all("workers started" in text for text in logs):
            return processes
        time.sleep(0.2)
    raise RuntimeError("workers did not start")


def cpu_seconds(processes: list[subprocess.Popen[bytes]]) -> float:
    """User + system CPU the worker processes have used so far (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for process in processes:
        fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def stop_workers(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        process.wait(timeout=60)


async def ceiling(
    database_url: str, data_dir: Path, calls: int, latency_ms: float, workers: int
) -> dict[str, Any]:
    """The sandbox adapter called directly, `concurrency` calls in flight, no publisher."""
    from pressroom.channels.adapters import adapter_for
    from pressroom.config import Settings
    from pressroom.providers.adapter import ChannelContext
    from pressroom.providers.adapter import PublishRequest
    from pressroom.runtime import Runtime

    defaults = Settings()
    concurrency = workers * defaults.publisher_concurrency
    runtime = Runtime.build(
        Settings(
            database_url=database_url,
            data_dir=data_dir,
            secret_key=SECRET,
            sandbox_latency_ms=latency_ms,
            # The workers' pools together.
            database_pool_size=workers * defaults.database_pool_size,
        )
    )
    channel = ChannelContext(
        id=uuid.uuid4(),
        organization_id=uuid.uuid4(),
        provider="sandbox",
        handle=None,
        simulated=False,
    )
    adapter = adapter_for(channel, runtime)
    semaphore = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with semaphore:
            await adapter.publish(
                PublishRequest(
                    channel=channel,
                    target_id=uuid.uuid4(),
                    content_kind="post",
                    text="ceiling",
                    media=(),
                    options={},
                    idempotency_key=str(uuid.uuid4()),
                )
            )

    try:
        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(calls)))
        elapsed = time.perf_counter() - started
    finally:
        await runtime.close()
    return {
        "calls": calls,
        "concurrency": concurrency,
        "seconds": round(elapsed, 2),
        "throughput_per_s": round(calls / elapsed, 1),
    }


def wait_for(
    database_url: str, data_dir: Path, since: datetime, expected: int, until: float
) -> None:
    while time.monotonic() < until:
        if asyncio.run(count_published(database_url, data_dir, since)) >= expected:
            return
        time.sleep(1.0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--targets", type=int, default=10_000)
    parser.add_argument("--window", type=float, default=60.0, help="seconds the due times span")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--lead", type=float, default=5.0, help="seconds before the first is due")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-burst", action="store_true")
    args = parser.parse_args()
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    sys.path.insert(0, str(ROOT))
    data_dir = results / "publisher-data"
    report: dict[str, Any] = {
        "machine": f"{platform.node()} {os.cpu_count()} cpu, Python {platform.python_version()}",
        "workers": args.workers,
        "sandbox_latency_ms": args.latency_ms,
    }
    with fresh_postgres_database() as database_url:
        organization_id, channels = asyncio.run(setup(database_url, data_dir))
        workers = start_workers(args.workers, database_url, data_dir, args.latency_ms, results)
        try:
            # 1. Due at random moments within the window.
            start = datetime.now(UTC) + timedelta(seconds=args.lead)
            due = sorted(
                start + timedelta(seconds=random.uniform(0, args.window))
                for _ in range(args.targets)
            )
            asyncio.run(queue(database_url, data_dir, organization_id, channels, due))
            cpu = cpu_seconds(workers)
            wait_for(
                database_url,
                data_dir,
                start,
                args.targets,
                time.monotonic() + args.lead + args.window + 120,
            )
            report["scheduled"] = asyncio.run(outcome(database_url, data_dir, start))
            report["scheduled"]["worker_cpu_ms_per_target"] = round(
                (cpu_seconds(workers) - cpu) / args.targets * 1000, 2
            )

            # 2. All due at once.
            if not args.skip_burst:
                burst_at = datetime.now(UTC) + timedelta(seconds=args.lead)
                burst = [burst_at] * args.targets
                asyncio.run(queue(database_url, data_dir, organization_id, channels, burst))
                cpu = cpu_seconds(workers)
                wait_for(
                    database_url,
                    data_dir,
                    burst_at,
                    args.targets,
                    time.monotonic() + args.lead + 300,
                )
                report["burst"] = asyncio.run(outcome(database_url, data_dir, burst_at))
                report["burst"]["worker_cpu_ms_per_target"] = round(
                    (cpu_seconds(workers) - cpu) / args.targets * 1000, 2
                )
        finally:
            stop_workers(workers)
        # 3. The adapter alone.
        report["ceiling"] = asyncio.run(
            ceiling(database_url, data_dir, args.targets, args.latency_ms, args.workers)
        )
    burst = report.get("burst", {}).get("throughput_per_s") or 0
    report["burst_vs_ceiling"] = round(burst / report["ceiling"]["throughput_per_s"], 3)
    report["p99_target_met"] = report["scheduled"].get("lateness_p99_s", 1e9) < 2.0
    text = json.dumps(report, indent=2)
    (results / "publisher.json").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
