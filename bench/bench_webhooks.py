"""Webhook delivery: one worker process's throughput against a bare httpx client (the ceiling),
and event-to-first-attempt latency at a steady event rate (issue: webhooks).

On a fresh PostgreSQL database, with a TLS receiver (uvicorn, TLS, pinned to CPU 0):

1. Ceiling: `bench/webhook_ceiling.py` (pinned to CPU 1) posts `--events` signed requests with
   the same body and `IN_FLIGHT_PER_ENDPOINT` requests in flight, over keep-alive HTTP/1.1.
2. Worker: `--events` events are queued for one endpoint, then one `pressroom worker` process
   (pinned to CPU 1) delivers them through the production path (claim, lease, sign, DNS
   vetting with PRESSROOM_WEBHOOK_RESOLVE, pinned TLS connection, record). Throughput is the
   deliveries divided by the time from the first attempt's start to the last record.
3. Latency: with that worker idle, events are emitted one per transaction at `--rate` per
   second for `--seconds` (the rate achieved is reported; below 95% of it the latency target
   does not count as met); latency is each event's first attempt start minus its creation.

The ceiling runs before and after the worker; the mean of the two is the baseline.

    uv run python bench/bench_webhooks.py [--events 5000] [--rate 200] [--seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT
from common import SERVER_KEY
from common import free_port
from common import fresh_postgres_database
from common import pin
from common import tls_files

SECRET_KEY = SERVER_KEY
HOST = "bench.example.com"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def start_receiver(port: int, cert: Path, key: Path, log: Path) -> subprocess.Popen[bytes]:
    command = [
        *pin(0),
        sys.executable,
        "-m",
        "uvicorn",
        "bench.webhook_receiver:app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--ssl-certfile",
        str(cert),
        "--ssl-keyfile",
        str(key),
        "--loop",
        "uvloop",
        "--http",
        "httptools",
        "--no-access-log",
        "--log-level",
        "warning",
    ]
    handle = open(log, "wb")  # noqa: SIM115
    return subprocess.Popen(command, stdout=handle, stderr=handle, cwd=ROOT)


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as handle:
        return subprocess.Popen(
            [*pin(1), sys.executable, "-m", "pressroom", "worker"],
            env=env,
            stdout=handle,
            stderr=handle,
            cwd=ROOT,
        )


def wait_for_receiver(url: str, ca: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.post(url, content=b"{}", verify=str(ca), timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the receiver did not start")


def run_ceiling(
    url: str, ca: Path, body: Path, requests: int, concurrency: int
) -> dict[str, object]:
    out = subprocess.run(
        [
            *pin(1),
            sys.executable,
            str(ROOT / "bench" / "webhook_ceiling.py"),
            "--url",
            url,
            "--ca",
            str(ca),
            "--body",
            str(body),
            "--requests",
            str(requests),
            "--concurrency",
            str(concurrency),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)  # type: ignore[no-any-return]


async def setup(runtime: object, url: str) -> tuple[object, object]:
    from tests.factories import make_tenant

    from pressroom.db import unit_of_work
    from pressroom.webhooks import service
    from pressroom.webhooks.schemas import WebhookEndpointCreate

    tenant = await make_tenant(runtime, name="Bench")  # type: ignore[arg-type]
    async with unit_of_work(runtime.sessions) as session:  # type: ignore[attr-defined]
        issued = await service.create_endpoint(
            session,
            runtime,  # type: ignore[arg-type]
            tenant.organization_id,
            WebhookEndpointCreate(url=url, events=["post.published.v1"]),
        )
    return tenant, issued.endpoint.id


def post_data(n: int) -> dict[str, object]:
    """A post.published.v1 payload of a realistic size (about 1 KB)."""
    return {
        "post": {
            "id": f"00000000-0000-7000-8000-{n:012d}",
            "status": "published",
            "text": "Spring launch: our new pricing is live. " * 8,
            "tags": ["spring-launch"],
            "topics": ["pricing"],
            "targets": [{"channelId": "c", "provider": "bluesky", "status": "published"}],
        },
        "targetId": "t",
    }


async def emit_many(runtime: object, organization_id: object, count: int, batch: int = 500) -> None:
    from pressroom.db import unit_of_work
    from pressroom.webhooks.outbox import emit_event

    for start in range(0, count, batch):
        async with unit_of_work(runtime.sessions) as session:  # type: ignore[attr-defined]
            for n in range(start, min(count, start + batch)):
                await emit_event(
                    session,
                    runtime.notifier,  # type: ignore[attr-defined]
                    organization_id=organization_id,  # type: ignore[arg-type]
                    event_type="post.published.v1",
                    data=post_data(n),
                    retention_seconds=3600,
                )


async def emit_steadily(
    runtime: object, organization_id: object, rate: float, seconds: float
) -> tuple[int, float]:
    """Emit `rate` events per second for `seconds`, one per transaction, on a fixed schedule;
    (events emitted, seconds it took). Each event is its own task started on time (at most 16
    transactions in flight), so one slow commit does not delay the events behind it. Taking
    longer means the rate was not held."""
    from pressroom.db import unit_of_work
    from pressroom.webhooks.outbox import emit_event

    count = int(rate * seconds)
    in_flight = asyncio.Semaphore(16)

    async def one(n: int) -> None:
        sessions = runtime.sessions  # type: ignore[attr-defined]
        async with in_flight, unit_of_work(sessions) as session:
            await emit_event(
                session,
                runtime.notifier,  # type: ignore[attr-defined]
                organization_id=organization_id,  # type: ignore[arg-type]
                event_type="post.published.v1",
                data=post_data(n),
                retention_seconds=3600,
            )

    started = time.monotonic()
    tasks = []
    for n in range(count):
        delay = started + n / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(n)))
    await asyncio.gather(*tasks)
    return count, time.monotonic() - started


async def succeeded(runtime: object, endpoint_id: object) -> int:
    from pressroom.db import unit_of_work
    from pressroom.webhooks.models import Delivery

    async with unit_of_work(runtime.sessions) as session:  # type: ignore[attr-defined]
        return int(
            await session.scalar(
                select(func.count()).where(
                    Delivery.endpoint_id == endpoint_id, Delivery.status == "succeeded"
                )
            )
            or 0
        )


async def wait_until_succeeded(runtime: object, endpoint_id: object, count: int) -> None:
    deadline = time.monotonic() + 600
    while await succeeded(runtime, endpoint_id) < count:
        if time.monotonic() > deadline:
            raise RuntimeError("the worker did not deliver everything within 10 minutes")
        await asyncio.sleep(0.05)


async def throughput(runtime: object, endpoint_id: object) -> tuple[float, float]:
    """(deliveries per second, seconds) from the first attempt's start to the last record."""
    from pressroom.db import unit_of_work

    async with unit_of_work(runtime.sessions) as session:  # type: ignore[attr-defined]
        row = (
            await session.execute(
                text(
                    "SELECT count(*) AS n, min(a.started_at) AS first, max(d.updated_at) AS last "
                    "FROM webhook_deliveries d JOIN webhook_delivery_attempts a "
                    "ON a.delivery_id = d.id WHERE d.endpoint_id = :e"
                ),
                {"e": endpoint_id},
            )
        ).one()
    seconds = (row.last - row.first).total_seconds()
    return row.n / seconds, seconds


