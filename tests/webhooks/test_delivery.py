"""The delivery worker against a real HTTPS receiver on loopback: signatures, classification,
retries, redirects, timeouts, DNS vetting and held deliveries."""

from __future__ import annotations

import asyncio
import email.utils
import itertools
import json
import socket
import time
from collections import Counter
from datetime import datetime
from typing import Any

import httpx
import pytest
import standardwebhooks
from sqlalchemy import func
from sqlalchemy import select

from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from pressroom.webhooks import WebhookVerificationError
from pressroom.webhooks import verify
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import DeliveryAttempt
from pressroom.webhooks.outbox import emit_event
from pressroom.webhooks.worker import IN_FLIGHT_PER_ENDPOINT
from pressroom.workers.runner import WorkerRunner
from tests.factories import Tenant

from .conftest import TIMEOUT_SECONDS
from .factories import create_endpoint
from .factories import emit
from .factories import eventually
from .factories import get_delivery
from .factories import requests_arriving
from .factories import requests_to
from .factories import settled_delivery
from .factories import unique_path
from .receiver import RecordedRequest
from .receiver import WebhookReceiver

pytestmark = pytest.mark.usefixtures("worker")


def standard_headers(request: RecordedRequest) -> dict[str, str]:
    """The request's headers as a Standard Webhooks library expects them (`v1,`)."""
    return {
        "webhook-id": request.headers["webhook-id"],
        "webhook-timestamp": request.headers["webhook-timestamp"],
        "webhook-signature": request.headers["webhook-signature"].replace("v1=", "v1,"),
    }


async def subscribe(
    client: httpx.AsyncClient, tenant: Tenant, receiver: WebhookReceiver, **fields: Any
) -> tuple[dict[str, Any], str]:
    path = unique_path()
    endpoint = await create_endpoint(client, tenant, receiver.url_for(path), **fields)
    return endpoint, path


