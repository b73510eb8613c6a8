"""The adapter interface: classified provider errors, and how the publisher treats an adapter
that breaks its promises (raises something else, answers without an id, never answers)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from datetime import UTC
from datetime import datetime

import httpx
import pytest

from pressroom.config import Settings
from pressroom.providers.adapter import ERROR_CODES
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.publishing import worker
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import create_post
from tests.posts.factories import get_post
from tests.posts.factories import post_body
from tests.posts.factories import publish_all_due


@pytest.mark.parametrize(
    ("code", "retryable"),
    [
        ("auth_expired", False),
        ("rate_limited", True),
        ("media_rejected", False),
        ("text_rejected", False),
        ("provider_unavailable", True),
        ("timeout", True),
        ("channel_disconnected", False),
    ],
)
def test_contract_error_codes_say_whether_a_retry_can_help(code: str, retryable: bool) -> None:
    assert ERROR_CODES[code] is retryable
    error = ProviderError(code, "what to do about it")
    assert (error.code, error.retryable, error.message) == (code, retryable, "what to do about it")


def test_an_adapter_may_override_retryable_and_pass_retry_after() -> None:
    error = ProviderError("invalid_request", "duplicate request id", retryable=True, retry_after=30)
    assert (error.retryable, error.retry_after) == (True, 30)


def test_an_unclassified_error_code_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown provider error code"):
        ProviderError("it_broke", "no code of the contract")


class ScriptedAdapter:
    """A network whose publish does what the test says."""

    provider = "sandbox"

    def __init__(self, publish: Callable[[PublishRequest], Awaitable[PublishResult]]) -> None:
        self._publish = publish

    async def publish(self, request: PublishRequest) -> PublishResult:
        return await self._publish(request)

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        raise ProviderError("not_found", "nothing to delete")

    async def fetch_metrics(
        self, channel: ChannelContext, provider_post_id: str, published_at: datetime
    ) -> dict[str, int]:
        return {}

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        return HealthResult(state="healthy")


@pytest.fixture
async def quick(settings: Settings) -> AsyncIterator[Runtime]:
    """Two attempts, the retry at once; a publish may take half a second."""
    runtime = Runtime.build(
        settings.model_copy(
            update={
                "publisher_retry_schedule": "0",
                "publisher_publish_timeout_seconds": 0.5,
            }
        )
    )
    yield runtime
    await runtime.close()


def scripted(
    monkeypatch: pytest.MonkeyPatch, publish: Callable[[PublishRequest], Awaitable[PublishResult]]
) -> None:
    adapter = ScriptedAdapter(publish)
    monkeypatch.setattr(worker, "adapter_for", lambda channel, runtime=None: adapter)


async def publish_one(
    client: httpx.AsyncClient, runtime: Runtime, quick: Runtime, tenant: Tenant
) -> dict[str, object]:
    channel = await connect_channel(runtime, tenant.organization_id)
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    await publish_all_due(quick)
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    return target  # type: ignore[no-any-return]


async def test_an_adapter_that_raises_something_else_is_retried_then_fails(
    client: httpx.AsyncClient,
    runtime: Runtime,
    quick: Runtime,
    tenant: Tenant,
    monkeypatch: pytest.MonkeyPatch,
):
    async def explode(request: PublishRequest) -> PublishResult:
        raise KeyError("a bug in the adapter")

    scripted(monkeypatch, explode)
    target = await publish_one(client, runtime, quick, tenant)
    assert (target["status"], target["attempts"]) == ("failed", 2)
    assert target["error"] == {
        "code": "provider_unavailable",
        "message": "The publish failed unexpectedly; it will be retried.",
        "retryable": True,
    }


async def test_an_answer_without_a_post_id_is_not_a_publication(
    client: httpx.AsyncClient,
    runtime: Runtime,
    quick: Runtime,
    tenant: Tenant,
    monkeypatch: pytest.MonkeyPatch,
):
    async def no_id(request: PublishRequest) -> PublishResult:
        return PublishResult(provider_post_id="", url=None, published_at=datetime.now(UTC))

    scripted(monkeypatch, no_id)
    target = await publish_one(client, runtime, quick, tenant)
    assert (target["status"], target["providerPostId"], target["publishedAt"]) == (
        "failed",
        None,
        None,
    )
    assert target["error"]["code"] == "provider_unavailable"  # type: ignore[index]


async def test_an_adapter_that_never_answers_times_out_after_the_publish_timeout(
    client: httpx.AsyncClient,
    runtime: Runtime,
    quick: Runtime,
    tenant: Tenant,
    monkeypatch: pytest.MonkeyPatch,
):
    async def hang(request: PublishRequest) -> PublishResult:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    scripted(monkeypatch, hang)
    target = await publish_one(client, runtime, quick, tenant)
    assert (target["status"], target["attempts"]) == ("failed", 2)
    assert target["error"]["code"] == "timeout"  # type: ignore[index]
    assert target["error"]["retryable"] is True  # type: ignore[index]


async def test_the_adapter_gets_the_effective_content_and_a_stable_idempotency_key(
    client: httpx.AsyncClient,
    runtime: Runtime,
    quick: Runtime,
    tenant: Tenant,
    monkeypatch: pytest.MonkeyPatch,
):
    received: list[PublishRequest] = []

    async def flaky(request: PublishRequest) -> PublishResult:
        received.append(request)
        if len(received) == 1:
            raise ProviderError("rate_limited", "slow down")
        return PublishResult("p-1", "https://example.invalid/p-1", datetime.now(UTC))

    scripted(monkeypatch, flaky)
    channel = await connect_channel(runtime, tenant.organization_id)
    body = post_body(
        channel,
        publishNow=True,
        targets=[{"channelId": str(channel), "text": "Own text", "options": {"failTimes": 0}}],
    )
    post = await create_post(client, tenant, body)
    await publish_all_due(quick)
    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert (target["status"], target["providerPostId"]) == ("published", "p-1")
    first, second = received
    assert (first.attempt, second.attempt) == (1, 2)
    assert first.idempotency_key == second.idempotency_key
    assert first.idempotency_key.startswith(f"{target['id']}:")
    assert (first.text, first.options, first.target_id) == (
        "Own text",
        {"failTimes": 0},
        uuid.UUID(target["id"]),
    )
    assert (first.channel.id, first.channel.organization_id) == (
        channel,
        tenant.organization_id,
    )
