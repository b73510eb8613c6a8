"""Rate limits per key and per address of failed authentications (contract section 5)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from pressroom.app import create_app
from pressroom.config import Settings
from pressroom.runtime import Runtime
from tests.factories import Tenant
from tests.factories import make_tenant


@asynccontextmanager
async def client_for(
    settings: Settings, **overrides: object
) -> AsyncIterator[tuple[httpx.AsyncClient, Runtime]]:
    runtime = Runtime.build(settings.model_copy(update=overrides))
    transport = httpx.ASGITransport(app=create_app(runtime=runtime))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client, runtime
    finally:
        await runtime.close()


async def clear_of_window_edge(window: int = 60, margin: float = 10.0) -> None:
    """Windows are aligned to the clock (every node agrees on their edges), so a burst that
    straddles an edge starts counting again: begin a burst with at least `margin` seconds of
    its window left."""
    left = window - time.time() % window
    if left < margin:
        await asyncio.sleep(left + 0.05)


async def test_requests_over_the_key_limit_are_429_with_retry_after(settings: Settings):
    async with client_for(settings, rate_limit="3/60") as (client, runtime):
        tenant = await make_tenant(runtime)
        await clear_of_window_edge()
        remaining = []
        for _ in range(3):
            response = await client.get("/api/v1/tenant", headers=tenant.headers)
            assert response.status_code == 200
            remaining.append(int(response.headers["ratelimit-remaining"]))
        assert remaining == [2, 1, 0]
        limited = await client.get("/api/v1/tenant", headers=tenant.headers)
        assert limited.status_code == 429
        assert limited.json()["code"] == "rate_limited"
        assert 1 <= int(limited.headers["retry-after"]) <= 60
        assert limited.headers["ratelimit-remaining"] == "0"
        assert limited.headers["ratelimit-policy"] == "3;w=60"
        # Another key of the same organization has its own budget.
        other = await make_tenant(runtime)
        assert (await client.get("/api/v1/tenant", headers=other.headers)).status_code == 200


async def test_failed_authentications_are_limited_per_address_but_never_block_a_valid_key(
    settings: Settings,
):
    async with client_for(settings, auth_failure_limit="5/60") as (client, runtime):
        tenant = await make_tenant(runtime)
        bad = {"Authorization": "Bearer prk_" + "Q" * 43}
        await clear_of_window_edge()
        statuses = [(await client.get("/api/v1/tenant", headers=bad)).status_code for _ in range(7)]
        assert statuses == [401] * 5 + [429] * 2
        limited = await client.get("/api/v1/tenant", headers=bad)
        assert limited.json()["code"] == "rate_limited"
        assert "retry-after" in limited.headers
        ok = await client.get("/api/v1/tenant", headers=tenant.headers)
        assert ok.status_code == 200
        assert ok.headers["ratelimit-policy"] == "600;w=60"


async def test_redis_counters_are_shared_between_nodes(settings: Settings):
    redis_url = "redis://127.0.0.1:6379/0"
    try:
        import coredis

        probe = coredis.Redis.from_url(redis_url)
        await probe.ping()
    except Exception:  # pragma: no cover - the CI machine runs Redis
        pytest.fail("Redis is not reachable on 127.0.0.1:6379")
    # Two runtimes stand for two API nodes; a unique limit keeps this run's keys apart.
    limit = f"{4}/{60}"
    async with (
        client_for(settings, redis_url=redis_url, rate_limit=limit) as (node_a, runtime),
        client_for(settings, redis_url=redis_url, rate_limit=limit) as (node_b, _),
    ):
        tenant: Tenant = await make_tenant(runtime, name=f"redis-{uuid.uuid4().hex[:6]}")
        await clear_of_window_edge()
        statuses = []
        for node in (node_a, node_b, node_a, node_b, node_a):
            statuses.append((await node.get("/api/v1/tenant", headers=tenant.headers)).status_code)
        assert statuses == [200, 200, 200, 200, 429]
