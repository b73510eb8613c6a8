"""Publishing end to end with the in-process workers (`pressroom serve` without
--no-workers): the API creates posts, the worker runner publishes them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from pressroom.runtime import Runtime
from pressroom.workers.runner import WorkerRunner, default_loops
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import get_post, iso, post_body


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
        assert timedelta(0) <= lateness < timedelta(seconds=1), lateness
    assert {t["provider"] for t in published_later["targets"]} == {"sandbox", "bluesky"}
