"""Webhook fixtures: a real TLS receiver on loopback, settings that route deliveries to it
through the production code path (PRESSROOM_WEBHOOK_RESOLVE and _CA_BUNDLE), and a running
delivery worker in this process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Iterator
from pathlib import Path

import pytest

from pressroom.config import Settings
from pressroom.runtime import Runtime
from pressroom.workers.loops import webhook_loops
from pressroom.workers.runner import WorkerRunner
from tests.factories import SERVER_KEY

from .factories import settle_queue
from .receiver import WebhookReceiver

# Fast enough for tests, slow enough to see the schedule: three attempts in about 0.1 s.
FAST_SCHEDULE = "0.05,0.05"
# Short enough to keep the timeout test quick, long enough that a TLS handshake on a loaded
# 2-core machine (other suites running beside this one) never times out by accident.
TIMEOUT_SECONDS = 3.0


@pytest.fixture(scope="session")
def shared_receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver("hooks.example.com", extra_hostnames=("receiver.test",)) as receiver:
        yield receiver


@pytest.fixture
def receiver(shared_receiver: WebhookReceiver) -> Iterator[WebhookReceiver]:
    shared_receiver.reset()
    yield shared_receiver
    shared_receiver.reset()


@pytest.fixture
def settings(database_url: str, data_dir: Path, shared_receiver: WebhookReceiver) -> Settings:
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        secret_key=SERVER_KEY,
        redis_url=None,
        webhook_resolve=shared_receiver.resolve_setting,
        webhook_ca_bundle=shared_receiver.ca_bundle_path,
        webhook_retry_schedule=FAST_SCHEDULE,
        webhook_timeout_seconds=TIMEOUT_SECONDS,
    )


@pytest.fixture
async def worker(runtime: Runtime) -> AsyncIterator[WorkerRunner]:
    """The webhook loops of a worker node, running in this process until the test ends.

    The test database lives for the whole session: deliveries other tests left queued are
    settled first, so this test's receiver sees only its own."""
    await settle_queue(runtime)
    runner = WorkerRunner(runtime, webhook_loops(), grace_seconds=10)
    await runner.start()
    yield runner
    await runner.stop()
