"""The `channel-health` loop: each connected channel is checked soon after it is connected and
then daily; what the network says is recorded (state, reason, checkedAt) and, for a Mastodon
channel, its instance's own limits are read again and kept, so validation follows them.

Recorded shapes (respx: any request not recorded fails the test): Mastodon
GET /api/v1/accounts/verify_credentials (docs.joinmastodon.org methods/accounts; a revoked token
is 401 `{"error": "The access token is invalid"}`) and GET /api/v2/instance
(methods/instance#v2, configuration.statuses)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import httpx
import pytest
import respx
from sqlalchemy import update

from pressroom.channels import service as channels
from pressroom.channels.adapters import read_limits
from pressroom.channels.health import check_due_channels
from pressroom.channels.models import Channel
from pressroom.db import unit_of_work
from pressroom.providers.adapter import ChannelContext
from pressroom.runtime import Runtime
from pressroom.workers.loops import default_loops
from tests.adapters.test_mastodon import instance_v2
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import events_of

BASE = "https://fosstodon.example"
CREDENTIALS = {"baseUrl": BASE, "accessToken": "token-value", "accountId": "14715"}
ACCOUNT = {"id": "14715", "username": "alice", "acct": "alice"}
KEPT = {
    "maxCharacters": 1000,
    "charactersReservedPerUrl": 23,
    "maxMediaAttachments": 4,
    "imageSizeLimit": 16777216,
    "videoSizeLimit": 103809024,
}


@pytest.fixture
def network() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=True) as router:
        yield router


@pytest.fixture(autouse=True)
async def others_checked(runtime: Runtime) -> None:
    """Channels of earlier tests in this database were just checked: each test sees its own."""
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(update(Channel).values(health_checked_at=datetime.now(UTC)))


async def mastodon_channel(
    runtime: Runtime, tenant: Tenant, limits: dict[str, Any] | None = None
) -> uuid.UUID:
    async with unit_of_work(runtime.sessions) as session:
        channel = await channels.connect(
            session,
            runtime,
            organization_id=tenant.organization_id,
            provider="mastodon",
            name=f"mastodon {uuid.uuid4().hex[:6]}",
            handle="@alice@fosstodon.example",
            credentials=CREDENTIALS,
            limits=limits,
        )
        return channel.id


async def stored(runtime: Runtime, channel_id: uuid.UUID) -> Channel:
    async with unit_of_work(runtime.sessions) as session:
        channel = await session.get(Channel, channel_id)
        assert channel is not None
        return channel


def healthy_instance(network: respx.MockRouter, max_characters: int = 1000) -> None:
    network.get(f"{BASE}/api/v1/accounts/verify_credentials").mock(
        return_value=httpx.Response(200, json=ACCOUNT)
    )
    network.get(f"{BASE}/api/v2/instance").mock(
        return_value=httpx.Response(200, json=instance_v2(max_characters))
    )


async def test_a_health_check_keeps_the_instances_limits_and_validation_follows_them(
    network: respx.MockRouter, client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel_id = await mastodon_channel(runtime, tenant)  # connected before limits were kept
    healthy_instance(network)
    assert await check_due_channels(runtime) is True
    channel = await stored(runtime, channel_id)
    assert (channel.health_state, channel.health_reason, channel.limits) == ("healthy", None, KEPT)
    body = {"text": "a" * 900, "targets": [{"channelId": str(channel_id)}]}
    created = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
    assert created.status_code == 201, created.text


async def test_a_channel_is_checked_soon_after_connecting_then_once_a_day(
    runtime: Runtime, tenant: Tenant
):
    channel_id = await connect_channel(runtime, tenant.organization_id)
    assert await check_due_channels(runtime) is True
    checked = (await stored(runtime, channel_id)).health_checked_at
    assert checked is not None
    assert await check_due_channels(runtime) is False
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(Channel)
            .where(Channel.id == channel_id)
            .values(health_checked_at=checked - timedelta(hours=24, seconds=1))
        )
    assert await check_due_channels(runtime) is True
    assert (await stored(runtime, channel_id)).health_checked_at > checked  # type: ignore[operator]


async def test_a_refused_token_requires_reconnecting_with_one_event(
    network: respx.MockRouter, client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel_id = await mastodon_channel(runtime, tenant, {"maxCharacters": 1000})
    network.get(f"{BASE}/api/v1/accounts/verify_credentials").mock(
        return_value=httpx.Response(401, json={"error": "The access token is invalid"})
    )
    assert await check_due_channels(runtime) is True
    form = (await client.get(f"/api/v1/channels/{channel_id}", headers=tenant.headers)).json()
    assert form["health"]["state"] == "reconnect_required"
    assert "The access token is invalid" in form["health"]["reason"]
    events = await events_of(runtime, tenant.organization_id, "channel.reconnect-required.v1")
    assert [e["data"] for e in events] == [{"channel": form}]
    # Limits are kept as they were; a channel waiting for a reconnect is not checked again.
    assert (await stored(runtime, channel_id)).limits == {"maxCharacters": 1000}
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(Channel).where(Channel.id == channel_id).values(health_checked_at=None)
        )
    assert await check_due_channels(runtime) is False


async def test_an_unreachable_network_degrades_the_channel_and_keeps_its_limits(
    network: respx.MockRouter, runtime: Runtime, tenant: Tenant
):
    channel_id = await mastodon_channel(runtime, tenant, {"maxCharacters": 1000})
    network.get(f"{BASE}/api/v1/accounts/verify_credentials").mock(
        return_value=httpx.Response(503, text="<html>down</html>")
    )
    assert await check_due_channels(runtime) is True
    channel = await stored(runtime, channel_id)
    assert channel.health_state == "degraded"
    assert channel.health_reason
    assert channel.limits == {"maxCharacters": 1000}


async def test_an_instance_that_will_not_tell_its_limits_keeps_those_known(
    network: respx.MockRouter, runtime: Runtime, tenant: Tenant
):
    channel_id = await mastodon_channel(runtime, tenant, {"maxCharacters": 1000})
    network.get(f"{BASE}/api/v1/accounts/verify_credentials").mock(
        return_value=httpx.Response(200, json=ACCOUNT)
    )
    network.get(f"{BASE}/api/v2/instance").mock(return_value=httpx.Response(503))
    assert await check_due_channels(runtime) is True
    channel = await stored(runtime, channel_id)
    assert (channel.health_state, channel.limits) == ("healthy", {"maxCharacters": 1000})


async def test_limits_read_before_connecting_are_kept_on_the_channel(
    network: respx.MockRouter, client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    network.get(f"{BASE}/api/v2/instance").mock(
        return_value=httpx.Response(200, json=instance_v2(1000))
    )
    # What a connect flow does, outside its transaction, once the account is verified.
    limits = await read_limits(ChannelContext.unsaved("mastodon", CREDENTIALS), runtime)
    assert limits == KEPT
    channel_id = await mastodon_channel(runtime, tenant, limits)
    assert (await stored(runtime, channel_id)).limits == KEPT
    body = {"text": "a" * 1001, "targets": [{"channelId": str(channel_id)}]}
    refused = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
    assert refused.status_code == 400
    assert "mastodon allows 1000" in refused.json()["errors"][0]["message"]


async def test_channels_without_server_limits_read_none(runtime: Runtime, tenant: Tenant):
    sandbox = ChannelContext.unsaved("sandbox", {})
    assert await read_limits(sandbox, runtime) is None


def test_the_health_checker_is_one_of_the_default_loops() -> None:
    assert "channel-health" in {loop.name for loop in default_loops()}
