"""Several `pressroom worker` processes against one PostgreSQL database: every due target is
published exactly once, and a worker killed mid-publish loses nothing and duplicates nothing."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlalchemy import select

from pressroom.auth.service import Principal
from pressroom.db import unit_of_work
from pressroom.posts.creating import create_post
from pressroom.posts.models import PostTarget
from pressroom.posts.schemas import PostCreate
from pressroom.providers.sandbox.models import SandboxPublication
from pressroom.runtime import Runtime
from tests import servers
from tests.channels.factories import connect_channel
from tests.factories import SERVER_KEY
from tests.factories import Tenant
from tests.posts.factories import insert_scheduled_posts

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


@pytest.fixture(autouse=True)
def postgres_only(is_postgres: bool) -> None:
    if not is_postgres:
        pytest.skip("several worker processes share a database only on PostgreSQL")


def principal_of(tenant: Tenant) -> Principal:
    now = datetime.now(UTC)
    return Principal(
        organization_id=tenant.organization_id,
        organization_name="Acme",
        organization_created_at=now,
        member_id=tenant.member_id,
        member_email="owner@example.com",
        member_role="owner",
        credential_id=tenant.key_id,
        credential_name="key",
        credential_prefix=tenant.key[:12],
        credential_created_at=now,
        credential_expires_at=None,
        scopes=frozenset({"posts:write"}),
    )


async def queue_targets(runtime: Runtime, tenant: Tenant, posts: int, per_post: int) -> None:
    """`posts` posts published now, each with `per_post` targets on as many channels."""
    channels = [
        str(await connect_channel(runtime, tenant.organization_id)) for _ in range(per_post)
    ]
    principal = principal_of(tenant)
    async with unit_of_work(runtime.sessions) as session:
        for number in range(posts):
            body = PostCreate.model_validate(
                {
                    "text": f"Post number {number}",
                    "publishNow": True,
                    "targets": [{"channelId": channel} for channel in channels],
                }
            )
            await create_post(session, runtime, principal, body)


@contextmanager
def worker_processes(
    count: int, database_url: str, tmp_path: Path, **settings: str
) -> Iterator[list[servers.PressroomProcess]]:
    """`count` processes of `pressroom worker`; each one's log (JSON lines) in tmp_path."""
    env = {
        **os.environ,
        "PRESSROOM_DATABASE_URL": database_url,
        "PRESSROOM_DATA_DIR": str(tmp_path / "worker-data"),
        "PRESSROOM_SECRET_KEY": SERVER_KEY,
        "PRESSROOM_LOG_LEVEL": "INFO",
        **{f"PRESSROOM_{name.upper()}": value for name, value in settings.items()},
    }
    workers = [
        servers.start(f"worker-{number}", ["worker"], env, tmp_path) for number in range(count)
    ]
    try:
        yield workers
    finally:
        for worker in workers:
            if worker.popen.poll() is None:
                worker.popen.send_signal(signal.SIGTERM)
        for worker in workers:
            try:
                worker.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.popen.kill()
                worker.popen.wait()


async def wait_until_started(workers: list[servers.PressroomProcess]) -> None:
    """Python start-up is slow on a busy machine: time the work, not the imports."""
    await servers.wait_until_async("the workers", servers.workers_started(workers), workers)


async def published_count(runtime: Runtime, tenant: Tenant) -> int:
    async with unit_of_work(runtime.sessions) as session:
        count = await session.scalar(
            select(func.count())
            .select_from(PostTarget)
            .where(
                PostTarget.organization_id == tenant.organization_id,
                PostTarget.status == "published",
            )
        )
    return int(count or 0)


async def wait_until_published(
    runtime: Runtime, tenant: Tenant, expected: int, seconds: float
) -> int:
    deadline = time.monotonic() + seconds
    count = await published_count(runtime, tenant)
    while count < expected and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        count = await published_count(runtime, tenant)
    return count


async def publications(runtime: Runtime, tenant: Tenant) -> dict[uuid.UUID, list[tuple[str, int]]]:
    """Per target of the organization: the sandbox's (providerPostId, calls) rows."""
    async with unit_of_work(runtime.sessions) as session:
        rows = await session.execute(
            select(
                SandboxPublication.target_id,
                SandboxPublication.provider_post_id,
                SandboxPublication.calls,
            ).where(SandboxPublication.organization_id == tenant.organization_id)
        )
        found: dict[uuid.UUID, list[tuple[str, int]]] = {}
        for target_id, provider_post_id, calls in rows:
            found.setdefault(target_id, []).append((provider_post_id, calls))
    return found


async def recorded(runtime: Runtime, tenant: Tenant) -> dict[uuid.UUID, str | None]:
    async with unit_of_work(runtime.sessions) as session:
        rows = await session.execute(
            select(PostTarget.id, PostTarget.provider_post_id).where(
                PostTarget.organization_id == tenant.organization_id
            )
        )
        return {target_id: provider_post_id for target_id, provider_post_id in rows}