async def latencies(runtime: object, endpoint_id: object, since: object) -> list[float]:
    from pressroom.db import unit_of_work

    async with unit_of_work(runtime.sessions) as session:  # type: ignore[attr-defined]
        rows = await session.execute(
            text(
                "SELECT extract(epoch FROM a.started_at - e.created_at) * 1000 AS ms "
                "FROM webhook_deliveries d JOIN events e ON e.id = d.event_id "
                "JOIN webhook_delivery_attempts a ON a.delivery_id = d.id AND a.number = 1 "
                "WHERE d.endpoint_id = :e AND e.created_at >= :since"
            ),
            {"e": endpoint_id, "since": since},
        )
        return [float(row.ms) for row in rows]


async def hold(runtime: object, endpoint_id: object) -> None:
    """Make the queued deliveries wait, so the worker can start before the clock does."""
    from pressroom.db import unit_of_work

    async with unit_of_work(runtime.sessions) as session:  # type: ignore[attr-defined]
        await session.execute(
            text(
                "UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 day' "
                "WHERE endpoint_id = :e"
            ),
            {"e": endpoint_id},
        )


async def release(runtime: object, endpoint_id: object) -> None:
    """Make every held delivery due now and wake the worker."""
    from pressroom.db import unit_of_work
    from pressroom.webhooks.outbox import DELIVERIES_CHANNEL

    async with unit_of_work(runtime.sessions) as session:  # type: ignore[attr-defined]
        await session.execute(
            text("UPDATE webhook_deliveries SET next_attempt_at = now() WHERE endpoint_id = :e"),
            {"e": endpoint_id},
        )
        await runtime.notifier.notify(session, DELIVERIES_CHANNEL)  # type: ignore[attr-defined]


