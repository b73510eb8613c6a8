"""updatePost: merge semantics, the targets list with ids, schedule changes, and what a
publishing or published target forbids."""

from __future__ import annotations

import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from datetime import timezone

import httpx
import pytest

from pressroom.db import unit_of_work
from pressroom.posts.models import PostTarget
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import add_media
from tests.posts.factories import audit_entries_of
from tests.posts.factories import claim_as
from tests.posts.factories import create_post
from tests.posts.factories import events_of
from tests.posts.factories import future
from tests.posts.factories import get_post
from tests.posts.factories import patch_post
from tests.posts.factories import post_body
from tests.posts.factories import publish_all_due


@pytest.fixture
async def channel(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    return await connect_channel(runtime, tenant.organization_id)


async def test_patch_merges_only_the_fields_given(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(
        client, tenant, post_body(channel, tags=["a"], topics=["t"], model="gpt-5")
    )
    response = await patch_post(client, tenant, post["id"], {"text": "New text", "model": None})
    assert response.status_code == 200
    updated = response.json()
    assert (updated["text"], updated["model"], updated["tags"], updated["topics"]) == (
        "New text",
        None,
        ["a"],
        ["t"],
    )
    assert updated["targets"][0]["text"] == "New text"
    assert updated["targets"][0]["id"] == post["targets"][0]["id"]
    assert await get_post(client, tenant, post["id"]) == updated


async def test_tags_and_topics_are_replaced(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, tags=["a", "b"]))
    updated = (
        await patch_post(client, tenant, post["id"], {"tags": ["c"], "topics": ["x"]})
    ).json()
    assert (updated["tags"], updated["topics"]) == (["c"], ["x"])


async def test_schedule_null_makes_a_draft_again(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, scheduledAt=future()))
    updated = (await patch_post(client, tenant, post["id"], {"scheduledAt": None})).json()
    assert (updated["status"], updated["scheduledAt"]) == ("draft", None)
    assert updated["targets"][0]["status"] == "draft"


async def test_scheduling_a_draft_emits_updated_then_scheduled(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    updated = (await patch_post(client, tenant, post["id"], {"scheduledAt": future()})).json()
    assert updated["status"] == "scheduled"
    types = [e["type"] for e in await events_of(runtime, tenant.organization_id)]
    assert types[-3:] == ["post.created.v1", "post.updated.v1", "post.scheduled.v1"]


async def test_rescheduling_a_scheduled_post_does_not_enter_scheduled_again(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, scheduledAt=future(3600)))
    updated = (await patch_post(client, tenant, post["id"], {"scheduledAt": future(7200)})).json()
    assert updated["status"] == "scheduled"
    assert len(await events_of(runtime, tenant.organization_id, "post.scheduled.v1")) == 1


