"""The metrics poller: its decaying schedule, per-channel backoff, auth_expired, leases, and
the sandbox end to end. Time is a controlled clock; each test lives in its own far-future
window so that it never meets another test's targets."""

from __future__ import annotations

import asyncio
import itertools
import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import delete
from sqlalchemy import select
from sqlalchemy import update

from pressroom.analytics.models import MetricChannelState
from pressroom.analytics.models import MetricPoll
from pressroom.analytics.models import MetricSnapshot
from pressroom.analytics.models import TargetMetrics
from pressroom.analytics.schedule import channel_pause
from pressroom.analytics.schedule import next_poll_at
from pressroom.analytics.worker import MetricsPoller
from pressroom.channels.models import Channel
from pressroom.db import unit_of_work
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.runtime import Runtime
from pressroom.webhooks.models import Event
from tests.analytics.factory import Target
from tests.analytics.factory import make_channel
from tests.analytics.factory import publish
from tests.factories import Tenant

_windows = itertools.count()


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


class FakeNetwork:
    """A ProviderAdapter double: answers metrics from a table, or raises what it is told."""

    provider = "sandbox"

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.answers: dict[str, Any] = {}
        self.gate: asyncio.Event | None = None
        self.entered = asyncio.Event()

    async def publish(self, request: PublishRequest) -> PublishResult:
        raise NotImplementedError

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        raise NotImplementedError

    async def fetch_metrics(
        self, channel: ChannelContext, provider_post_id: str, published_at: datetime
    ) -> dict[str, int]:
        self.calls.append(provider_post_id)
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        answer = self.answers.get(provider_post_id, {"likes": len(self.calls)})
        if isinstance(answer, Exception):
            raise answer
        return dict(answer)

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        return HealthResult(state="healthy")


@pytest.fixture(autouse=True)
async def quiet_queue(runtime: Runtime) -> None:
    """No poll of another test is ever due in this one."""
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(delete(MetricPoll))
        await session.execute(delete(MetricChannelState))


@pytest.fixture
def t0() -> datetime:
    return datetime(2031, 1, 1, tzinfo=UTC) + timedelta(days=100 * next(_windows))


@pytest.fixture
def network() -> FakeNetwork:
    return FakeNetwork()


def poller(network: FakeNetwork, clock: Clock, owner: str = "worker-a") -> MetricsPoller:
    return MetricsPoller(adapters=lambda _channel, _runtime: network, clock=clock, owner=owner)


async def followed(runtime: Runtime, target_id: uuid.UUID) -> MetricPoll:
    async with unit_of_work(runtime.sessions) as session:
        poll = await session.get(MetricPoll, target_id)
        assert poll is not None
        return poll


async def target(
    runtime: Runtime, tenant: Tenant, channel: uuid.UUID, published_at: datetime, post_id: str
) -> uuid.UUID:
    made = await publish(
        runtime,
        tenant.organization_id,
        [Target(channel, published_at, None, provider_post_id=post_id)],
    )
    return made.target_ids[0]


@pytest.mark.parametrize(
    ("age", "slot"),
    [
        (timedelta(0), timedelta(minutes=5)),
        (timedelta(minutes=5), timedelta(minutes=10)),
        (timedelta(minutes=57), timedelta(minutes=60)),
        (timedelta(minutes=60), timedelta(hours=2)),
        (timedelta(hours=23, minutes=30), timedelta(hours=24)),
        (timedelta(hours=24), timedelta(days=2)),
        (timedelta(days=29, hours=1), timedelta(days=30)),
        (timedelta(days=30), None),
    ],
)
def test_the_schedule_decays_with_age(age: timedelta, slot: timedelta | None):
    published = datetime(2026, 3, 1, 12, tzinfo=UTC)
    expected = None if slot is None else published + slot
    assert next_poll_at(published, published + age) == expected


def test_channel_backoff_doubles_up_to_six_hours_and_honours_retry_after():
    assert [channel_pause(n, None) for n in (1, 2, 3)] == [
        timedelta(minutes=1),
        timedelta(minutes=2),
        timedelta(minutes=4),
    ]
    assert channel_pause(30, None) == timedelta(hours=6)
    assert channel_pause(1, 900) == timedelta(minutes=15)
    assert channel_pause(1, 10 * 86400) == timedelta(days=1)


async def test_a_new_target_is_first_fetched_at_its_five_minute_slot(
    runtime: Runtime, tenant: Tenant, network: FakeNetwork, t0: datetime
):
    channel = await make_channel(runtime, tenant.organization_id)
    target_id = await target(runtime, tenant, channel, t0, "first")
    network.answers["first"] = {"impressions": 40, "likes": 4, "followers": 9}
    clock = Clock(t0 + timedelta(minutes=1))
    run = poller(network, clock)

    assert await run(runtime) is False
    assert network.calls == []
    assert (await followed(runtime, target_id)).next_poll_at == t0 + timedelta(minutes=5)

    clock.now = t0 + timedelta(minutes=5)
    assert await run(runtime) is True
    assert network.calls == ["first"]
    poll = await followed(runtime, target_id)
    assert (poll.polls, poll.next_poll_at, poll.lease_owner) == (
        1,
        t0 + timedelta(minutes=10),
        None,
    )
    async with unit_of_work(runtime.sessions) as session:
        latest = await session.get(TargetMetrics, target_id)
        snapshots = (
            await session.scalars(
                select(MetricSnapshot).where(MetricSnapshot.target_id == target_id)
            )
        ).all()
    assert latest is not None
    assert (latest.impressions, latest.likes, latest.clicks) == (40, 4, 0)
    assert [(s.source, s.likes, s.clicks) for s in snapshots] == [("poller", 4, None)]


