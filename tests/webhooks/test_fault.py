"""At-least-once under fire: worker processes killed with SIGKILL at random while 5,000 events
are delivered to a real TLS receiver. Every event must arrive; duplicates are expected (a
worker killed after sending but before recording) and counted."""

from __future__ import annotations

import asyncio
import os
import random
import time
import uuid
from collections import Counter
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func
from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy import update

from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.kit.ids import uuid7
from pressroom.runtime import Runtime
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import Event
from pressroom.webhooks.outbox import event_body
from tests import servers
from tests.factories import Tenant

from .factories import create_endpoint
from .receiver import WebhookReceiver

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

EVENTS = 5000
BATCH = 250
WORKERS = 3
KILLS = 5
DEADLINE_SECONDS = 120.0  # a guard against hanging; on an idle 2-core machine it takes ~40 s


class WorkerPool:
    """`python -m pressroom worker` processes pointed at the receiver, killable at random."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env = env
        self.logs = logs
        self.workers: list[servers.PressroomProcess] = []
        self.started = 0

    def spawn(self) -> servers.PressroomProcess:
        self.started += 1
        return servers.start(f"worker-{self.started}", ["worker"], self.env, self.logs)

    async def start(self, count: int) -> None:
        self.workers = [self.spawn() for _ in range(count)]
        up = servers.workers_started(self.workers)
        await servers.wait_until_async("the workers", up, self.workers)

    def running(self) -> list[int]:
        """Workers that are up and working (a process still importing is not worth a kill);
        one that exited though nobody killed it fails the test with its log."""
        for worker in self.workers:
            worker.assert_running("the deliveries")
        return [i for i, worker in enumerate(self.workers) if "workers started" in worker.output()]

    async def kill_one(self) -> bool:
        """SIGKILL one working worker, if another is working too (so deliveries go on while
        the replacement starts), and start its replacement."""
        candidates = self.running()
        if len(candidates) < 2:
            return False
        index = random.choice(candidates)
        victim = self.workers[index].popen
        victim.kill()  # SIGKILL: no chance to finish, record or give anything back
        victim.wait()
        self.workers[index] = self.spawn()
        return True

    async def stop(self) -> None:
        for worker in self.workers:
            if worker.popen.poll() is None:
                worker.popen.kill()
        for worker in self.workers:
            worker.popen.wait()


async def queue_events(runtime: Runtime, tenant: Tenant, endpoint_id: uuid.UUID) -> set[str]:
    """5,000 events and their deliveries, written in bulk as the outbox writes them one by one
    (emit_event itself is tested in test_outbox.py; here only the delivery side is on trial)."""
    ids: set[str] = set()
    now = utcnow()
    expires_at = now + timedelta(hours=1)
    for start in range(0, EVENTS, BATCH):
        events, deliveries = [], []
        for n in range(start, start + BATCH):
            event_id = uuid7()
            ids.add(str(event_id))
            body = event_body(
                event_id, "post.created.v1", now, tenant.organization_id, {"post": {"n": n}}
            )
            events.append(
                {
                    "id": event_id,
                    "organization_id": tenant.organization_id,
                    "type": "post.created.v1",
                    "body": body,
                    "created_at": now,
                    "expires_at": expires_at,
                }
            )
            deliveries.append(
                {
                    "id": uuid7(),
                    "organization_id": tenant.organization_id,
                    "endpoint_id": endpoint_id,
                    "event_id": event_id,
                    "event_type": "post.created.v1",
                    "status": "pending",
                    "next_trigger": "scheduled",
                    "attempt_count": 0,
                    "next_attempt_at": now,
                    "created_at": now,
                    "updated_at": now,
                    "expires_at": expires_at,
                }
            )
        async with unit_of_work(runtime.sessions) as session:
            await session.execute(insert(Event.__table__), events)
            await session.execute(insert(Delivery.__table__), deliveries)
    return ids


async def test_every_event_arrives_while_workers_are_killed_at_random(
    client: httpx.AsyncClient,
    runtime: Runtime,
    settings: Settings,
    tenant: Tenant,
    is_postgres: bool,
    tmp_path: Path,
) -> None:
    if not is_postgres:
        pytest.skip("several worker processes need PostgreSQL")
    async with unit_of_work(runtime.sessions) as session:
        # Deliveries other tests left queued would go to names only their receivers serve.
        await session.execute(
            update(Delivery)
            .where(Delivery.status.in_(("pending", "processing")))
            .values(status="exhausted", lease_owner=None, lease_until=None)
        )
    with WebhookReceiver("faults.example.com") as receiver:
        endpoint = await create_endpoint(client, tenant, receiver.url_for("/faults"))
        env = {
            **os.environ,
            "PRESSROOM_DATABASE_URL": settings.effective_database_url,
            "PRESSROOM_DATA_DIR": str(tmp_path / "data"),
            "PRESSROOM_SECRET_KEY": settings.secret_key or "",
            "PRESSROOM_WEBHOOK_RESOLVE": receiver.resolve_setting,
            "PRESSROOM_WEBHOOK_CA_BUNDLE": receiver.ca_bundle_path,
            # Short attempts make short leases: a killed worker's claims come back in ~14 s.
            "PRESSROOM_WEBHOOK_TIMEOUT_SECONDS": "1",
            "PRESSROOM_WEBHOOK_RETRY_SCHEDULE": "0.2,0.5,1,2,4",
            "PRESSROOM_DATABASE_POOL_SIZE": "5",
            "PRESSROOM_LOG_LEVEL": "INFO",
        }
        expected = await queue_events(runtime, tenant, uuid.UUID(endpoint["id"]))
        pool = WorkerPool(env, tmp_path)
        started = time.monotonic()
        await pool.start(WORKERS)
        kills = 0
        try:
            while kills < KILLS:
                assert time.monotonic() - started < DEADLINE_SECONDS, "workers never started"
                await asyncio.sleep(random.uniform(1.5, 3.0))
                kills += await pool.kill_one()

            def arrived() -> Counter[str]:
                return Counter(r.headers["webhook-id"] for r in receiver.requests)

            while not expected <= set(arrived()):
                assert time.monotonic() - started < DEADLINE_SECONDS, (
                    f"{len(expected - set(arrived()))} of {EVENTS} events never arrived"
                )
                await asyncio.sleep(0.2)
            counts = arrived()
            duplicates = sum(n - 1 for n in counts.values())
            # Every delivery's bookkeeping settles too: none is left processing or lost.
            while True:
                async with unit_of_work(runtime.sessions) as session:
                    succeeded = await session.scalar(
                        select(func.count()).where(
                            Delivery.endpoint_id == endpoint["id"], Delivery.status == "succeeded"
                        )
                    )
                if succeeded == EVENTS:
                    break
                assert time.monotonic() - started < DEADLINE_SECONDS + 10, (
                    f"only {succeeded} of {EVENTS} deliveries recorded as succeeded"
                )
                await asyncio.sleep(0.2)
        finally:
            await pool.stop()
        print(
            f"\n{EVENTS} events, {kills} SIGKILLs of {WORKERS} workers: all arrived and were "
            f"recorded in {time.monotonic() - started:.1f} s (deadline {DEADLINE_SECONDS:.0f} s); "
            f"{duplicates} duplicate requests ({len(receiver.requests)} requests in all)"
        )
    assert set(counts) == expected
