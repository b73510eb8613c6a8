"""Soak: an API process and two worker processes on PostgreSQL under mixed traffic from three
client processes, while one worker is stopped with SIGTERM and another killed with SIGKILL.
Afterwards: no 5xx at all, every post published (none stuck in `publishing`), every webhook
event at the loopback receiver at least once, and the API's memory flat in the second half.

Bounded and loopback only. PRESSROOM_SOAK_SECONDS sets the traffic time (default 30 for CI;
a release check runs 600)."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy import update

from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.posts.models import Post
from pressroom.posts.models import PostTarget
from pressroom.runtime import Runtime
from pressroom.webhooks.models import Delivery
from tests import servers
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.media.factories import png_bytes
from tests.posts.factories import cancel_queued_targets
from tests.soak_client import client_process
from tests.webhooks.receiver import WebhookReceiver

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

SECONDS = float(os.environ.get("PRESSROOM_SOAK_SECONDS", "30"))
CLIENTS = 3
CHANNELS = 4
# After the traffic: time for the backlog to drain (a SIGKILLed worker's leases to lapse and
# its work to be taken over). Reached only when something is stuck.
SETTLE_SECONDS = 60.0
# The API's resident memory may grow at most this much over the second half of the run, when
# its pools, caches, thread pools and lazily imported modules have long been warmed up (the
# first half grows ~15 MiB doing that). Measured on the 2-core machine under other load: 0.8-2.0
# MiB of second-half growth in 30 s runs (~700 requests per half) and 0.5 MiB in a 120 s run
# (~1,800 per half): allocator noise, not a trend. 24 MiB is ten times that noise, and what
# a leak costs at a half's requests: the 30 s run catches anything that keeps ~35 KiB per
# request (an upload, a response body, a session with its rows), the 600 s release run
# anything that keeps ~3 KiB per request.
RSS_GROWTH_LIMIT_MIB = 24.0
EVENTS = [
    "channel.connected.v1",
    "channel.disconnected.v1",
    "channel.reconnect-required.v1",
    "media.created.v1",
    "post.created.v1",
    "post.updated.v1",
    "post.deleted.v1",
    "post.scheduled.v1",
    "post.published.v1",
    "post.failed.v1",
    "webhook.test.v1",
]


def rss_mib(pid: int) -> float:
    """The process's resident set size (VmRSS), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


# -- the server side ---------------------------------------------------------------------------


async def until(what: str, seconds: float, probe: Any) -> None:
    deadline = time.monotonic() + seconds
    while not await probe():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.2)


async def settle_leftovers(runtime: Runtime) -> None:
    """The workers serve every organization of the shared test database: earlier tests' queued
    targets and deliveries (to receivers long gone) are taken out of their way."""
    await cancel_queued_targets(runtime)
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(Delivery)
            .where(Delivery.status.in_(("pending", "processing")))
            .values(status="exhausted", lease_owner=None, lease_until=None)
        )


async def post_statuses(runtime: Runtime, tenant: Tenant) -> dict[str, str]:
    async with unit_of_work(runtime.sessions) as session:
        rows = await session.execute(
            select(Post.id, Post.status).where(Post.organization_id == tenant.organization_id)
        )
        return {str(post_id): status for post_id, status in rows}


async def events_for(runtime: Runtime, endpoint: str) -> set[str]:
    """Every event that has a delivery to the endpoint."""
    async with unit_of_work(runtime.sessions) as session:
        return {
            str(event_id)
            for event_id in await session.scalars(
                select(Delivery.event_id).where(Delivery.endpoint_id == uuid.UUID(endpoint))
            )
        }