async def test_a_target_is_fetched_64_times_over_30_days_then_never(
    runtime: Runtime, tenant: Tenant, network: FakeNetwork, t0: datetime
):
    channel = await make_channel(runtime, tenant.organization_id)
    target_id = await target(runtime, tenant, channel, t0, "life")
    clock = Clock(t0)
    run = poller(network, clock)
    await run(runtime)  # discovers it
    fetched_at = []
    while (due := (await followed(runtime, target_id)).next_poll_at) is not None:
        clock.now = due
        before = len(network.calls)
        assert await run(runtime) is True
        assert len(network.calls) == before + 1
        fetched_at.append(due - t0)
    assert len(fetched_at) == 64
    assert fetched_at[:2] == [timedelta(minutes=5), timedelta(minutes=10)]
    assert fetched_at[11:14] == [timedelta(hours=1), timedelta(hours=2), timedelta(hours=3)]
    assert fetched_at[34:36] == [timedelta(days=1), timedelta(days=2)]
    assert fetched_at[-1] == timedelta(days=30)
    clock.advance(days=5)
    assert await run(runtime) is False
    assert len(network.calls) == 64


async def test_a_retryable_error_pauses_the_whole_channel_with_backoff(
    runtime: Runtime, tenant: Tenant, network: FakeNetwork, t0: datetime
):
    channel = await make_channel(runtime, tenant.organization_id)
    await target(runtime, tenant, channel, t0, "a")
    await target(runtime, tenant, channel, t0 + timedelta(seconds=1), "b")
    network.answers["a"] = ProviderError("rate_limited", "slow down")
    clock = Clock(t0 + timedelta(minutes=5, seconds=1))
    run = poller(network, clock)

    await run(runtime)
    assert network.calls == ["a"]  # "b" was not even tried: the channel is paused
    async with unit_of_work(runtime.sessions) as session:
        state = await session.get(MetricChannelState, channel)
        assert state is not None
        assert (state.failures, state.paused_until) == (1, clock.now + timedelta(minutes=1))

    clock.advance(seconds=30)
    assert await run(runtime) is False
    assert network.calls == ["a"]

    clock.advance(seconds=31)
    await run(runtime)
    assert network.calls == ["a", "a"]
    async with unit_of_work(runtime.sessions) as session:
        state = await session.get(MetricChannelState, channel)
        assert state is not None
        assert (state.failures, state.paused_until) == (2, clock.now + timedelta(minutes=2))

    network.answers["a"] = {"likes": 1}
    clock.advance(minutes=2)
    await run(runtime)
    assert sorted(network.calls[2:]) == ["a", "b"]
    async with unit_of_work(runtime.sessions) as session:
        state = await session.get(MetricChannelState, channel)
        assert state is not None
        assert (state.failures, state.paused_until) == (0, None)


async def test_another_channel_is_not_held_back_by_a_paused_one(
    runtime: Runtime, tenant: Tenant, network: FakeNetwork, t0: datetime
):
    busy = await make_channel(runtime, tenant.organization_id, name="Busy")
    fine = await make_channel(runtime, tenant.organization_id, name="Fine")
    await target(runtime, tenant, busy, t0, "busy")
    await target(runtime, tenant, fine, t0, "fine")
    network.answers["busy"] = ProviderError("provider_unavailable", "down", retry_after=600)
    clock = Clock(t0 + timedelta(minutes=5))
    await poller(network, clock)(runtime)
    assert sorted(network.calls) == ["busy", "fine"]
    async with unit_of_work(runtime.sessions) as session:
        state = await session.get(MetricChannelState, busy)
        assert state is not None
        # Retry-After (10 minutes) is longer than the first backoff step: it wins.
        assert state.paused_until == clock.now + timedelta(minutes=10)
        assert await session.get(MetricChannelState, fine) is None


async def test_auth_expired_stops_the_channel_until_it_is_reconnected(
    runtime: Runtime, tenant: Tenant, network: FakeNetwork, t0: datetime
):
    channel = await make_channel(runtime, tenant.organization_id)
    await target(runtime, tenant, channel, t0, "locked")
    network.answers["locked"] = ProviderError("auth_expired", "token revoked")
    clock = Clock(t0 + timedelta(minutes=5))
    run = poller(network, clock)

    await run(runtime)
    async with unit_of_work(runtime.sessions) as session:
        row = await session.get(Channel, channel)
        assert row is not None
        assert row.health_state == "reconnect_required"
        events = (
            await session.scalars(
                select(Event.type).where(Event.organization_id == tenant.organization_id)
            )
        ).all()
    assert "channel.reconnect-required.v1" in events

    clock.advance(days=2)
    assert await run(runtime) is False
    assert network.calls == ["locked"]

    # Reconnected: the channel row changes and is healthy again.
    network.answers["locked"] = {"likes": 3}
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(Channel)
            .where(Channel.id == channel)
            .values(health_state="healthy", updated_at=datetime.now(UTC) + timedelta(seconds=1))
        )
    assert await run(runtime) is True
    assert network.calls == ["locked", "locked"]


