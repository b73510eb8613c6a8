"""`/metrics` scraped after real traffic: requests, publishes through the sandbox network
(one published, one retried then published, one failed), a webhook delivery to a local TLS
receiver and a media upload; each named series moved as the traffic says, and no label value
is anything of the test's own data."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from pressroom.app import create_app
from pressroom.config import Settings
from pressroom.runtime import Runtime
from pressroom.workers.loops import default_loops
from pressroom.workers.runner import WorkerRunner
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.factories import make_tenant
from tests.media.factories import png_bytes
from tests.posts.factories import get_post
from tests.posts.factories import post_body
from tests.webhooks.factories import requests_arriving
from tests.webhooks.factories import settle_queue
from tests.webhooks.factories import unique_path
from tests.webhooks.receiver import WebhookReceiver

from .conftest import METRICS_TOKEN

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
SCRAPE = {"Authorization": f"Bearer {METRICS_TOKEN}"}


def parse(text: str) -> tuple[Samples, list[str]]:
    """Every sample by (name, labels), and every label value seen."""
    samples: Samples = {}
    values: list[str] = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
            values.extend(sample.labels.values())
    return samples, values


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def scrape(client: httpx.AsyncClient) -> tuple[Samples, list[str]]:
    response = await client.get("/metrics", headers=SCRAPE)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return parse(response.text)


@pytest.fixture
async def workers(runtime: Runtime) -> AsyncIterator[WorkerRunner]:
    await settle_queue(runtime)
    runner = WorkerRunner(runtime, default_loops(), grace_seconds=5)
    await runner.start()
    yield runner
    await runner.stop()


async def wait_for_post(
    client: httpx.AsyncClient, tenant: Tenant, post_id: str, statuses: set[str]
) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        post = await get_post(client, tenant, post_id)
        if post["status"] in statuses:
            return post
        assert time.monotonic() < deadline, post
        await asyncio.sleep(0.05)


async def test_metrics_move_with_real_traffic(
    client: httpx.AsyncClient,
    runtime: Runtime,
    receiver: WebhookReceiver,
    workers: WorkerRunner,
):
    tenant = await make_tenant(runtime, name=f"Metrics Org {uuid.uuid4().hex[:6]}")
    channel_name = f"Launch channel {uuid.uuid4().hex[:6]}"
    channel = await connect_channel(runtime, tenant.organization_id, name=channel_name)
    path = unique_path()
    endpoint = await client.post(
        "/api/v1/webhooks",
        json={"url": receiver.url_for(path), "events": ["post.published.v1"]},
        headers=tenant.headers,
    )
    assert endpoint.status_code == 201, endpoint.text
    before, _ = await scrape(client)
    started = time.time()

    assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    assert (await client.get("/api/v1/tenant")).status_code == 401
    missing = await client.get(f"/api/v1/posts/{uuid.uuid4()}", headers=tenant.headers)
    assert missing.status_code == 404
    assert (await client.get(f"/nowhere/{uuid.uuid4()}")).status_code == 404
    uploaded = await client.post(
        "/api/v1/media",
        files={"files": ("launch.png", png_bytes(), "image/png")},
        headers=tenant.headers,
    )
    assert uploaded.status_code == 201, uploaded.text
    posts = {}
    for name, options in {
        "plain": {},
        "retried": {"simulate": "provider_unavailable", "failTimes": 1},
        "refused": {"simulate": "text_rejected"},
    }.items():
        body = post_body(channel, publishNow=True, targets=[{"channelId": str(channel)}])
        body["targets"][0]["options"] = options
        created = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
        assert created.status_code == 201, created.text
        posts[name] = created.json()
    for name, post in posts.items():
        wanted = {"failed"} if name == "refused" else {"published"}
        await wait_for_post(client, tenant, post["id"], wanted)
    await requests_arriving(receiver, path, 2)
    # The delivery worker records attempts a few milliseconds after they finish.
    after: Samples = {}
    deadline = time.monotonic() + 10
    while (
        value(after, "pressroom_webhook_deliveries_total", outcome="succeeded")
        < value(before, "pressroom_webhook_deliveries_total", outcome="succeeded") + 2
    ):
        assert time.monotonic() < deadline, "the two deliveries were never recorded"
        await asyncio.sleep(0.05)
        after, label_values = await scrape(client)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    requests = "pressroom_http_requests_total"
    assert moved(requests, operation="getTenant", status="200") == 1
    assert moved(requests, operation="getTenant", status="401") == 1
    assert moved(requests, operation="getPost", status="404") == 1
    assert moved(requests, operation="unmatched", status="404") == 1
    assert moved(requests, operation="uploadMedia", status="201") == 1
    assert moved(requests, operation="createPost", status="201") == 3
    assert moved("pressroom_http_request_duration_seconds_count", operation="getTenant") == 2
    assert moved("pressroom_publish_published_total", network="sandbox") == 2
    assert moved("pressroom_publish_lateness_seconds_count", network="sandbox") == 2
    assert moved("pressroom_publish_lateness_seconds_sum", network="sandbox") > 0
    code = "provider_unavailable"
    assert moved("pressroom_publish_retries_total", network="sandbox", code=code) == 1
    assert moved("pressroom_publish_failures_total", network="sandbox", code="text_rejected") == 1
    assert moved("pressroom_webhook_deliveries_total", outcome="succeeded") == 2
    assert moved("pressroom_webhook_event_to_first_attempt_seconds_count") == 2
    assert moved("pressroom_webhook_attempt_duration_seconds_count") == 2
    assert moved("pressroom_media_inspection_seconds_count", kind="image") == 1
    for loop in ("publisher", "webhook-delivery"):
        assert value(after, "pressroom_worker_loop_last_run_timestamp_seconds", loop=loop) >= (
            started
        )
        assert moved("pressroom_worker_loop_runs_total", loop=loop, result="ok") >= 1
    assert value(after, "pressroom_worker_loop_interval_seconds", loop="publisher") == 1.0
    # Read from the database at scrape time (the cache is off in these settings).
    assert moved("pressroom_post_targets", status="published") == 2
    assert moved("pressroom_post_targets", status="failed") == 1
    assert value(after, "pressroom_channels", health="healthy") >= 1
    assert ("pressroom_webhook_deliveries_pending", frozenset()) in after
    assert ("pressroom_metrics_poller_lag_seconds", frozenset()) in after

    own_data = {
        str(tenant.organization_id),
        str(tenant.member_id),
        str(tenant.key_id),
        tenant.key,
        channel_name,
        str(channel),
        endpoint.json()["id"],
        receiver.url_for(path),
        path,
        uploaded.json()["items"][0]["id"],
        "launch.png",
        *(post["id"] for post in posts.values()),
        *(target["id"] for post in posts.values() for target in post["targets"]),
    }
    async with runtime.sessions() as session:
        from pressroom.auth.models import Organization

        organization = await session.get(Organization, tenant.organization_id)
        assert organization is not None
        own_data.add(organization.name)
    leaked = [v for v in label_values if v in own_data or any(d in v for d in own_data)]
    assert leaked == []


async def test_a_scrape_needs_the_token_when_one_is_set(client: httpx.AsyncClient):
    assert (await client.get("/metrics")).status_code == 401
    wrong = await client.get("/metrics", headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 401
    assert wrong.headers["content-type"] == "application/problem+json"
    assert METRICS_TOKEN not in wrong.text
    basic = await client.get("/metrics", headers={"Authorization": f"Basic {METRICS_TOKEN}"})
    assert basic.status_code == 401
    assert (await client.get("/metrics", headers=SCRAPE)).status_code == 200


async def test_metrics_are_a_404_unless_enabled(settings: Settings):
    quiet = settings.model_copy(update={"metrics": False})
    runtime = Runtime.build(quiet)
    try:
        transport = httpx.ASGITransport(app=create_app(runtime=runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            response = await c.get("/metrics", headers=SCRAPE)
        assert response.status_code == 404
        assert response.headers["content-type"] == "application/problem+json"
    finally:
        await runtime.close()


async def test_database_counts_are_cached_between_scrapes(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    runtime.settings.metrics_cache_seconds = 3600
    first, _ = await scrape(client)
    channel = await connect_channel(runtime, tenant.organization_id)
    body = post_body(channel, scheduledAt="2999-01-01T00:00:00Z")
    created = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
    assert created.status_code == 201, created.text
    second, _ = await scrape(client)
    name = "pressroom_post_targets"
    assert value(second, name, status="scheduled") == value(first, name, status="scheduled")
