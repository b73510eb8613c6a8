"""An idle delivery worker wakes at once when deliveries are committed: PostgreSQL LISTEN/NOTIFY
across processes, an in-process signal on SQLite; never only at its next poll."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import math
import time

import httpx
import pytest

from pressroom.config import Settings
from pressroom.runtime import Runtime
from pressroom.webhooks import worker as worker_module_of_deliveries
from pressroom.webhooks.outbox import DELIVERIES_CHANNEL
from pressroom.webhooks.worker import SQLITE_CLAIM_SPACING_SECONDS
from pressroom.webhooks.worker import DeliveryWorker
from pressroom.workers import loops as worker_module
from pressroom.workers.runner import WorkerRunner
from tests.factories import Tenant

from .factories import create_endpoint
from .factories import emit
from .factories import requests_arriving
from .factories import settle_queue
from .factories import unique_path
from .receiver import WebhookReceiver

# Far longer than the test may take: only a wake can explain a prompt delivery.
IDLE_POLL_SECONDS = 120.0


async def test_idle_worker_is_woken_by_the_commit_not_by_its_poll(
    client: httpx.AsyncClient,
    runtime: Runtime,
    settings: Settings,
    tenant: Tenant,
    receiver: WebhookReceiver,
    is_postgres: bool,
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(worker_module, "POLL_INTERVAL_SECONDS", IDLE_POLL_SECONDS)
    await settle_queue(runtime)
    path = unique_path()
    await create_endpoint(client, tenant, receiver.url_for(path))

    loops = worker_module.webhook_loops()
    (delivery_loop,) = [loop for loop in loops if loop.channel == DELIVERIES_CHANNEL]
    assert delivery_loop.interval == IDLE_POLL_SECONDS
    looked = asyncio.Event()

    async def run_once(rt: Runtime) -> bool:
        busy = await delivery_loop.run_once(rt)
        looked.set()
        return busy

    loops[loops.index(delivery_loop)] = dataclasses.replace(delivery_loop, run_once=run_once)
    runner = WorkerRunner(runtime, loops, grace_seconds=5)
    # On PostgreSQL the event is written through another engine and notifier, as an API node
    # in another process would write it: only NOTIFY reaches the worker's LISTEN connection.
    # SQLite has one process, and the in-process signal.
    emitter = Runtime.build(settings) if is_postgres else runtime
    await runner.start()
    try:
        await asyncio.wait_for(looked.wait(), 10)  # found nothing: idle until woken
        event, _ = await emit(emitter, tenant)
        # Well before the next poll (two minutes away): the commit woke the worker.
        (request,) = await requests_arriving(receiver, path, 1, timeout=10)
        assert request.headers["webhook-id"] == str(event.id)
    finally:
        await runner.stop()
        if emitter is not runtime:
            await emitter.close()


async def test_on_sqlite_a_busy_workers_claims_are_spaced(
    runtime: Runtime, is_postgres: bool, monkeypatch: pytest.MonkeyPatch
):
    """One writer at a time on SQLite: a worker woken by every new event claims at most once
    per spacing, taking what arrived meanwhile (PostgreSQL: at once, every time)."""
    claimed_at: list[float] = []

    async def claim(*_args: object, **_kwargs: object) -> list[object]:
        claimed_at.append(time.monotonic())
        return []

    monkeypatch.setattr(worker_module_of_deliveries.queue, "claim", claim)
    worker = DeliveryWorker()
    for _ in range(3):
        worker._on_notified()  # a new event was announced
        await worker.run_once(runtime)
    assert len(claimed_at) == 3
    gaps = [later - earlier for earlier, later in itertools.pairwise(claimed_at)]
    if is_postgres:
        assert worker._last_claim == -math.inf  # never waited
    else:
        assert min(gaps) >= SQLITE_CLAIM_SPACING_SECONDS
    await worker.close(runtime)