async def test_four_workers_publish_2000_due_targets_exactly_once(
    runtime: Runtime, tenant: Tenant, database_url: str, tmp_path: Path
):
    channels = [await connect_channel(runtime, tenant.organization_id) for _ in range(20)]
    # Small pools: four processes must not use up the server's connections.
    small = {"database_pool_size": "6"}
    with worker_processes(4, database_url, tmp_path, **small) as workers:
        # Committed in one transaction while the workers start: 2,000 targets due at once.
        await insert_scheduled_posts(
            runtime, tenant.organization_id, channels, [datetime.now(UTC)] * 2000
        )
        await wait_until_started(workers)
        done = await wait_until_published(runtime, tenant, 2000, seconds=40)
    assert done == 2000
    sent = await publications(runtime, tenant)
    stored = await recorded(runtime, tenant)
    assert len(stored) == 2000
    # Each target reached the network once, in one call, and recorded what it answered.
    assert set(sent) == set(stored)
    assert all(len(rows) == 1 for rows in sent.values())
    assert {calls for rows in sent.values() for _, calls in rows} == {1}
    assert all(stored[target] == rows[0][0] for target, rows in sent.items())


async def test_a_worker_killed_mid_publish_loses_and_duplicates_nothing(
    runtime: Runtime, tenant: Tenant, database_url: str, tmp_path: Path
):
    await queue_targets(runtime, tenant, posts=1, per_post=10)
    slow = {
        # The network acts 1.5 s into a 3 s round trip; the kill comes in between, with
        # a second of slack either side for a loaded machine.
        "sandbox_latency_ms": "3000",
        # An 8 s lease gives a publish 4 s (worker.publish_timeout): room for the 3 s trip.
        "publisher_lease_seconds": "8",
        "database_pool_size": "12",
    }
    with worker_processes(1, database_url, tmp_path / "a", **slow) as [doomed]:
        await wait_until_started([doomed])
        taken = await leased_by(runtime, tenant, doomed.popen.pid, expected=10, seconds=20)
        assert len(taken) == 10
        # Past the network's half of the round trip: it has the posts, the worker has not
        # heard back. Kill it there.
        await asyncio.sleep(2.0)
        doomed.popen.send_signal(signal.SIGKILL)
        doomed.popen.wait()
    assert await published_count(runtime, tenant) == 0
    with worker_processes(1, database_url, tmp_path / "b", **slow) as workers:
        await wait_until_started(workers)
        done = await wait_until_published(runtime, tenant, 10, seconds=30)
    assert done == 10
    sent = await publications(runtime, tenant)
    stored = await recorded(runtime, tenant)
    assert set(sent) == set(stored) == taken
    assert all(len(rows) == 1 for rows in sent.values())
    assert all(stored[target] == rows[0][0] for target, rows in sent.items())
    # The second worker re-sent the same idempotency key and got the same post back.
    assert {calls for rows in sent.values() for _, calls in rows} == {2}


async def leased_by(
    runtime: Runtime, tenant: Tenant, pid: int, *, expected: int, seconds: float
) -> set[uuid.UUID]:
    """The targets whose lease a worker process holds, once it holds `expected` of them."""
    deadline = time.monotonic() + seconds
    while True:
        async with unit_of_work(runtime.sessions) as session:
            taken = set(
                (
                    await session.scalars(
                        select(PostTarget.id).where(
                            PostTarget.organization_id == tenant.organization_id,
                            PostTarget.lease_owner.like(f"%:{pid}:%"),
                        )
                    )
                ).all()
            )
        if len(taken) >= expected or time.monotonic() > deadline:
            return taken
        await asyncio.sleep(0.05)


async def test_publishes_slower_than_the_lease_reach_the_network_once_with_two_workers(
    runtime: Runtime, tenant: Tenant, database_url: str, tmp_path: Path
):
    await queue_targets(runtime, tenant, posts=1, per_post=4)
    slow = {
        # Each publish takes 7 s against a 2 s lease: a network processing a video for two
        # minutes against the default one-minute lease, scaled down. The heartbeat keeps the
        # leases; the other worker, looking all along, must never take a target over.
        "sandbox_latency_ms": "7000",
        "publisher_lease_seconds": "2",
        "database_pool_size": "6",
    }
    with worker_processes(2, database_url, tmp_path, **slow) as workers:
        await wait_until_started(workers)
        done = await wait_until_published(runtime, tenant, 4, seconds=40)
    assert done == 4
    sent = await publications(runtime, tenant)
    stored = await recorded(runtime, tenant)
    assert set(sent) == set(stored)
    assert all(len(rows) == 1 for rows in sent.values())
    # One call per target: nobody re-sent a publish whose first attempt was still going.
    assert {calls for rows in sent.values() for _, calls in rows} == {1}
    assert all(stored[target] == rows[0][0] for target, rows in sent.items())