async def test_a_post_gone_from_the_network_stops_only_its_own_polling(
    runtime: Runtime, tenant: Tenant, network: FakeNetwork, t0: datetime
):
    channel = await make_channel(runtime, tenant.organization_id)
    gone = await target(runtime, tenant, channel, t0, "gone")
    kept = await target(runtime, tenant, channel, t0, "kept")
    network.answers["gone"] = ProviderError("not_found", "no such post")
    clock = Clock(t0 + timedelta(minutes=5))
    await poller(network, clock)(runtime)
    assert sorted(network.calls) == ["gone", "kept"]
    stopped = await followed(runtime, gone)
    assert (stopped.next_poll_at, stopped.stop_reason) == (None, "not_found")
    assert (await followed(runtime, kept)).next_poll_at == t0 + timedelta(minutes=10)


async def test_two_workers_never_fetch_the_same_target_at_once(
    runtime: Runtime, tenant: Tenant, t0: datetime
):
    channel = await make_channel(runtime, tenant.organization_id)
    await target(runtime, tenant, channel, t0, "shared")
    slow, other = FakeNetwork(), FakeNetwork()
    slow.gate = asyncio.Event()
    clock = Clock(t0 + timedelta(minutes=5))
    first = asyncio.create_task(poller(slow, clock, owner="worker-a")(runtime))
    await asyncio.wait_for(slow.entered.wait(), 10)
    # Worker A holds the lease while its call is in flight: B finds nothing to do.
    assert await poller(other, clock, owner="worker-b")(runtime) is False
    slow.gate.set()
    assert await first is True
    assert (slow.calls, other.calls) == (["shared"], [])


async def test_an_expired_lease_lets_another_worker_take_the_poll(
    runtime: Runtime, tenant: Tenant, network: FakeNetwork, t0: datetime
):
    channel = await make_channel(runtime, tenant.organization_id)
    target_id = await target(runtime, tenant, channel, t0, "orphan")
    clock = Clock(t0 + timedelta(minutes=5))
    await poller(network, clock)(runtime)  # discovers and fetches once
    async with unit_of_work(runtime.sessions) as session:
        # A worker died holding the lease of the next slot.
        await session.execute(
            update(MetricPoll)
            .where(MetricPoll.target_id == target_id)
            .values(lease_owner="dead", lease_until=t0 + timedelta(minutes=12))
        )
    clock.now = t0 + timedelta(minutes=10)
    assert await poller(network, clock, owner="worker-b")(runtime) is False
    clock.now = t0 + timedelta(minutes=12, seconds=1)
    assert await poller(network, clock, owner="worker-b")(runtime) is True
    assert network.calls == ["orphan", "orphan"]


async def test_imported_and_month_old_targets_are_not_followed(
    runtime: Runtime, tenant: Tenant, network: FakeNetwork, t0: datetime
):
    channel = await make_channel(runtime, tenant.organization_id)
    clock = Clock(t0 + timedelta(days=40))
    await target(runtime, tenant, channel, t0, "too-old")
    await publish(
        runtime, tenant.organization_id, [Target(channel, clock.now - timedelta(hours=1), None)]
    )
    assert await poller(network, clock)(runtime) is False
    async with unit_of_work(runtime.sessions) as session:
        assert (await session.scalars(select(MetricPoll))).all() == []


async def test_sandbox_metrics_grow_between_polls_and_reach_the_report(
    runtime: Runtime,
    tenant: Tenant,
    client: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
    t0: datetime,
):
    """End to end with the sandbox adapter of the registry (the simulated network's clock
    follows the test's)."""
    from pressroom.providers.sandbox import adapter as sandbox

    channel = await make_channel(runtime, tenant.organization_id)
    target_id = await target(runtime, tenant, channel, t0, uuid.uuid4().hex)
    clock = Clock(t0 + timedelta(minutes=5))
    monkeypatch.setattr(sandbox, "utcnow", clock)
    run = MetricsPoller(clock=clock)

    async def impressions() -> int:
        async with unit_of_work(runtime.sessions) as session:
            latest = await session.get(TargetMetrics, target_id)
            assert latest is not None
            return latest.impressions

    assert await run(runtime) is True
    early = await impressions()
    clock.now = t0 + timedelta(hours=1)
    assert await run(runtime) is True
    later = await impressions()
    assert 0 < early < later

    response = await client.get(
        "/api/v1/analytics",
        params={
            "start": (t0 - timedelta(days=1)).isoformat(),
            "end": (t0 + timedelta(days=1)).isoformat(),
            "metrics": "impressions",
        },
        headers=tenant.headers,
    )
    assert response.json()["totals"]["impressions"]["value"] == later