async def test_mixed_traffic_while_workers_restart(
    client: httpx.AsyncClient,
    runtime: Runtime,
    settings: Settings,
    tenant: Tenant,
    is_postgres: bool,
    tmp_path: Path,
) -> None:
    if not is_postgres:
        pytest.skip("several worker processes share one database only on PostgreSQL")
    started = time.monotonic()
    await settle_leftovers(runtime)
    channels = [
        str(await connect_channel(runtime, tenant.organization_id)) for _ in range(CHANNELS)
    ]
    created = await client.post(
        "/api/v1/webhooks",
        json={"url": "https://soak.example.com/soak", "events": EVENTS},
        headers=tenant.headers,
    )
    assert created.status_code == 201, created.text
    endpoint = created.json()["id"]
    port = servers.free_port()
    base = f"http://127.0.0.1:{port}"
    with WebhookReceiver("soak.example.com") as receiver:
        # The clients import while the servers start, and wait to be told to go.
        spawn = multiprocessing.get_context("spawn")
        pictures = [png_bytes((32 + seed, 24)) for seed in range(CLIENTS)]
        go, out = spawn.Event(), spawn.Queue()
        clients = [
            spawn.Process(
                target=client_process,
                args=(go, out, base, tenant.key, channels, endpoint, pictures[seed], SECONDS, seed),
                daemon=True,
            )
            for seed in range(CLIENTS)
        ]
        for process in clients:
            process.start()
        env = {
            **os.environ,
            "PRESSROOM_DATABASE_URL": settings.effective_database_url,
            "PRESSROOM_DATA_DIR": str(tmp_path / "data"),
            "PRESSROOM_SECRET_KEY": settings.secret_key or "",
            "PRESSROOM_RATE_LIMIT": "1000000/60",
            "PRESSROOM_AUTH_FAILURE_LIMIT": "1000000/60",
            "PRESSROOM_WEBHOOK_RESOLVE": receiver.resolve_setting,
            "PRESSROOM_WEBHOOK_CA_BUNDLE": receiver.ca_bundle_path,
            # Short attempts make short delivery leases, and a short publisher lease: a killed
            # worker's claims come back within seconds.
            "PRESSROOM_WEBHOOK_TIMEOUT_SECONDS": "1",
            "PRESSROOM_WEBHOOK_RETRY_SCHEDULE": "0.2,0.5,1,2,4",
            "PRESSROOM_PUBLISHER_LEASE_SECONDS": "5",
            "PRESSROOM_DATABASE_POOL_SIZE": "6",
            "PRESSROOM_LOG_LEVEL": "INFO",
        }
        api = servers.start(
            "api",
            ["serve", "--no-workers", "--port", str(port)],
            {**env, "PRESSROOM_LOG_LEVEL": "WARNING", "PRESSROOM_DATABASE_POOL_SIZE": "10"},
            tmp_path,
        )
        workers = [servers.start(f"worker-{n}", ["worker"], env, tmp_path) for n in (1, 2)]
        retired: list[tuple[servers.PressroomProcess, int]] = []
        ready: set[int] = set()
        results: dict[int, dict[str, Any]] = {}

        def collect() -> None:
            while not out.empty():
                kind, seed, payload = out.get()
                assert kind != "error", payload
                if kind == "ready":
                    ready.add(seed)
                else:
                    results[seed] = payload

        try:

            def clients_up() -> bool:
                collect()
                return len(ready) == CLIENTS

            await servers.wait_until_async("the API", servers.healthy_async(base), [api])
            up = servers.workers_started(workers)
            await servers.wait_until_async("the workers", up, workers)
            await servers.wait_until_async("the clients", clients_up, [api, *workers])

            # -- the traffic, with one graceful stop and one kill of a worker --------------
            startup_seconds = time.monotonic() - started
            go.set()
            began = time.monotonic()
            samples: list[tuple[float, float]] = []
            stops = [(0.25, signal.SIGTERM, 0), (0.5, signal.SIGKILL, 1)]
            while len(results) < CLIENTS:
                elapsed = time.monotonic() - began
                assert elapsed < SECONDS + 60, "the clients did not finish"
                samples.append((elapsed, rss_mib(api.popen.pid)))
                if stops and elapsed >= stops[0][0] * SECONDS:
                    _, how, index = stops.pop(0)
                    victim = workers[index]
                    victim.popen.send_signal(how)
                    retired.append((victim, how))
                    workers[index] = servers.start(
                        f"{victim.name}-after-{how.name}", ["worker"], env, tmp_path
                    )
                await asyncio.sleep(0.25)
                collect()
            traffic_seconds = time.monotonic() - began
            assert not stops, "the traffic ended before both workers were stopped"

            # -- then everything settles ---------------------------------------------------
            posts = [post for result in results.values() for post in result["posts"]]

            async def all_published() -> bool:
                statuses = await post_statuses(runtime, tenant)
                return all(statuses.get(post) == "published" for post in posts)

            async def all_delivered() -> bool:
                arrived = {request.headers["webhook-id"] for request in receiver.requests}
                return await events_for(runtime, endpoint) <= arrived

            settle_started = time.monotonic()
            await until("every post to be published", SETTLE_SECONDS, all_published)
            await until("every event at the receiver", SETTLE_SECONDS, all_delivered)
            settle_seconds = time.monotonic() - settle_started
        finally:
            go.set()
            for client_proc in clients:
                client_proc.join(timeout=5)
                if client_proc.is_alive():
                    client_proc.kill()
                    client_proc.join()
            for process in [api, *workers]:
                if process.popen.poll() is None:
                    process.popen.send_signal(signal.SIGTERM)
            for process in [api, *workers, *(victim for victim, _ in retired)]:
                try:
                    process.popen.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.popen.kill()
                    process.popen.wait()

        stopped_at = time.monotonic()
        expected_events = await events_for(runtime, endpoint)
        arrivals = Counter(request.headers["webhook-id"] for request in receiver.requests)

    # No 5xx, and no other failure either: every request was valid.
    failures = [failure for result in results.values() for failure in result["failures"]]
    assert not failures, failures[:20]
    assert "unhandled error" not in api.output(), api.output()[-3000:]
    # uvicorn ends a graceful shutdown by re-raising the SIGTERM it caught.
    assert api.popen.returncode in (0, -signal.SIGTERM), api.output()[-3000:]
    # The worker stopped with SIGTERM finished its work and exited cleanly.
    (gracefully, _), (killed, _) = retired
    assert gracefully.popen.returncode == 0, gracefully.output()[-3000:]
    assert killed.popen.returncode == -signal.SIGKILL
    # Every post reached `published`; none is stuck in `publishing`.
    statuses = await post_statuses(runtime, tenant)
    assert posts and Counter(statuses[post] for post in posts) == {"published": len(posts)}
    async with unit_of_work(runtime.sessions) as session:
        stuck = await session.scalar(
            select(func.count())
            .select_from(PostTarget)
            .where(
                PostTarget.organization_id == tenant.organization_id,
                PostTarget.status != "published",
            )
        )
    assert stuck == 0
    # Every event arrived at least once: the test events the clients queued among them.
    tests_queued = {event for result in results.values() for event in result["testEvents"]}
    assert tests_queued and tests_queued <= expected_events
    calls: Counter[str] = Counter()
    for result in results.values():
        calls.update(result["calls"])
    # Exactly the events the traffic caused got a delivery (the outbox lost none): per post
    # post.created.v1 and post.published.v1 (publishNow skips post.scheduled.v1), one
    # webhook.test.v1 per test, one media.created.v1 per upload.
    assert len(expected_events) == 2 * len(posts) + len(tests_queued) + calls["uploadMedia"]
    assert expected_events <= set(arrivals)
    duplicates = sum(count - 1 for count in arrivals.values())
    # Memory: flat over the second half.
    second_half = [rss for at, rss in samples if at >= traffic_seconds / 2]
    assert len(second_half) >= 4, samples
    growth = max(second_half) - second_half[0]
    assert growth < RSS_GROWTH_LIMIT_MIB, (growth, samples)

    print(
        f"\nsoak {traffic_seconds:.0f} s: {sum(calls.values())} requests "
        f"({', '.join(f'{name} {n}' for name, n in sorted(calls.items()))}), 0 failed; "
        f"{len(posts)} posts published; {len(expected_events)} events, {duplicates} duplicate "
        f"deliveries; settled in {settle_seconds:.1f} s; workers stopped by SIGTERM and "
        f"SIGKILL; API RSS {samples[0][1]:.1f} MiB first, {second_half[0]:.1f} at half, "
        f"{samples[-1][1]:.1f} last (second-half growth {growth:.1f} MiB); "
        f"wall {time.monotonic() - started:.0f} s (start {startup_seconds:.0f} s, stop "
        f"{stopped_at - settle_started - settle_seconds:.0f} s)"
    )
