"""The sandbox simulator as a network seen from outside, and the adapter registry."""

from __future__ import annotations

import time
import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest
from sqlalchemy import select

from pressroom.channels.adapters import adapter_for
from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.registry import UnconfiguredAdapter
from pressroom.providers.registry import configured_providers
from pressroom.providers.sandbox.adapter import SandboxAdapter
from pressroom.providers.sandbox.adapter import simulated_metrics
from pressroom.providers.sandbox.models import SandboxPublication
from pressroom.runtime import Runtime

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def channel(provider: str = "sandbox", *, simulated: bool = False) -> ChannelContext:
    return ChannelContext(
        id=uuid.uuid4(),
        organization_id=uuid.uuid4(),
        provider=provider,
        handle="@t",
        simulated=simulated,
    )


def request(
    context: ChannelContext | None = None,
    *,
    key: str | None = None,
    options: dict[str, object] | None = None,
    attempt: int = 1,
) -> PublishRequest:
    return PublishRequest(
        channel=context or channel(),
        target_id=uuid.uuid4(),
        content_kind="post",
        text="hello",
        media=(),
        options=dict(options or {}),
        idempotency_key=key or f"{uuid.uuid4()}:1",
        attempt=attempt,
    )


async def test_publish_returns_an_id_and_the_sandbox_url(runtime: Runtime):
    result = await adapter_for(channel(), runtime).publish(request())
    assert result.provider_post_id
    assert result.url == f"https://sandbox.invalid/p/{result.provider_post_id}"
    assert result.published_at.tzinfo is not None


async def test_the_same_idempotency_key_returns_the_same_post(runtime: Runtime):
    adapter = adapter_for(channel(), runtime)
    sent = request()
    first = await adapter.publish(sent)
    again = await adapter.publish(sent)
    assert again == first
    async with unit_of_work(runtime.sessions) as session:
        rows = (
            await session.scalars(
                select(SandboxPublication).where(
                    SandboxPublication.idempotency_key == sent.idempotency_key
                )
            )
        ).all()
    assert [(row.provider_post_id, row.calls) for row in rows] == [(first.provider_post_id, 2)]


async def test_text_rejected_is_permanent(runtime: Runtime):
    with pytest.raises(ProviderError) as raised:
        await adapter_for(channel(), runtime).publish(
            request(options={"simulate": "text_rejected"})
        )
    assert (raised.value.code, raised.value.retryable) == ("text_rejected", False)


async def test_auth_expired_is_permanent(runtime: Runtime):
    with pytest.raises(ProviderError) as raised:
        await adapter_for(channel(), runtime).publish(request(options={"simulate": "auth_expired"}))
    assert (raised.value.code, raised.value.retryable) == ("auth_expired", False)


async def test_provider_unavailable_fails_fail_times_times_then_succeeds(runtime: Runtime):
    adapter = adapter_for(channel(), runtime)
    options = {"simulate": "provider_unavailable", "failTimes": 2}
    for attempt in (1, 2):
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(request(options=options, attempt=attempt))
        assert (raised.value.code, raised.value.retryable) == ("provider_unavailable", True)
    assert (await adapter.publish(request(options=options, attempt=3))).provider_post_id


async def test_provider_unavailable_without_fail_times_fails_forever(runtime: Runtime):
    with pytest.raises(ProviderError):
        await adapter_for(channel(), runtime).publish(
            request(options={"simulate": "provider_unavailable"}, attempt=50)
        )


async def test_latency_is_configurable(settings: Settings):
    slow = Runtime.build(settings.model_copy(update={"sandbox_latency_ms": 200}))
    try:
        started = time.monotonic()
        await adapter_for(channel(), slow).publish(request())
        assert time.monotonic() - started >= 0.2
    finally:
        await slow.close()


def test_metrics_are_deterministic_and_grow_with_time():
    post_id = uuid.uuid4().hex
    hour = simulated_metrics(post_id, T0, T0 + timedelta(hours=1))
    day = simulated_metrics(post_id, T0, T0 + timedelta(days=1))
    assert simulated_metrics(post_id, T0, T0 + timedelta(hours=1)) == hour
    assert set(hour) == {
        "impressions",
        "reach",
        "views",
        "likes",
        "comments",
        "shares",
        "saves",
        "clicks",
    }
    assert all(day[key] >= hour[key] for key in hour)
    assert day["impressions"] > hour["impressions"] > 0
    assert day["reach"] <= day["impressions"]
    assert simulated_metrics(post_id, T0, T0) == dict.fromkeys(hour, 0)


async def test_a_simulated_channel_reports_only_its_providers_metrics(runtime: Runtime):
    metrics = await adapter_for(channel("bluesky", simulated=True), runtime).fetch_metrics(
        channel("bluesky", simulated=True), "abc", T0
    )
    assert set(metrics) == {"likes", "comments", "shares"}


async def test_delete_removes_the_post_and_a_second_delete_is_not_found(runtime: Runtime):
    context = channel()
    adapter = adapter_for(context, runtime)
    post = await adapter.publish(request(context))
    await adapter.delete(context, post.provider_post_id)
    with pytest.raises(ProviderError) as raised:
        await adapter.delete(context, post.provider_post_id)
    assert raised.value.code == "not_found"


def test_the_registry_gives_the_simulator_to_the_sandbox_and_simulated_channels(runtime: Runtime):
    assert isinstance(adapter_for(channel(), runtime), SandboxAdapter)
    assert isinstance(adapter_for(channel("x", simulated=True), runtime), SandboxAdapter)


async def test_a_provider_without_an_adapter_fails_permanently_and_never_succeeds(
    runtime: Runtime,
):
    context = channel("myspace")  # every declared network has an adapter now
    adapter = adapter_for(context, runtime)
    assert isinstance(adapter, UnconfiguredAdapter)
    with pytest.raises(ProviderError) as raised:
        await adapter.publish(request(context))
    assert raised.value.retryable is False
    assert (await adapter.check_health(context)).state == "degraded"


def test_only_providers_with_adapters_are_configured():
    assert "sandbox" in configured_providers()
    assert "pinterest" not in configured_providers()
