"""The registry picks each channel's adapter; the real ones share the process's HTTP client,
and `configured` follows the deployment's settings."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from pressroom.app import create_app
from pressroom.channels.adapters import adapter_for
from pressroom.config import Settings
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.bluesky import BlueskyAdapter
from pressroom.providers.mastodon.adapter import MastodonAdapter
from pressroom.providers.registry import UnconfiguredAdapter
from pressroom.providers.registry import configured_providers
from pressroom.providers.registry import x_app
from pressroom.providers.sandbox.adapter import SandboxAdapter
from pressroom.providers.x import XAdapter
from pressroom.runtime import Runtime
from tests.factories import Tenant


def context(provider: str, *, simulated: bool = False) -> ChannelContext:
    return ChannelContext(
        id=uuid.uuid4(),
        organization_id=uuid.uuid4(),
        provider=provider,
        handle=None,
        simulated=simulated,
        credentials={},
    )


@pytest.mark.parametrize(
    ("provider", "adapter_type"),
    [("bluesky", BlueskyAdapter), ("mastodon", MastodonAdapter), ("x", XAdapter)],
)
def test_real_providers_get_their_adapter(
    runtime: Runtime, provider: str, adapter_type: type
) -> None:
    assert isinstance(adapter_for(context(provider), runtime), adapter_type)


@pytest.mark.parametrize("provider", ["bluesky", "mastodon", "x", "pinterest"])
def test_simulated_channels_of_any_provider_get_the_simulator(
    runtime: Runtime, provider: str
) -> None:
    assert isinstance(adapter_for(context(provider, simulated=True), runtime), SandboxAdapter)


async def test_a_provider_without_an_adapter_fails_permanently(runtime: Runtime) -> None:
    adapter = adapter_for(context("myspace"), runtime)
    assert isinstance(adapter, UnconfiguredAdapter)
    health = await adapter.check_health(context("myspace"))
    assert health.state == "degraded"


async def test_real_adapters_share_the_runtimes_client_which_closes_with_it(
    settings: Settings,
) -> None:
    runtime = Runtime.build(settings)
    first = adapter_for(context("bluesky"), runtime)
    second = adapter_for(context("mastodon"), runtime)
    client = runtime.provider_http
    assert first._http is client  # type: ignore[attr-defined]
    assert second._http is client  # type: ignore[attr-defined]
    # The shared client is never closed by an adapter.
    await first.aclose()  # type: ignore[attr-defined]
    assert not client.is_closed
    await runtime.close()
    assert client.is_closed


def test_bluesky_and_mastodon_are_configured_without_settings_x_needs_its_app(
    settings: Settings,
) -> None:
    assert configured_providers(settings) == {"sandbox", "bluesky", "mastodon"}
    with_x = settings.model_copy(update={"x_client_id": "x-client"})
    assert configured_providers(with_x) == {"sandbox", "bluesky", "mastodon", "x"}


def test_x_app_carries_the_client_secret_without_showing_it(settings: Settings) -> None:
    assert x_app(settings) is None
    configured = settings.model_copy(
        update={"x_client_id": "x-client", "x_client_secret": SecretStr("x-secret-value")}
    )
    app = x_app(configured, redirect_uri="https://pressroom.example/connect/x/callback")
    assert app is not None
    assert (app.client_id, app.client_secret) == ("x-client", "x-secret-value")
    assert "x-secret-value" not in repr(app)
    assert "x-secret-value" not in repr(configured)


@pytest.fixture
async def x_configured_app(settings: Settings) -> AsyncIterator[FastAPI]:
    runtime = Runtime.build(
        settings.model_copy(
            update={"x_client_id": "x-client", "x_client_secret": SecretStr("x-secret-value")}
        )
    )
    yield create_app(runtime=runtime)
    await runtime.close()


async def _configured(app: FastAPI, tenant: Tenant) -> dict[str, bool]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        response = await client.get("/api/v1/providers?pageSize=100", headers=tenant.headers)
    assert response.status_code == 200
    assert "x-secret-value" not in response.text
    return {item["id"]: item["configured"] for item in response.json()["items"]}


async def test_providers_declare_configured_as_the_deployment_is(
    app: FastAPI, x_configured_app: FastAPI, tenant: Tenant
) -> None:
    without_x = await _configured(app, tenant)
    assert [p for p, configured in without_x.items() if configured] == [
        "bluesky",
        "mastodon",
        "sandbox",
    ]
    with_x = await _configured(x_configured_app, tenant)
    assert [p for p, configured in with_x.items() if configured] == [
        "x",
        "bluesky",
        "mastodon",
        "sandbox",
    ]
