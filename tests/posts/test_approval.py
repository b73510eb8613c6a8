"""The approval gate: who may decide, what each decision does, and what it records."""

from __future__ import annotations

import uuid

import httpx
import pytest

from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant, add_member_with_key
from tests.posts.factories import (
    create_post,
    events_of,
    future,
    get_post,
    patch_post,
    post_body,
    publish_all_due,
)

APPROVE = {"approval": {"status": "approved"}}
REJECT = {"approval": {"status": "rejected"}}


@pytest.fixture
async def channel(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    return await connect_channel(runtime, tenant.organization_id)


@pytest.fixture
async def member(runtime: Runtime, tenant: Tenant) -> Tenant:
    return await add_member_with_key(runtime, tenant.organization_id, role="member")


async def _pending(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID, **fields: object
) -> dict[str, object]:
    body = post_body(channel, approval={"required": True}, **fields)
    return await create_post(client, tenant, body)


async def test_a_scheduled_post_requiring_approval_waits(
    client: httpx.AsyncClient, runtime: Runtime, member: Tenant, channel: uuid.UUID
):
    post = await _pending(client, member, channel, scheduledAt=future())
    assert post["status"] == "pending_approval"
    assert post["approval"] == {
        "required": True,
        "status": "pending",
        "decidedBy": None,
        "decidedAt": None,
    }
    assert [t["status"] for t in post["targets"]] == ["pending_approval"]  # type: ignore[union-attr]
    assert await events_of(runtime, member.organization_id, "post.scheduled.v1") == []


async def test_a_draft_requiring_approval_stays_a_draft(
    client: httpx.AsyncClient, member: Tenant, channel: uuid.UUID
):
    post = await _pending(client, member, channel)
    assert post["status"] == "draft"


async def test_a_pending_post_is_not_published(
    client: httpx.AsyncClient, runtime: Runtime, member: Tenant, channel: uuid.UUID
):
    post = await _pending(client, member, channel, publishNow=True)
    assert post["status"] == "pending_approval"
    assert await publish_all_due(runtime) == 0
    assert (await get_post(client, member, str(post["id"])))["status"] == "pending_approval"


async def test_a_member_deciding_is_403_insufficient_role(
    client: httpx.AsyncClient, member: Tenant, channel: uuid.UUID
):
    post = await _pending(client, member, channel, scheduledAt=future())
    for decision in (APPROVE, REJECT):
        response = await patch_post(client, member, str(post["id"]), decision)
        assert response.status_code == 403
        assert response.json()["code"] == "insufficient_role"
    assert (await get_post(client, member, str(post["id"])))["status"] == "pending_approval"


async def test_a_member_may_not_drop_the_requirement(
    client: httpx.AsyncClient, member: Tenant, channel: uuid.UUID
):
    post = await _pending(client, member, channel, scheduledAt=future())
    response = await patch_post(client, member, str(post["id"]), {"approval": {"required": False}})
    assert response.status_code == 403
    assert response.json()["code"] == "insufficient_role"


async def test_owner_approval_schedules_and_records_the_decision(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    member: Tenant,
    channel: uuid.UUID,
):
    post = await _pending(client, member, channel, scheduledAt=future())
    response = await patch_post(client, tenant, str(post["id"]), APPROVE)
    assert response.status_code == 200
    approved = response.json()
    assert approved["status"] == "scheduled"
    assert approved["approval"]["status"] == "approved"
    assert approved["approval"]["decidedBy"] == str(tenant.member_id)
    assert approved["approval"]["decidedAt"].endswith("Z")
    assert [t["status"] for t in approved["targets"]] == ["scheduled"]
    scheduled = await events_of(runtime, tenant.organization_id, "post.scheduled.v1")
    assert [e["data"]["post"]["id"] for e in scheduled] == [post["id"]]


async def test_admin_approval_of_a_publish_now_post_publishes_it(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    member: Tenant,
    channel: uuid.UUID,
):
    admin = await add_member_with_key(runtime, tenant.organization_id, role="admin")
    post = await _pending(client, member, channel, publishNow=True)
    approved = (await patch_post(client, admin, str(post["id"]), APPROVE)).json()
    assert approved["status"] == "publishing"
    assert approved["approval"]["decidedBy"] == str(admin.member_id)
    await publish_all_due(runtime)
    assert (await get_post(client, member, str(post["id"])))["status"] == "published"


async def test_rejection_returns_the_post_to_draft(
    client: httpx.AsyncClient, tenant: Tenant, member: Tenant, channel: uuid.UUID
):
    post = await _pending(client, member, channel, scheduledAt=future())
    rejected = (await patch_post(client, tenant, str(post["id"]), REJECT)).json()
    assert rejected["status"] == "draft"
    assert rejected["scheduledAt"] is None
    assert rejected["approval"]["status"] == "rejected"
    assert rejected["approval"]["decidedBy"] == str(tenant.member_id)
    assert [t["status"] for t in rejected["targets"]] == ["draft"]


async def test_resubmitting_a_rejected_post_waits_for_a_new_decision(
    client: httpx.AsyncClient, tenant: Tenant, member: Tenant, channel: uuid.UUID
):
    post = await _pending(client, member, channel, scheduledAt=future())
    await patch_post(client, tenant, str(post["id"]), REJECT)
    again = (await patch_post(client, member, str(post["id"]), {"scheduledAt": future()})).json()
    assert again["status"] == "pending_approval"
    assert again["approval"]["status"] == "pending"


async def test_changing_an_approved_posts_text_needs_a_new_approval(
    client: httpx.AsyncClient, tenant: Tenant, member: Tenant, channel: uuid.UUID
):
    post = await _pending(client, member, channel, scheduledAt=future())
    await patch_post(client, tenant, str(post["id"]), APPROVE)
    edited = (await patch_post(client, member, str(post["id"]), {"text": "Sneaky edit"})).json()
    assert edited["status"] == "pending_approval"
    assert edited["approval"]["status"] == "pending"


async def test_approving_a_post_that_needs_no_approval_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, scheduledAt=future()))
    response = await patch_post(client, tenant, post["id"], APPROVE)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "approval.status"


async def test_rejecting_a_published_post_is_409(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    member: Tenant,
    channel: uuid.UUID,
):
    post = await _pending(client, member, channel, publishNow=True)
    await patch_post(client, tenant, str(post["id"]), APPROVE)
    await publish_all_due(runtime)
    response = await patch_post(client, tenant, str(post["id"]), REJECT)
    assert response.status_code == 409


async def test_requiring_approval_on_a_scheduled_post_holds_it(
    client: httpx.AsyncClient, member: Tenant, channel: uuid.UUID
):
    post = await create_post(client, member, post_body(channel, scheduledAt=future()))
    held = (await patch_post(client, member, post["id"], {"approval": {"required": True}})).json()
    assert held["status"] == "pending_approval"


async def test_a_members_decision_is_refused_before_the_post_is_looked_up(
    client: httpx.AsyncClient, member: Tenant
):
    response = await patch_post(client, member, str(uuid.uuid4()), APPROVE)
    assert response.status_code == 403
    assert response.json()["code"] == "insufficient_role"
