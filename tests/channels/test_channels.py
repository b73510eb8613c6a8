"""listChannels, getChannel, disconnectChannel and the channel events (contract section 7)."""

from __future__ import annotations

import uuid

import httpx
from sqlalchemy import select

from pressroom.channels.models import Channel
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import create_post
from tests.posts.factories import events_of
from tests.posts.factories import future
from tests.posts.factories import get_post
from tests.posts.factories import post_body

CHANNEL_FIELDS = {
    "id",
    "provider",
    "name",
    "handle",
    "simulated",
    "health",
    "connectedAt",
    "createdAt",
    "updatedAt",
}


async def test_get_channel_shows_the_contract_fields_and_a_healthy_state(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel_id = await connect_channel(runtime, tenant.organization_id, name="Main", handle="@me")
    response = await client.get(f"/api/v1/channels/{channel_id}", headers=tenant.headers)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == CHANNEL_FIELDS
    assert body["id"] == str(channel_id)
    assert (body["provider"], body["name"], body["handle"]) == ("sandbox", "Main", "@me")
    assert body["simulated"] is False
    assert body["health"]["state"] == "healthy"
    assert body["health"]["reason"] is None
    assert body["health"]["checkedAt"].endswith("Z")
    assert body["connectedAt"].endswith("Z")


async def test_simulated_channel_says_so(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel_id = await connect_channel(runtime, tenant.organization_id, provider="bluesky")
    body = (await client.get(f"/api/v1/channels/{channel_id}", headers=tenant.headers)).json()
    assert (body["provider"], body["simulated"]) == ("bluesky", True)


async def test_credentials_are_encrypted_at_rest_and_never_returned(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    token = "tok-" + uuid.uuid4().hex
    channel_id = await connect_channel(
        runtime, tenant.organization_id, credentials={"accessToken": token}
    )
    listed = await client.get("/api/v1/channels", headers=tenant.headers)
    read = await client.get(f"/api/v1/channels/{channel_id}", headers=tenant.headers)
    assert token not in listed.text and token not in read.text
    async with unit_of_work(runtime.sessions) as session:
        stored = await session.get(Channel, channel_id)
        assert stored is not None and stored.credentials_encrypted is not None
        assert token not in stored.credentials_encrypted
        assert token in runtime.box.decrypt(stored.credentials_encrypted)


async def test_list_is_newest_first_and_paginated(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    ids = [str(await connect_channel(runtime, tenant.organization_id)) for _ in range(3)]
    first = (
        await client.get("/api/v1/channels", params={"pageSize": 2}, headers=tenant.headers)
    ).json()
    second = (
        await client.get(
            "/api/v1/channels",
            params={"pageSize": 2, "cursor": first["nextCursor"]},
            headers=tenant.headers,
        )
    ).json()
    assert [c["id"] for c in first["items"] + second["items"]] == ids[::-1]
    assert second["nextCursor"] is None


async def test_another_organizations_channel_is_404_and_not_listed(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
):
    theirs = await connect_channel(runtime, other_tenant.organization_id)
    read = await client.get(f"/api/v1/channels/{theirs}", headers=tenant.headers)
    assert read.status_code == 404
    assert read.json()["code"] == "not_found"
    deleted = await client.delete(f"/api/v1/channels/{theirs}", headers=tenant.headers)
    assert deleted.status_code == 404
    listed = (await client.get("/api/v1/channels", headers=tenant.headers)).json()
    assert str(theirs) not in {c["id"] for c in listed["items"]}


async def test_malformed_channel_id_is_400(client: httpx.AsyncClient, tenant: Tenant):
    response = await client.get("/api/v1/channels/not-a-uuid", headers=tenant.headers)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "channelId"


async def test_disconnect_answers_the_deleted_form_then_404_and_leaves_the_list(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel_id = await connect_channel(
        runtime, tenant.organization_id, credentials={"accessToken": "secret"}
    )
    response = await client.delete(f"/api/v1/channels/{channel_id}", headers=tenant.headers)
    assert response.status_code == 200
    assert response.json() == {"id": str(channel_id), "object": "channel", "deleted": True}
    assert (
        await client.get(f"/api/v1/channels/{channel_id}", headers=tenant.headers)
    ).status_code == 404
    assert (
        await client.delete(f"/api/v1/channels/{channel_id}", headers=tenant.headers)
    ).status_code == 404
    listed = (await client.get("/api/v1/channels", headers=tenant.headers)).json()
    assert str(channel_id) not in {c["id"] for c in listed["items"]}
    async with unit_of_work(runtime.sessions) as session:
        stored = await session.get(Channel, channel_id)
        assert stored is not None
        assert stored.credentials_encrypted is None


async def test_connect_and_disconnect_emit_their_events_with_the_channel(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel_id = await connect_channel(runtime, tenant.organization_id)
    form = (await client.get(f"/api/v1/channels/{channel_id}", headers=tenant.headers)).json()
    await client.delete(f"/api/v1/channels/{channel_id}", headers=tenant.headers)
    events = await events_of(runtime, tenant.organization_id)
    assert [e["type"] for e in events] == ["channel.connected.v1", "channel.disconnected.v1"]
    assert events[0]["data"] == {"channel": form}
    assert events[1]["data"]["channel"]["id"] == str(channel_id)
    assert set(events[1]["data"]["channel"]) == CHANNEL_FIELDS


async def test_disconnect_fails_the_channels_pending_targets_only(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    leaving = await connect_channel(runtime, tenant.organization_id)
    staying = await connect_channel(runtime, tenant.organization_id)
    post = await create_post(
        client,
        tenant,
        post_body(
            leaving,
            scheduledAt=future(),
            targets=[{"channelId": str(leaving)}, {"channelId": str(staying)}],
        ),
    )
    await client.delete(f"/api/v1/channels/{leaving}", headers=tenant.headers)
    after = await get_post(client, tenant, post["id"])
    by_channel = {t["channelId"]: t for t in after["targets"]}
    assert by_channel[str(leaving)]["status"] == "failed"
    assert by_channel[str(leaving)]["error"] == {
        "code": "channel_disconnected",
        "message": by_channel[str(leaving)]["error"]["message"],
        "retryable": False,
    }
    assert by_channel[str(staying)]["status"] == "scheduled"
    assert after["status"] == "scheduled"
    failed = await events_of(runtime, tenant.organization_id, "post.failed.v1")
    assert len(failed) == 1
    assert failed[0]["data"]["targetId"] == by_channel[str(leaving)]["id"]
    assert failed[0]["data"]["post"] == after


async def test_disconnect_of_the_only_channel_fails_the_post(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel = await connect_channel(runtime, tenant.organization_id)
    post = await create_post(client, tenant, post_body(channel, scheduledAt=future()))
    await client.delete(f"/api/v1/channels/{channel}", headers=tenant.headers)
    assert (await get_post(client, tenant, post["id"]))["status"] == "failed"


async def test_a_post_naming_a_disconnected_channel_is_400(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel = await connect_channel(runtime, tenant.organization_id)
    await client.delete(f"/api/v1/channels/{channel}", headers=tenant.headers)
    response = await client.post("/api/v1/posts", json=post_body(channel), headers=tenant.headers)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "targets[0].channelId"


async def test_disconnect_replayed_with_its_idempotency_key_has_no_second_effect(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel = await connect_channel(runtime, tenant.organization_id)
    headers = {**tenant.headers, "Idempotency-Key": "disconnect-1"}
    first = await client.delete(f"/api/v1/channels/{channel}", headers=headers)
    again = await client.delete(f"/api/v1/channels/{channel}", headers=headers)
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()
    assert len(await events_of(runtime, tenant.organization_id, "channel.disconnected.v1")) == 1


async def test_disconnect_is_audited(client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant):
    from pressroom.audit.models import AuditEntry

    channel = await connect_channel(runtime, tenant.organization_id)
    await client.delete(f"/api/v1/channels/{channel}", headers=tenant.headers)
    async with unit_of_work(runtime.sessions) as session:
        entries = (
            await session.scalars(
                select(AuditEntry).where(
                    AuditEntry.organization_id == tenant.organization_id,
                    AuditEntry.operation_id == "disconnectChannel",
                )
            )
        ).all()
    assert [(e.resource_type, e.resource_id) for e in entries] == [("channel", str(channel))]