async def test_publish_now_on_a_draft_queues_it(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    updated = (await patch_post(client, tenant, post["id"], {"publishNow": True})).json()
    assert updated["status"] == "publishing"


async def test_past_schedule_in_a_patch_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    response = await patch_post(client, tenant, post["id"], {"scheduledAt": "2020-01-01T00:00:00Z"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "scheduledAt"


async def test_targets_list_keeps_updates_adds_and_removes(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    second = await connect_channel(runtime, tenant.organization_id)
    third = await connect_channel(runtime, tenant.organization_id)
    post = await create_post(
        client,
        tenant,
        post_body(channel, targets=[{"channelId": str(channel)}, {"channelId": str(second)}]),
    )
    kept, removed = post["targets"]
    response = await patch_post(
        client,
        tenant,
        post["id"],
        {"targets": [{"id": kept["id"], "text": "Override"}, {"channelId": str(third)}]},
    )
    assert response.status_code == 200, response.text
    targets = response.json()["targets"]
    assert [t["channelId"] for t in targets] == [str(channel), str(third)]
    assert targets[0]["id"] == kept["id"]
    assert targets[0]["text"] == "Override"
    assert removed["id"] not in {t["id"] for t in targets}


async def test_a_target_entry_with_an_unknown_id_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    response = await patch_post(
        client, tenant, post["id"], {"targets": [{"id": str(uuid.uuid4())}]}
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "targets[0].id"


async def test_a_new_target_without_a_channel_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    response = await patch_post(client, tenant, post["id"], {"targets": [{"text": "x"}]})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "targets[0].channelId"


async def test_patched_text_is_validated_against_every_target(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    response = await patch_post(client, tenant, post["id"], {"text": "x" * 301})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "targets[0].text"


async def test_unknown_field_in_a_patch_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    response = await patch_post(client, tenant, post["id"], {"status": "published"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "status"


async def test_patch_of_another_organizations_post_is_404(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
):
    theirs_channel = await connect_channel(runtime, other_tenant.organization_id)
    theirs = await create_post(client, other_tenant, post_body(theirs_channel))
    response = await patch_post(client, tenant, theirs["id"], {"text": "mine now"})
    assert response.status_code == 404
    assert (await get_post(client, other_tenant, theirs["id"]))["text"] == "Hello from Pressroom"


async def test_a_foreign_channel_in_a_patch_is_400(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    other_tenant: Tenant,
    channel: uuid.UUID,
):
    theirs = await connect_channel(runtime, other_tenant.organization_id)
    post = await create_post(client, tenant, post_body(channel))
    response = await patch_post(
        client, tenant, post["id"], {"targets": [{"channelId": str(theirs)}]}
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "targets[0].channelId"


async def _published(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, body: dict[str, object]
) -> dict[str, object]:
    post = await create_post(client, tenant, {**body, "publishNow": True})
    await publish_all_due(runtime)
    published = await get_post(client, tenant, str(post["id"]))
    assert {t["status"] for t in published["targets"]} == {"published"}
    return published


async def test_changing_the_text_of_a_published_target_is_409(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await _published(client, runtime, tenant, post_body(channel))
    response = await patch_post(client, tenant, str(post["id"]), {"text": "Edited"})
    assert response.status_code == 409
    assert response.json()["code"] == "post_not_editable"
    assert (await get_post(client, tenant, str(post["id"])))["text"] == "Hello from Pressroom"


async def test_changing_a_published_targets_override_is_409(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await _published(client, runtime, tenant, post_body(channel))
    target = post["targets"][0]  # type: ignore[index]
    response = await patch_post(
        client, tenant, str(post["id"]), {"targets": [{"id": target["id"], "text": "Edited"}]}
    )
    assert response.status_code == 409
    assert response.json()["code"] == "post_not_editable"


async def test_removing_a_published_target_is_409(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    other = await connect_channel(runtime, tenant.organization_id)
    post = await _published(
        client,
        runtime,
        tenant,
        post_body(channel, targets=[{"channelId": str(channel)}, {"channelId": str(other)}]),
    )
    keep, removed = post["targets"]  # type: ignore[misc]
    response = await patch_post(client, tenant, str(post["id"]), {"targets": [{"id": keep["id"]}]})
    assert response.status_code == 409
    assert response.json()["code"] == "post_not_editable"
    assert response.json()["targetId"] == removed["id"]
    after = await get_post(client, tenant, str(post["id"]))
    assert [t["id"] for t in after["targets"]] == [keep["id"], removed["id"]]


@pytest.mark.parametrize("change", ["post_media", "no_media", "target_media"])
async def test_changing_the_media_of_a_published_target_is_409(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID, change: str
):
    image = str(await add_media(runtime, tenant.organization_id))
    other = str(await add_media(runtime, tenant.organization_id))
    post = await _published(client, runtime, tenant, post_body(channel, mediaIds=[image]))
    target = post["targets"][0]  # type: ignore[index]
    body = {
        "post_media": {"mediaIds": [other]},
        "no_media": {"mediaIds": []},
        "target_media": {"targets": [{"id": target["id"], "mediaIds": [image, other]}]},
    }[change]
    response = await patch_post(client, tenant, str(post["id"]), body)
    assert response.status_code == 409, response.text
    assert response.json()["code"] == "post_not_editable"
    assert response.json()["targetId"] == target["id"]
    assert (await get_post(client, tenant, str(post["id"])))["targets"][0]["mediaIds"] == [image]


async def test_changing_a_target_whose_publish_is_in_flight_is_409(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    other = await connect_channel(runtime, tenant.organization_id)
    post = await create_post(
        client,
        tenant,
        post_body(
            channel,
            publishNow=True,
            targets=[{"channelId": str(channel)}, {"channelId": str(other)}],
        ),
    )
    await claim_as(runtime, "busy-worker")
    first, second = post["targets"]
    for body in (
        {"text": "Edited"},
        {"targets": [{"id": first["id"], "text": "Edited"}, {"id": second["id"]}]},
        {"targets": [{"id": first["id"]}]},
    ):
        response = await patch_post(client, tenant, post["id"], body)
        assert response.status_code == 409, body
        assert response.json()["code"] == "post_not_editable"
    assert [t["status"] for t in (await get_post(client, tenant, post["id"]))["targets"]] == [
        "publishing",
        "publishing",
    ]


async def test_labels_of_a_published_post_may_still_change(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await _published(client, runtime, tenant, post_body(channel))
    response = await patch_post(client, tenant, str(post["id"]), {"tags": ["late-tag"]})
    assert response.status_code == 200
    assert response.json()["tags"] == ["late-tag"]
    assert response.json()["status"] == "published"


async def test_post_text_may_change_when_published_targets_override_it(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await _published(
        client,
        runtime,
        tenant,
        post_body(channel, targets=[{"channelId": str(channel), "text": "Own text"}]),
    )
    response = await patch_post(client, tenant, str(post["id"]), {"text": "New default"})
    assert response.status_code == 200
    assert response.json()["targets"][0]["text"] == "Own text"


async def test_a_target_added_to_a_published_post_is_published_too(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await _published(client, runtime, tenant, post_body(channel))
    other = await connect_channel(runtime, tenant.organization_id)
    first = post["targets"][0]  # type: ignore[index]
    response = await patch_post(
        client,
        tenant,
        str(post["id"]),
        {"targets": [{"id": first["id"]}, {"channelId": str(other)}]},
    )
    assert response.status_code == 200
    assert [t["status"] for t in response.json()["targets"]] == ["published", "publishing"]
    await publish_all_due(runtime)
    final = await get_post(client, tenant, str(post["id"]))
    assert [t["status"] for t in final["targets"]] == ["published", "published"]
    assert final["status"] == "published"


async def test_failed_patch_writes_nothing(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await _published(client, runtime, tenant, post_body(channel))
    before = await events_of(runtime, tenant.organization_id)
    response = await patch_post(
        client, tenant, str(post["id"]), {"tags": ["would-change"], "text": "Edited"}
    )
    assert response.status_code == 409
    assert await events_of(runtime, tenant.organization_id) == before
    assert (await get_post(client, tenant, str(post["id"])))["tags"] == []


async def test_patch_replayed_with_its_idempotency_key_has_no_second_effect(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    headers = {**tenant.headers, "Idempotency-Key": "patch-1"}
    url = f"/api/v1/posts/{post['id']}"
    first = await client.patch(url, json={"tags": ["once"]}, headers=headers)
    again = await client.patch(url, json={"tags": ["once"]}, headers=headers)
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()
    assert len(await events_of(runtime, tenant.organization_id, "post.updated.v1")) == 1
    assert await audit_entries_of(runtime, tenant.organization_id, "updatePost") == [
        (post["id"], 200)
    ]
    reused = await client.patch(url, json={"tags": ["other"]}, headers=headers)
    assert reused.status_code == 409
    assert reused.json()["code"] == "idempotency_key_reused"


async def test_a_schedule_with_a_plus_nine_offset_is_the_same_instant_in_utc_z(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    moment = datetime.now(UTC).replace(microsecond=0) + timedelta(days=2)
    tokyo = moment.astimezone(timezone(timedelta(hours=9))).isoformat()
    assert tokyo.endswith("+09:00")
    post = await create_post(client, tenant, post_body(channel))
    updated = (await patch_post(client, tenant, post["id"], {"scheduledAt": tokyo})).json()
    expected = moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    assert updated["scheduledAt"] == expected
    assert (await get_post(client, tenant, post["id"]))["scheduledAt"] == expected
    async with unit_of_work(runtime.sessions) as session:
        stored = await session.get(PostTarget, uuid.UUID(post["targets"][0]["id"]))
        assert stored is not None and stored.next_attempt_at == moment


async def test_a_naive_schedule_in_a_patch_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    naive = (datetime.now(UTC) + timedelta(days=1)).replace(tzinfo=None).isoformat()
    response = await patch_post(client, tenant, post["id"], {"scheduledAt": naive})
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["scheduledAt"]
    assert (await get_post(client, tenant, post["id"]))["scheduledAt"] is None


async def test_a_patch_naming_a_disconnected_channel_is_400(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    gone = await connect_channel(runtime, tenant.organization_id)
    await client.delete(f"/api/v1/channels/{gone}", headers=tenant.headers)
    post = await create_post(client, tenant, post_body(channel))
    response = await patch_post(
        client,
        tenant,
        post["id"],
        {"targets": [{"id": post["targets"][0]["id"]}, {"channelId": str(gone)}]},
    )
    assert response.status_code == 400
    assert [(e["field"], e["code"]) for e in response.json()["errors"]] == [
        ("targets[1].channelId", "unknown_channel")
    ]


async def test_a_patch_giving_one_channel_two_targets_of_one_kind_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    response = await patch_post(
        client,
        tenant,
        post["id"],
        {"targets": [{"id": post["targets"][0]["id"]}, {"channelId": str(channel)}]},
    )
    assert response.status_code == 400
    assert [(e["field"], e["code"]) for e in response.json()["errors"]] == [
        ("targets[1].contentKind", "duplicate_target")
    ]


async def test_a_patch_with_more_than_twenty_targets_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    targets = [{"channelId": str(channel)}] * 21
    response = await patch_post(client, tenant, post["id"], {"targets": targets})
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["targets"]


async def test_a_schedule_outside_the_years_1_to_9999_in_utc_in_a_patch_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    response = await patch_post(
        client, tenant, post["id"], {"scheduledAt": "9999-12-31T20:00:00-14:00"}
    )
    assert response.status_code == 400, response.text
    assert [(e["field"], e["code"]) for e in response.json()["errors"]] == [
        ("scheduledAt", "out_of_range")
    ]


@pytest.mark.parametrize(
    "field", ["publishNow", "approval", "mediaIds", "tags", "topics", "targets"]
)
async def test_null_where_it_has_no_meaning_is_400_naming_the_field(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID, field: str
):
    post = await create_post(client, tenant, post_body(channel))
    response = await patch_post(client, tenant, post["id"], {field: None})
    assert response.status_code == 400, response.text
    assert [(e["field"], e["code"]) for e in response.json()["errors"]] == [(field, "null")]


async def test_the_document_allows_null_exactly_where_the_server_does(
    client: httpx.AsyncClient,
):
    document = (await client.get("/openapi.json")).json()
    properties = document["components"]["schemas"]["PostUpdate"]["properties"]

    def nullable(schema: dict) -> bool:
        return any(branch.get("type") == "null" for branch in schema.get("anyOf", []))

    for name in ("publishNow", "approval", "mediaIds", "tags", "topics", "targets"):
        assert not nullable(properties[name]), name
        assert "default" not in properties[name], name
    for name in ("text", "scheduledAt", "model"):
        assert nullable(properties[name]), name
