"""Publishing end to end with the in-process workers (`pressroom serve` without
--no-workers): the API creates posts, the worker runner publishes them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import httpx
import pytest

from pressroom.config import Settings
from pressroom.posts.service import PUBLISHER_CHANNEL
from pressroom.publishing.worker import publish_due_targets
from pressroom.runtime import Runtime
from pressroom.workers.loops import default_loops
from pressroom.workers.runner import Loop
from pressroom.workers.runner import WorkerRunner
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import get_post
from tests.posts.factories import iso
from tests.posts.factories import post_body


@pytest.fixture
async def workers(runtime: Runtime) -> AsyncIterator[WorkerRunner]:
    runner = WorkerRunner(runtime, default_loops(), grace_seconds=5)
    await runner.start()
    yield runner
    await runner.stop()


async def wait_for_status(
    client: httpx.AsyncClient, tenant: Tenant, post_id: str, status: str, seconds: float = 15
) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        post = await get_post(client, tenant, post_id)
        if post["status"] == status or time.monotonic() > deadline:
            return post
        await asyncio.sleep(0.05)


@pytest.mark.usefixtures("workers")
async def test_posts_are_published_by_the_running_workers(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    sandbox = await connect_channel(runtime, tenant.organization_id)
    bluesky = await connect_channel(runtime, tenant.organization_id, provider="bluesky")
    due = datetime.now(UTC) + timedelta(seconds=1.5)
    both = [{"channelId": str(sandbox)}, {"channelId": str(bluesky)}]
    now_response = await client.post(
        "/api/v1/posts",
        json=post_body(sandbox, publishNow=True, targets=both),
        headers=tenant.headers,
    )
    later_response = await client.post(
        "/api/v1/posts",
        json=post_body(sandbox, scheduledAt=iso(due), targets=both),
        headers=tenant.headers,
    )
    now_post, later_post = now_response.json(), later_response.json()

    published_now = await wait_for_status(client, tenant, now_post["id"], "published")
    assert published_now["status"] == "published"
    published_later = await wait_for_status(client, tenant, later_post["id"], "published")
    assert published_later["status"] == "published"
    for target in published_later["targets"]:
        lateness = datetime.fromisoformat(target["publishedAt"]) - due
        # Never early; lateness is measured in bench/bench_publisher.py (the bound here only
        # catches a target left for a later poll).
        assert timedelta(0) <= lateness < timedelta(seconds=3), lateness
    assert {t["provider"] for t in published_later["targets"]} == {"sandbox", "bluesky"}


async def test_an_idle_publisher_is_woken_by_a_post_due_now(
    client: httpx.AsyncClient,
    runtime: Runtime,
    settings: Settings,
    tenant: Tenant,
    is_postgres: bool,
):
    """The publisher would next look in a minute; the commit of a post to publish now wakes it
    at once. On PostgreSQL the worker is another runtime (its own engine and listener), so
    only LISTEN/NOTIFY can wake it; on SQLite the in-process signal does."""
    worker_runtime = Runtime.build(settings) if is_postgres else runtime
    idle = asyncio.Event()

    async def publish_or_report_idle(loop_runtime: Runtime) -> bool:
        busy = await publish_due_targets(loop_runtime)
        if not busy:
            idle.set()
        return busy

    loop = Loop("publisher", publish_or_report_idle, interval=60.0, channel=PUBLISHER_CHANNEL)
    runner = WorkerRunner(worker_runtime, [loop], grace_seconds=5)
    sandbox = await connect_channel(runtime, tenant.organization_id)
    try:
        await runner.start()
        await asyncio.wait_for(idle.wait(), timeout=15)
        started = time.monotonic()
        response = await client.post(
            "/api/v1/posts", json=post_body(sandbox, publishNow=True), headers=tenant.headers
        )
        post = await wait_for_status(client, tenant, response.json()["id"], "published", 10)
        assert post["status"] == "published"
        assert time.monotonic() - started < 10
    finally:
        await runner.stop()
        if worker_runtime is not runtime:
            await worker_runtime.close()
