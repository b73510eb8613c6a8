"""The webhook settings of contract section 11, read from the environment as `pressroom worker`
reads them, and PRESSROOM_WEBHOOK_RESOLVE / PRESSROOM_WEBHOOK_CA_BUNDLE steering real deliveries
through the production client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from pressroom.config import Settings
from pressroom.runtime import Runtime
from pressroom.webhooks import verify
from pressroom.workers.loops import webhook_loops
from pressroom.workers.runner import WorkerRunner
from tests.factories import Tenant

from .factories import create_endpoint
from .factories import emit
from .factories import eventually
from .factories import get_delivery
from .factories import requests_arriving
from .factories import settle_queue
from .factories import settled_delivery
from .factories import unique_path
from .receiver import WebhookReceiver

WEBHOOK_VARIABLES = (
    "PRESSROOM_WEBHOOK_TIMEOUT_SECONDS",
    "PRESSROOM_WEBHOOK_RETRY_SCHEDULE",
    "PRESSROOM_WEBHOOK_RETENTION_SECONDS",
    "PRESSROOM_WEBHOOK_RESOLVE",
    "PRESSROOM_WEBHOOK_CA_BUNDLE",
)


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in WEBHOOK_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_defaults_are_the_contracts(clean_environment: pytest.MonkeyPatch) -> None:
    settings = Settings()
    assert settings.webhook_timeout_seconds == 10
    assert settings.retry_delays == (5, 60, 300, 1800, 7200, 18000, 36000)
    assert len(settings.retry_delays) + 1 == 8  # attempts at most
    assert settings.webhook_retention_seconds == 72 * 3600
    assert settings.webhook_resolve is None
    assert settings.webhook_ca_bundle is None


def test_settings_come_from_the_environment(clean_environment: pytest.MonkeyPatch) -> None:
    clean_environment.setenv("PRESSROOM_WEBHOOK_TIMEOUT_SECONDS", "2.5")
    clean_environment.setenv("PRESSROOM_WEBHOOK_RETRY_SCHEDULE", "0.5, 30,600")
    clean_environment.setenv("PRESSROOM_WEBHOOK_RETENTION_SECONDS", "3600")
    clean_environment.setenv("PRESSROOM_WEBHOOK_RESOLVE", "hooks.example.com=127.0.0.1:8443")
    clean_environment.setenv("PRESSROOM_WEBHOOK_CA_BUNDLE", "/etc/pressroom/test-ca.pem")
    settings = Settings()
    assert settings.webhook_timeout_seconds == 2.5
    assert settings.retry_delays == (0.5, 30, 600)
    assert settings.webhook_retention_seconds == 3600
    assert settings.webhook_resolve == "hooks.example.com=127.0.0.1:8443"
    assert settings.webhook_ca_bundle == "/etc/pressroom/test-ca.pem"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("PRESSROOM_WEBHOOK_TIMEOUT_SECONDS", "0"),
        ("PRESSROOM_WEBHOOK_TIMEOUT_SECONDS", "-1"),
        ("PRESSROOM_WEBHOOK_RETRY_SCHEDULE", "5,soon"),
        ("PRESSROOM_WEBHOOK_RETRY_SCHEDULE", "5,-1"),
        ("PRESSROOM_WEBHOOK_RETRY_SCHEDULE", "5,inf"),
        ("PRESSROOM_WEBHOOK_RETRY_SCHEDULE", "nan"),
        ("PRESSROOM_WEBHOOK_RESOLVE", "hooks.example.com"),
        ("PRESSROOM_WEBHOOK_RESOLVE", "hooks.example.com=localhost:8443"),
        ("PRESSROOM_WEBHOOK_RESOLVE", "hooks.example.com=127.0.0.1"),
    ],
)
def test_malformed_setting_stops_start_up(
    clean_environment: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    clean_environment.setenv(variable, value)
    with pytest.raises(ValidationError, match=variable.removeprefix("PRESSROOM_").lower()):
        Settings()


@pytest.fixture
def worker_environment(
    clean_environment: pytest.MonkeyPatch, settings: Settings, tmp_path: Path
) -> Callable[[dict[str, str]], Settings]:
    """Settings for a worker node built from environment variables alone."""

    def build(variables: dict[str, str]) -> Settings:
        clean_environment.setenv("PRESSROOM_DATABASE_URL", settings.effective_database_url)
        clean_environment.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "worker"))
        clean_environment.setenv("PRESSROOM_SECRET_KEY", settings.secret_key or "")
        for name, value in variables.items():
            clean_environment.setenv(name, value)
        return Settings()

    return build


@asynccontextmanager
async def worker_node(settings: Settings) -> AsyncIterator[Runtime]:
    """A worker node's webhook loops on its own runtime; yields that runtime."""
    runtime = Runtime.build(settings)
    runner = WorkerRunner(runtime, webhook_loops(), grace_seconds=5)
    await settle_queue(runtime)
    await runner.start()
    try:
        yield runtime
    finally:
        await runner.stop()
        await runtime.close()


async def test_resolve_and_ca_bundle_variables_route_deliveries_to_the_receiver(
    client: httpx.AsyncClient,
    tenant: Tenant,
    receiver: WebhookReceiver,
    worker_environment: Callable[[dict[str, str]], Settings],
):
    from_environment = worker_environment(
        {
            "PRESSROOM_WEBHOOK_RESOLVE": receiver.resolve_setting,
            "PRESSROOM_WEBHOOK_CA_BUNDLE": receiver.ca_bundle_path,
        }
    )
    assert from_environment.webhook_resolve == receiver.resolve_setting
    path = unique_path()
    endpoint = await create_endpoint(client, tenant, receiver.url_for(path))
    async with worker_node(from_environment) as node:
        event, (delivery,) = await emit(node, tenant)
        (request,) = await requests_arriving(receiver, path, 1)
        settled = await settled_delivery(client, tenant, endpoint["id"], delivery.id)
    assert request.sni == request.headers["host"] == receiver.hostname
    assert request.headers["webhook-id"] == str(event.id)
    verify(endpoint["signingSecret"], request.headers, request.body)
    assert settled["status"] == "succeeded"


async def test_without_the_ca_bundle_variable_the_receiver_certificate_is_refused(
    client: httpx.AsyncClient,
    tenant: Tenant,
    receiver: WebhookReceiver,
    worker_environment: Callable[[dict[str, str]], Settings],
):
    from_environment = worker_environment(
        {
            "PRESSROOM_WEBHOOK_RESOLVE": receiver.resolve_setting,
            "PRESSROOM_WEBHOOK_RETRY_SCHEDULE": "60",
        }
    )
    path = unique_path()
    endpoint = await create_endpoint(client, tenant, receiver.url_for(path))
    connections = receiver.accepted_connections
    async with worker_node(from_environment) as node:
        _, (delivery,) = await emit(node, tenant)

        async def first_attempt() -> dict[str, Any] | None:
            current = await get_delivery(client, tenant, endpoint["id"], delivery.id)
            return current if current["attemptCount"] == 1 else None

        failed = await eventually(first_attempt, what="the first attempt")
    (attempt,) = failed["attempts"]
    assert attempt["error"]["code"] == "tls_error"
    assert attempt["responseStatus"] is None
    assert failed["status"] == "pending"  # a TLS error is retried
    # The connection reached the receiver (the resolve override), the handshake did not pass.
    assert receiver.accepted_connections > connections
    assert receiver.requests == []
