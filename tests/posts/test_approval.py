"""The approval gate: who may decide, what each decision does, and what it records."""

from __future__ import annotations

import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import update

from pressroom.db import unit_of_work
from pressroom.posts.models import Post
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.factories import add_member_with_key
from tests.posts.factories import audit_entries_of
from tests.posts.factories import create_post
from tests.posts.factories import events_of
from tests.posts.factories import future
from tests.posts.factories import get_post
from tests.posts.factories import patch_post
from tests.posts.factories import post_body
from tests.posts.factories import publish_all_due

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


@pytest.mark.parametrize(
    "invalid",
    [
        pytest.param({"unknownField": 1}, id="unknown-field"),
        pytest.param({"scheduledAt": "2026-12-01T09:00:00"}, id="naive-time"),
        pytest.param({"scheduledAt": "2020-01-01T00:00:00Z"}, id="past-time"),
        pytest.param({"text": "x" * 301}, id="text-over-the-limit"),
        pytest.param({"targets": []}, id="no-targets"),
        pytest.param({"approval": {"status": "approved", "bogus": True}}, id="bad-approval"),
    ],
)
async def test_a_members_decision_is_403_before_the_body_is_validated(
    client: httpx.AsyncClient, member: Tenant, channel: uuid.UUID, invalid: dict[str, object]
):
    post = await _pending(client, member, channel, scheduledAt=future())
    body = {"approval": {"status": "approved"}, **invalid}
    response = await patch_post(client, member, str(post["id"]), body)
    assert response.status_code == 403, response.text
    assert response.json()["code"] == "insufficient_role"


async def test_a_members_decision_on_another_organizations_post_is_403_not_404(
    client: httpx.AsyncClient, runtime: Runtime, member: Tenant, other_tenant: Tenant
):
    theirs = await connect_channel(runtime, other_tenant.organization_id)
    post = await _pending(client, other_tenant, theirs, scheduledAt=future())
    for decision in (APPROVE, REJECT):
        response = await patch_post(client, member, str(post["id"]), decision)
        assert (response.status_code, response.json()["code"]) == (403, "insufficient_role")


async def test_a_members_decision_is_403_before_the_idempotency_key_is_looked_at(
    client: httpx.AsyncClient, member: Tenant, channel: uuid.UUID
):
    post = await _pending(client, member, channel, scheduledAt=future())
    url = f"/api/v1/posts/{post['id']}"
    headers = {**member.headers, "Idempotency-Key": "member-edit"}
    assert (await client.patch(url, json={"tags": ["a"]}, headers=headers)).status_code == 200
    # The same key with another body would be 409 idempotency_key_reused: the role comes first.
    response = await client.patch(url, json=APPROVE, headers=headers)
    assert (response.status_code, response.json()["code"]) == (403, "insufficient_role")


async def test_a_member_may_send_an_approval_without_a_decision(
    client: httpx.AsyncClient, member: Tenant, channel: uuid.UUID
):
    post = await create_post(client, member, post_body(channel))
    response = await patch_post(
        client, member, post["id"], {"approval": {"required": True, "status": None}}
    )
    assert response.status_code == 200, response.text
    assert response.json()["approval"]["status"] == "pending"


async def test_a_refused_decision_changes_nothing_and_is_audited_as_403(
    client: httpx.AsyncClient, runtime: Runtime, member: Tenant, channel: uuid.UUID
):
    post = await _pending(client, member, channel, scheduledAt=future())
    before = await events_of(runtime, member.organization_id)
    response = await patch_post(client, member, str(post["id"]), APPROVE)
    assert response.status_code == 403
    assert await events_of(runtime, member.organization_id) == before
    assert await get_post(client, member, str(post["id"])) == post
    entries = await audit_entries_of(runtime, member.organization_id, "updatePost")
    assert [status for _, status in entries] == [403]


async def test_approving_a_post_whose_time_came_while_it_waited_publishes_it(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    member: Tenant,
    channel: uuid.UUID,
):
    post = await _pending(client, member, channel, scheduledAt=future(60))
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(Post)
            .where(Post.id == uuid.UUID(str(post["id"])))
            .values(scheduled_at=datetime.now(UTC) - timedelta(minutes=5))
        )
    approved = (await patch_post(client, tenant, str(post["id"]), APPROVE)).json()
    assert approved["status"] == "publishing"
    assert await events_of(runtime, tenant.organization_id, "post.scheduled.v1") == []
    await publish_all_due(runtime)
    assert (await get_post(client, member, str(post["id"])))["status"] == "published"


async def test_a_draft_approved_in_advance_is_scheduled_without_waiting(
    client: httpx.AsyncClient, tenant: Tenant, member: Tenant, channel: uuid.UUID
):
    post = await _pending(client, member, channel)
    approved = (await patch_post(client, tenant, str(post["id"]), APPROVE)).json()
    assert (approved["status"], approved["approval"]["status"]) == ("draft", "approved")
    scheduled = (
        await patch_post(client, member, str(post["id"]), {"scheduledAt": future()})
    ).json()
    assert scheduled["status"] == "scheduled"