async def test_delivery_is_a_signed_post_of_the_exact_event_bytes(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path = await subscribe(client, tenant, receiver)
    event, (delivery,) = await emit(runtime, tenant, data={"post": {"id": "p1", "text": "héllo"}})
    (request,) = await requests_arriving(receiver, path, 1)
    assert request.method == "POST"
    assert request.body == event.body.encode()
    assert request.headers["content-type"] == "application/json"
    assert request.headers["webhook-id"] == str(event.id)
    assert abs(int(request.headers["webhook-timestamp"]) - time.time()) < 60
    assert request.headers["webhook-signature"].startswith("v1=")
    assert request.sni == "hooks.example.com"
    assert request.headers["host"] == "hooks.example.com"
    verify(endpoint["signingSecret"], request.headers, request.body)
    payload = json.loads(request.body)
    assert payload == {
        "id": str(event.id),
        "type": "post.created.v1",
        "createdAt": payload["createdAt"],
        "organizationId": str(tenant.organization_id),
        "data": {"post": {"id": "p1", "text": "héllo"}},
    }
    settled = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    assert settled["status"] == "succeeded"
    assert settled["responseStatus"] == 200
    assert settled["attemptCount"] == 1
    assert isinstance(settled["latencyMs"], int)
    assert settled["nextAttemptAt"] is None
    (attempt,) = settled["attempts"]
    assert attempt["number"] == 1
    assert attempt["trigger"] == "scheduled"
    assert attempt["outcome"] == "succeeded"
    assert attempt["responseStatus"] == 200
    assert attempt["error"] is None


async def test_standard_webhooks_library_verifies_a_delivery(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path = await subscribe(client, tenant, receiver)
    event, _ = await emit(runtime, tenant)
    (request,) = await requests_arriving(receiver, path, 1)
    payload = standardwebhooks.Webhook(endpoint["signingSecret"]).verify(
        request.body, standard_headers(request)
    )
    assert payload["id"] == str(event.id)


async def test_rotation_grace_sends_both_signatures(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path = await subscribe(client, tenant, receiver)
    old_secret = endpoint["signingSecret"]
    rotated = await client.post(
        f"/api/v1/webhooks/{endpoint['id']}/rotate",
        json={"expireCurrentInSeconds": 600},
        headers=tenant.headers,
    )
    new_secret = rotated.json()["signingSecret"]
    await emit(runtime, tenant)
    (request,) = await requests_arriving(receiver, path, 1)
    signatures = request.headers["webhook-signature"].split(" ")
    assert len(signatures) == 2
    assert all(s.startswith("v1=") for s in signatures)
    for secret in (old_secret, new_secret):
        verify(secret, request.headers, request.body)
        standardwebhooks.Webhook(secret).verify(request.body, standard_headers(request))


async def test_rotation_without_grace_signs_with_the_new_secret_only(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path = await subscribe(client, tenant, receiver)
    rotated = await client.post(f"/api/v1/webhooks/{endpoint['id']}/rotate", headers=tenant.headers)
    await emit(runtime, tenant)
    (request,) = await requests_arriving(receiver, path, 1)
    assert len(request.headers["webhook-signature"].split(" ")) == 1
    verify(rotated.json()["signingSecret"], request.headers, request.body)
    with pytest.raises(WebhookVerificationError):
        verify(endpoint["signingSecret"], request.headers, request.body)


async def test_after_the_rotation_grace_only_the_new_secret_signs(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path = await subscribe(client, tenant, receiver)
    old_secret = endpoint["signingSecret"]
    rotated = await client.post(
        f"/api/v1/webhooks/{endpoint['id']}/rotate",
        json={"expireCurrentInSeconds": 1},
        headers=tenant.headers,
    )
    assert rotated.json()["secret"]["previousExpiresAt"] is not None
    new_secret = rotated.json()["signingSecret"]

    async def grace_over() -> dict[str, Any] | None:
        read = await client.get(f"/api/v1/webhooks/{endpoint['id']}", headers=tenant.headers)
        return read.json() if read.json()["secret"]["previousExpiresAt"] is None else None

    await eventually(grace_over, timeout=5, what="the rotation grace to end")
    await emit(runtime, tenant)
    (request,) = await requests_arriving(receiver, path, 1)
    (signature,) = request.headers["webhook-signature"].split(" ")
    assert signature.startswith("v1=")
    verify(new_secret, request.headers, request.body)
    standardwebhooks.Webhook(new_secret).verify(request.body, standard_headers(request))
    with pytest.raises(WebhookVerificationError):
        verify(old_secret, request.headers, request.body)
    with pytest.raises(standardwebhooks.WebhookVerificationError):
        standardwebhooks.Webhook(old_secret).verify(request.body, standard_headers(request))


async def test_redirect_is_a_failure_that_is_recorded_and_not_followed(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path = await subscribe(client, tenant, receiver)
    receiver.respond(302, location=receiver.url_for("/elsewhere"), path=path)
    _, (delivery,) = await emit(runtime, tenant)
    settled = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    assert settled["status"] == "exhausted"
    assert settled["responseStatus"] == 302
    (attempt,) = settled["attempts"]
    assert attempt["responseStatus"] == 302
    assert attempt["outcome"] == "failed"
    assert attempt["error"]["code"] == "redirect"
    assert requests_to(receiver, "/elsewhere") == []
    assert len(requests_to(receiver, path)) == 1


async def test_server_error_is_retried_on_schedule_then_exhausted(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path = await subscribe(client, tenant, receiver)
    receiver.respond(500, times=10, path=path)
    event, (delivery,) = await emit(runtime, tenant)
    settled = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    # The schedule "0.05,0.05" has two retries: three attempts in all.
    assert settled["status"] == "exhausted"
    assert settled["attemptCount"] == 3
    attempts = settled["attempts"]
    assert [a["number"] for a in attempts] == [1, 2, 3]
    assert [a["trigger"] for a in attempts] == ["scheduled"] * 3
    assert {(a["responseStatus"], a["outcome"], a["error"]["code"]) for a in attempts} == {
        (500, "failed", "http_error")
    }
    started = [datetime.fromisoformat(a["startedAt"]) for a in attempts]
    assert all((b - a).total_seconds() >= 0.05 for a, b in itertools.pairwise(started))
    requests = requests_to(receiver, path)
    assert len(requests) == 3
    assert {r.headers["webhook-id"] for r in requests} == {str(event.id)}


@pytest.mark.parametrize("status", [408, 425, 429, 502, 503])
async def test_retryable_status_is_retried_until_it_succeeds(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    status: int,
):
    endpoint, path = await subscribe(client, tenant, receiver)
    receiver.respond(status, path=path)
    _, (delivery,) = await emit(runtime, tenant)
    settled = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    assert settled["status"] == "succeeded"
    assert [a["responseStatus"] for a in settled["attempts"]] == [status, 200]


@pytest.mark.parametrize("status", [400, 401, 404, 410, 422, 301, 307])
async def test_other_status_ends_the_delivery_at_once(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    status: int,
):
    endpoint, path = await subscribe(client, tenant, receiver)
    receiver.respond(status, times=3, path=path)
    _, (delivery,) = await emit(runtime, tenant)
    settled = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    assert settled["status"] == "exhausted"
    assert settled["attemptCount"] == 1
    assert settled["responseStatus"] == status
    assert len(requests_to(receiver, path)) == 1


async def test_timeout_is_retried(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path = await subscribe(client, tenant, receiver)
    # Longer than one attempt may take.
    receiver.respond(200, delay=TIMEOUT_SECONDS + 1.5, path=path)
    _, (delivery,) = await emit(runtime, tenant)
    settled = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    assert settled["status"] == "succeeded"
    first, second = settled["attempts"]
    assert first["outcome"] == "failed"
    assert first["responseStatus"] is None
    assert first["error"]["code"] == "timeout"
    assert second["outcome"] == "succeeded"


async def test_retry_after_is_honoured(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path = await subscribe(client, tenant, receiver)
    receiver.respond(429, retry_after=1, path=path)
    _, (delivery,) = await emit(runtime, tenant)
    settled = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    first, second = (datetime.fromisoformat(a["startedAt"]) for a in settled["attempts"])
    assert (second - first).total_seconds() >= 1.0


@pytest.mark.parametrize("form", ["seconds", "http-date"])
async def test_retry_after_is_bounded_to_an_hour(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    form: str,
):
    endpoint, path = await subscribe(client, tenant, receiver)
    two_days = 2 * 86400
    retry_after = (
        str(two_days)
        if form == "seconds"
        else email.utils.formatdate(time.time() + two_days, usegmt=True)
    )
    receiver.respond(503, retry_after=retry_after, path=path)
    _, (delivery,) = await emit(runtime, tenant)

    async def first_attempt_recorded() -> dict[str, Any] | None:
        current = await get_delivery(client, tenant, endpoint["id"], delivery.id)
        return current if current["attemptCount"] == 1 else None

    waiting = await eventually(first_attempt_recorded, what="the first attempt")
    assert waiting["status"] == "pending"
    (attempt,) = waiting["attempts"]
    wait = (
        datetime.fromisoformat(waiting["nextAttemptAt"])
        - datetime.fromisoformat(attempt["startedAt"])
    ).total_seconds()
    # Far beyond the 0.05 s schedule (honoured), and no further than an hour (bounded).
    assert 3599.99 <= wait <= 3600 + 10
    assert len(requests_to(receiver, path)) == 1


async def test_response_bodies_are_never_recorded(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path = await subscribe(client, tenant, receiver)
    receiver.respond(500, body=b"stack trace: hunter2", path=path)
    _, (delivery,) = await emit(runtime, tenant)
    settled = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    listed = await client.get(
        f"/api/v1/webhooks/{endpoint['id']}/deliveries", headers=tenant.headers
    )
    for text in (json.dumps(settled), listed.text):
        assert "hunter2" not in text


async def test_name_resolving_to_a_private_address_is_blocked_at_attempt_time(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    monkeypatch: pytest.MonkeyPatch,
):
    asked: list[str] = []

    async def getaddrinfo(host: str, port: int, **kwargs: object) -> list[tuple[Any, ...]]:
        # The system resolver's answer for a name an attacker points at the internal network.
        asked.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", port))]

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", getaddrinfo)
    endpoint = await create_endpoint(client, tenant, "https://rebind.example.net/hook")
    connections_before = receiver.accepted_connections
    _, (delivery,) = await emit(runtime, tenant)
    settled = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    assert settled["status"] == "exhausted"
    assert settled["responseStatus"] is None
    for attempt in settled["attempts"]:
        assert attempt["error"]["code"] == "destination_blocked"
        # What the name resolves to stays in the operator's logs, out of the delivery log.
        assert attempt["error"]["message"] == (
            "not sent: host rebind.example.net is not a public destination "
            "(it resolves to a private address)"
        )
        assert attempt["responseStatus"] is None
    # Resolved again right before each attempt, not once and remembered.
    assert asked.count("rebind.example.net") == len(settled["attempts"]) == 3
    assert receiver.accepted_connections == connections_before


async def test_reserved_name_reaches_the_receiver_through_the_resolve_setting(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    path = unique_path()
    endpoint = await create_endpoint(client, tenant, receiver.url_for(path, "receiver.test"))
    _, (delivery,) = await emit(runtime, tenant)
    (request,) = await requests_arriving(receiver, path, 1)
    assert request.sni == "receiver.test"
    settled = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    assert settled["status"] == "succeeded"


async def test_events_reach_only_endpoints_subscribed_to_them(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    media, media_path = await subscribe(client, tenant, receiver, events=["media.created.v1"])
    posts, posts_path = await subscribe(client, tenant, receiver, events=["post.created.v1"])
    event, deliveries = await emit(runtime, tenant, "media.created.v1", {"media": {"id": "m"}})
    assert [str(d.endpoint_id) for d in deliveries] == [media["id"]]
    (request,) = await requests_arriving(receiver, media_path, 1)
    assert request.headers["webhook-id"] == str(event.id)
    assert requests_to(receiver, posts_path) == []
    assert posts["id"] != media["id"]


async def test_disabled_endpoint_receives_nothing_and_resumes_when_enabled(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    worker: WorkerRunner,
):
    await worker.stop()  # queue a delivery while no worker runs, then disable its endpoint
    endpoint, path = await subscribe(client, tenant, receiver)
    _, (held,) = await emit(runtime, tenant)
    before = await get_delivery(client, tenant, endpoint["id"], held.id)
    disabled = await client.patch(
        f"/api/v1/webhooks/{endpoint['id']}", json={"enabled": False}, headers=tenant.headers
    )
    assert disabled.status_code == 200
    _, created_while_disabled = await emit(runtime, tenant)
    assert created_while_disabled == []

    # Prove the worker is running and sending, to another endpoint, while this one is held.
    from pressroom.workers.loops import webhook_loops

    running = WorkerRunner(runtime, webhook_loops(), grace_seconds=5)
    await running.start()
    try:
        probe, probe_path = await subscribe(client, tenant, receiver)
        _, (probe_delivery,) = await emit(runtime, tenant)
        await settled_delivery(client, tenant, probe["id"], probe_delivery.id)
        assert requests_to(receiver, path) == []
        assert (await get_delivery(client, tenant, endpoint["id"], held.id))["status"] == "pending"

        enabled = await client.patch(
            f"/api/v1/webhooks/{endpoint['id']}", json={"enabled": True}, headers=tenant.headers
        )
        assert enabled.status_code == 200
        settled = await settled_delivery(client, tenant, endpoint["id"], held.id)
    finally:
        await running.stop()
    assert settled["status"] == "succeeded"
    assert settled["expiresAt"] == before["expiresAt"]
    assert len(requests_to(receiver, path)) == 1
    assert len(requests_to(receiver, probe_path)) == 1


async def test_slow_endpoint_holds_only_its_own_slots(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    slow, slow_path = await subscribe(client, tenant, receiver, events=["post.created.v1"])
    receiver.respond(200, delay=0.8, times=40, path=slow_path)
    fast, fast_path = await subscribe(client, tenant, receiver, events=["media.created.v1"])
    for _ in range(20):
        await emit(runtime, tenant, "post.created.v1")
    await requests_arriving(receiver, slow_path, IN_FLIGHT_PER_ENDPOINT)
    started = time.monotonic()
    _, (delivery,) = await emit(runtime, tenant, "media.created.v1", {"media": {"id": "m"}})
    await requests_arriving(receiver, fast_path, 1)
    assert time.monotonic() - started < 0.5
    settled = await settled_delivery(client, tenant, fast["id"], delivery.id)
    assert settled["status"] == "succeeded"
    assert receiver.max_in_flight_by_path[slow_path] == IN_FLIGHT_PER_ENDPOINT
    assert slow["id"] != fast["id"]


async def test_deliveries_to_an_endpoint_reuse_one_connection(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    endpoint, path = await subscribe(client, tenant, receiver)
    receiver.respond(200, body=b"thanks", path=path)
    accepted = receiver.accepted_connections
    for count in (1, 2, 3):  # one after the other: each finds the previous connection idle
        _, (delivery,) = await emit(runtime, tenant)
        await settled_delivery(client, tenant, endpoint["id"], delivery.id)
        assert len(requests_to(receiver, path)) == count
    assert receiver.accepted_connections - accepted == 1


async def test_cookies_a_receiver_sets_are_never_sent_back(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, receiver: WebhookReceiver
):
    """Endpoints of different organizations may share a host: nothing one receiver sets may
    reach the next delivery."""
    first, first_path = await subscribe(client, tenant, receiver)
    second, second_path = await subscribe(client, tenant, receiver)
    receiver.respond(200, headers={"Set-Cookie": "session=hunter2; Path=/"}, path=first_path)
    _, deliveries = await emit(runtime, tenant)
    for endpoint in (first, second):
        (delivery,) = [d for d in deliveries if str(d.endpoint_id) == endpoint["id"]]
        await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    _, deliveries = await emit(runtime, tenant)
    (later,) = [d for d in deliveries if str(d.endpoint_id) == second["id"]]
    await settled_delivery(client, tenant, second["id"], later.id)
    sent = requests_to(receiver, first_path) + requests_to(receiver, second_path)
    assert len(sent) == 4
    assert all("cookie" not in request.headers for request in sent)


async def test_each_delivery_to_a_healthy_receiver_arrives_exactly_once(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    receiver: WebhookReceiver,
    worker: WorkerRunner,
):
    """Two delivery workers share the queue (on PostgreSQL they claim concurrently, with SKIP
    LOCKED); on the normal path nothing is sent twice."""
    from pressroom.workers.loops import webhook_loops

    paths = [(await subscribe(client, tenant, receiver))[1] for _ in range(2)]
    second = WorkerRunner(runtime, webhook_loops(), grace_seconds=10)
    await second.start()
    deliveries: list[Delivery] = []
    try:
        for _ in range(4):
            async with unit_of_work(runtime.sessions) as session:
                for _ in range(25):
                    _, emitted = await emit_event(
                        session,
                        runtime.notifier,
                        organization_id=tenant.organization_id,
                        event_type="post.created.v1",
                        data={"post": {"id": "p"}},
                        retention_seconds=runtime.settings.webhook_retention_seconds,
                    )
                    deliveries += emitted
        ids = [d.id for d in deliveries]

        async def all_succeeded() -> bool | None:
            async with unit_of_work(runtime.sessions) as session:
                done = await session.scalar(
                    select(func.count()).where(Delivery.id.in_(ids), Delivery.status == "succeeded")
                )
            return True if done == len(ids) else None

        await eventually(all_succeeded, timeout=60, what=f"{len(ids)} deliveries to succeed")
    finally:
        await second.stop()
    await worker.stop()  # every attempt under way has finished: nothing more can arrive
    assert len(deliveries) == 200
    for path in paths:
        counts = Counter(r.headers["webhook-id"] for r in requests_to(receiver, path))
        assert len(counts) == 100
        assert set(counts.values()) == {1}
    async with unit_of_work(runtime.sessions) as session:
        attempts = await session.scalar(
            select(func.count()).where(DeliveryAttempt.delivery_id.in_(ids))
        )
    assert attempts == len(deliveries)