def process_cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def log_says(path: Path, marker: bytes) -> bool:
    return marker in path.read_bytes()


async def wait_for_log(path: Path, marker: bytes) -> None:
    deadline = time.monotonic() + 60
    while not log_says(path, marker):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path.name} never said {marker!r}")
        await asyncio.sleep(0.1)


async def sample_body(runtime: object) -> bytes:
    from pressroom.db import unit_of_work

    async with unit_of_work(runtime.sessions) as session:  # type: ignore[attr-defined]
        return str(await session.scalar(text("SELECT body FROM events LIMIT 1"))).encode()


async def measure(
    args: argparse.Namespace, database_url: str, work: Path, results_dir: Path
) -> dict[str, object]:
    from pressroom.config import Settings
    from pressroom.kit.clock import utcnow
    from pressroom.runtime import Runtime
    from pressroom.webhooks.worker import IN_FLIGHT_PER_ENDPOINT

    ca_file, cert_file, key_file = tls_files(work, HOST)
    port = free_port()
    resolve = f"{HOST}=127.0.0.1:{port}"
    receiver = start_receiver(port, cert_file, key_file, results_dir / "webhook-receiver.log")
    worker: subprocess.Popen[bytes] | None = None
    runtime = Runtime.build(
        Settings(
            database_url=database_url,
            data_dir=work / "data",
            secret_key=SECRET_KEY,
            webhook_resolve=resolve,
            webhook_ca_bundle=str(ca_file),
        )
    )
    try:
        ceiling_url = f"https://127.0.0.1:{port}/hook"
        wait_for_receiver(ceiling_url, ca_file)
        tenant, endpoint_id = await setup(runtime, f"https://{HOST}/hook")
        organization_id = tenant.organization_id  # type: ignore[attr-defined]
        await emit_many(runtime, organization_id, args.events)
        body_file = work / "event.json"
        body_file.write_bytes(await sample_body(runtime))

        def ceiling() -> dict[str, object]:
            return run_ceiling(ceiling_url, ca_file, body_file, args.events, IN_FLIGHT_PER_ENDPOINT)

        await hold(runtime, endpoint_id)
        ceilings = [ceiling()]
        env = {
            **os.environ,
            "PRESSROOM_DATABASE_URL": database_url,
            "PRESSROOM_DATA_DIR": str(work / "data"),
            "PRESSROOM_SECRET_KEY": SECRET_KEY,
            "PRESSROOM_WEBHOOK_RESOLVE": resolve,
            "PRESSROOM_WEBHOOK_CA_BUNDLE": str(ca_file),
            "PRESSROOM_LOG_LEVEL": "INFO",
        }
        worker_log = results_dir / "webhook-worker.log"
        worker = start_worker(env, worker_log)
        await wait_for_log(worker_log, b"workers started")
        await asyncio.sleep(1.0)  # let start-up work settle before counting CPU time
        cpu_before = process_cpu_seconds(worker.pid)
        started = time.monotonic()
        await release(runtime, endpoint_id)
        await wait_until_succeeded(runtime, endpoint_id, args.events)
        worker_seconds = time.monotonic() - started
        worker_cpu = process_cpu_seconds(worker.pid) - cpu_before
        worker_rps = args.events / worker_seconds
        recorded_rps, _ = await throughput(runtime, endpoint_id)
        ceilings.append(ceiling())

        since = utcnow()
        emitted, emit_seconds = await emit_steadily(
            runtime, organization_id, args.rate, args.seconds
        )
        await wait_until_succeeded(runtime, endpoint_id, args.events + emitted)
        measured = await latencies(runtime, endpoint_id, since)
        if len(measured) != emitted:
            raise RuntimeError(f"{emitted} events emitted, {len(measured)} first attempts found")
    finally:
        if worker is not None:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=60)
        receiver.terminate()
        receiver.wait(timeout=30)
        await runtime.close()

    ceiling_rps = statistics.mean(float(c["rps"]) for c in ceilings)  # type: ignore[arg-type]
    ceiling_cpu_ms = statistics.mean(float(c["cpu_ms_per_request"]) for c in ceilings)  # type: ignore[arg-type]
    worker_cpu_ms = worker_cpu * 1000 / args.events
    ratio = worker_rps / ceiling_rps
    p50, p99 = percentile(measured, 0.50), percentile(measured, 0.99)
    # The last event is due at (emitted - 1) / rate; later means the emitter fell behind and
    # sent bursts instead of a steady stream.
    achieved_rate = emitted / max(emit_seconds, (emitted - 1) / args.rate)
    steady = achieved_rate >= 0.95 * args.rate
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "events": args.events,
        "inFlightPerEndpoint": IN_FLIGHT_PER_ENDPOINT,
        "ceiling": {
            "rps": round(ceiling_rps, 1),
            "cpu_ms_per_request": round(ceiling_cpu_ms, 3),
            "rounds": ceilings,
        },
        "worker": {
            "rps": round(worker_rps, 1),
            "seconds": round(worker_seconds, 2),
            "rps_first_attempt_to_last_record": round(recorded_rps, 1),
            "cpu_ms_per_delivery": round(worker_cpu_ms, 3),
        },
        "ratio": round(ratio, 3),
        # The same comparison in CPU time, which other load on the machine disturbs less.
        "cpu_ratio": round(ceiling_cpu_ms / worker_cpu_ms, 3),
        "latency": {
            "rate": args.rate,
            "achieved_rate": round(achieved_rate, 1),
            "steady": steady,
            "seconds": args.seconds,
            "events": len(measured),
            "p50_ms": round(p50, 1),
            "p99_ms": round(p99, 1),
            "max_ms": round(max(measured), 1),
            "over_500_ms": sum(1 for ms in measured if ms > 500),
        },
        "targets": {"ratio >= 0.5": ratio >= 0.5, "p99 < 500 ms": steady and p99 < 500},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    results_dir = ROOT / "bench" / "results"
    results_dir.mkdir(exist_ok=True)
    with fresh_postgres_database() as database_url, tempfile.TemporaryDirectory() as scratch:
        summary = asyncio.run(measure(args, database_url, Path(scratch), results_dir))
    (results_dir / "webhooks.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    latency = summary["latency"]
    print(
        f"\nbare httpx ceiling: {summary['ceiling']['rps']} deliveries/s\n"  # type: ignore[index]
        f"pressroom worker:   {summary['worker']['rps']} deliveries/s "  # type: ignore[index]
        f"({float(summary['ratio']):.0%} of the ceiling)\n"  # type: ignore[arg-type]
        f"event to first attempt at {latency['achieved_rate']} events/s "  # type: ignore[index]
        f"(asked {args.rate:.0f}): "
        f"p50 {latency['p50_ms']} ms, p99 {latency['p99_ms']} ms"  # type: ignore[index]
    )


if __name__ == "__main__":
    main()
