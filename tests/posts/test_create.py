"""createPost: the body, the lifecycle it starts, and every validation error naming its field."""

from __future__ import annotations

import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from zoneinfo import ZoneInfo

import httpx
import pytest

from pressroom.db import unit_of_work
from pressroom.posts.models import Post
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import add_media
from tests.posts.factories import audit_entries_of
from tests.posts.factories import create_post
from tests.posts.factories import events_of
from tests.posts.factories import future
from tests.posts.factories import get_post
from tests.posts.factories import post_body


@pytest.fixture
async def channel(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    return await connect_channel(runtime, tenant.organization_id)


def error_fields(response: httpx.Response) -> list[str]:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["code"] == "validation_failed"
    return [error["field"] for error in body["errors"]]


async def post_400(client: httpx.AsyncClient, tenant: Tenant, body: dict[str, object]) -> list[str]:
    return error_fields(await client.post("/api/v1/posts", json=body, headers=tenant.headers))


async def test_created_post_has_the_contract_form_location_and_201(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    response = await client.post(
        "/api/v1/posts",
        json=post_body(channel, tags=["spring-launch"], topics=["pricing"], model="gpt-5"),
        headers=tenant.headers,
    )
    assert response.status_code == 201
    post = response.json()
    assert response.headers["location"] == f"/api/v1/posts/{post['id']}"
    assert {
        "id",
        "text",
        "mediaIds",
        "scheduledAt",
        "tags",
        "topics",
        "model",
        "status",
        "approval",
        "createdBy",
        "createdAt",
        "updatedAt",
        "targets",
    } <= set(post)
    assert (post["text"], post["tags"], post["topics"], post["model"]) == (
        "Hello from Pressroom",
        ["spring-launch"],
        ["pricing"],
        "gpt-5",
    )
    assert post["createdBy"] == str(tenant.member_id)
    assert post["approval"] == {
        "required": False,
        "status": "not_required",
        "decidedBy": None,
        "decidedAt": None,
    }
    [target] = post["targets"]
    assert {
        "id",
        "channelId",
        "provider",
        "contentKind",
        "text",
        "mediaIds",
        "status",
        "publishedAt",
        "providerPostId",
        "url",
        "attempts",
        "error",
    } <= set(target)
    assert (target["channelId"], target["provider"], target["contentKind"]) == (
        str(channel),
        "sandbox",
        "post",
    )
    assert await get_post(client, tenant, post["id"]) == post


async def test_without_schedule_it_is_a_draft(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    assert post["status"] == "draft"
    assert post["scheduledAt"] is None
    assert [t["status"] for t in post["targets"]] == ["draft"]
    events = await events_of(runtime, tenant.organization_id)
    assert [e["type"] for e in events if e["type"].startswith("post.")] == ["post.created.v1"]


async def test_future_schedule_is_scheduled_with_its_event(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, scheduledAt=future()))
    assert post["status"] == "scheduled"
    assert [t["status"] for t in post["targets"]] == ["scheduled"]
    events = [
        e for e in await events_of(runtime, tenant.organization_id) if e["type"].startswith("post.")
    ]
    assert [e["type"] for e in events] == ["post.created.v1", "post.scheduled.v1"]
    assert events[1]["data"] == {"post": post}


async def test_publish_now_goes_straight_to_publishing_without_a_scheduled_event(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    assert post["status"] == "publishing"
    assert [t["status"] for t in post["targets"]] == ["publishing"]
    assert await events_of(runtime, tenant.organization_id, "post.scheduled.v1") == []


async def test_schedule_offset_is_normalized_to_utc_z(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    local = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
    with_offset = local.astimezone(ZoneInfo("Asia/Kolkata"))
    post = await create_post(
        client, tenant, post_body(channel, scheduledAt=with_offset.isoformat())
    )
    assert post["scheduledAt"] == local.isoformat().replace("+00:00", ".000Z")


async def test_schedule_with_a_plus_nine_offset_is_stored_and_returned_as_the_same_instant(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    moment = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=250000)
    tokyo = moment.astimezone(timezone(timedelta(hours=9))).isoformat()
    assert tokyo.endswith("+09:00")
    post = await create_post(client, tenant, post_body(channel, scheduledAt=tokyo))
    expected = moment.strftime("%Y-%m-%dT%H:%M:%S.250Z")
    assert post["scheduledAt"] == expected
    assert (await get_post(client, tenant, post["id"]))["scheduledAt"] == expected
    async with unit_of_work(runtime.sessions) as session:
        stored = await session.get(Post, uuid.UUID(post["id"]))
        assert stored is not None and stored.scheduled_at == moment
        assert stored.scheduled_at.utcoffset() == timedelta(0)


@pytest.mark.parametrize("when", ["9999-12-31T20:00:00-14:00", "0001-01-01T00:00:00+05:00"])
async def test_a_schedule_outside_the_years_1_to_9999_in_utc_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID, when: str
):
    response = await client.post(
        "/api/v1/posts", json=post_body(channel, scheduledAt=when), headers=tenant.headers
    )
    assert error_fields(response) == ["scheduledAt"]
    assert response.json()["errors"][0]["code"] == "out_of_range"


async def test_naive_schedule_is_400(client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID):
    naive = (datetime.now(UTC) + timedelta(days=1)).replace(tzinfo=None).isoformat()
    assert await post_400(client, tenant, post_body(channel, scheduledAt=naive)) == ["scheduledAt"]


async def test_past_schedule_is_400(client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID):
    past = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    assert await post_400(client, tenant, post_body(channel, scheduledAt=past)) == ["scheduledAt"]


async def test_publish_now_with_a_schedule_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    body = post_body(channel, scheduledAt=future(), publishNow=True)
    assert await post_400(client, tenant, body) == ["publishNow"]


@pytest.mark.parametrize("count", [0, 21])
async def test_target_count_outside_1_to_20_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID, count: int
):
    body = post_body(channel, targets=[{"channelId": str(channel)}] * count)
    assert await post_400(client, tenant, body) == ["targets"]


async def test_twenty_targets_on_twenty_channels_are_accepted(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channels = [await connect_channel(runtime, tenant.organization_id) for _ in range(20)]
    body = post_body(channels[0], targets=[{"channelId": str(c)} for c in channels])
    assert len((await create_post(client, tenant, body))["targets"]) == 20


async def test_two_targets_for_one_channel_and_content_kind_are_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    body = post_body(
        channel,
        targets=[{"channelId": str(channel)}, {"channelId": str(channel), "contentKind": "post"}],
    )
    assert await post_400(client, tenant, body) == ["targets[1].contentKind"]


async def test_one_channel_may_take_two_content_kinds(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    facebook = await connect_channel(runtime, tenant.organization_id, provider="facebook")
    video = await add_media(
        runtime,
        tenant.organization_id,
        kind="video",
        mime_type="video/mp4",
        width=1080,
        height=1920,
        duration_seconds=10,
    )
    body = post_body(
        facebook,
        targets=[
            {"channelId": str(facebook), "contentKind": "post"},
            {"channelId": str(facebook), "contentKind": "reel", "mediaIds": [str(video)]},
        ],
    )
    post = await create_post(client, tenant, body)
    assert [t["contentKind"] for t in post["targets"]] == ["post", "reel"]


async def test_unknown_and_foreign_channel_ids_are_400(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
):
    theirs = await connect_channel(runtime, other_tenant.organization_id)
    body = post_body(theirs, targets=[{"channelId": str(theirs)}, {"channelId": str(uuid.uuid4())}])
    assert await post_400(client, tenant, body) == [
        "targets[0].channelId",
        "targets[1].channelId",
    ]


async def test_malformed_channel_id_is_400(client: httpx.AsyncClient, tenant: Tenant):
    body = {"text": "hi", "targets": [{"channelId": "nope"}]}
    assert await post_400(client, tenant, body) == ["targets[0].channelId"]


async def test_unknown_field_is_400(client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID):
    assert await post_400(client, tenant, post_body(channel, sheduledAt=future())) == ["sheduledAt"]


async def test_unknown_content_kind_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    body = post_body(channel, targets=[{"channelId": str(channel), "contentKind": "reel"}])
    assert await post_400(client, tenant, body) == ["targets[0].contentKind"]


async def test_unknown_option_is_400(client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID):
    body = post_body(channel, targets=[{"channelId": str(channel), "options": {"colour": "red"}}])
    assert await post_400(client, tenant, body) == ["targets[0].options.colour"]


async def test_content_kind_defaults_to_the_providers_first(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    youtube = await connect_channel(runtime, tenant.organization_id, provider="youtube")
    fields = await post_400(client, tenant, post_body(youtube))
    # A YouTube video needs a video and a title.
    assert fields == ["targets[0].mediaIds", "targets[0].options.title"]


async def test_missing_text_without_media_is_400(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    assert await post_400(client, tenant, post_body(channel, text=None)) == ["targets[0].text"]


async def test_target_text_overrides_the_posts(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    other = await connect_channel(runtime, tenant.organization_id)
    body = post_body(
        channel,
        targets=[{"channelId": str(channel), "text": "Just here"}, {"channelId": str(other)}],
    )
    post = await create_post(client, tenant, body)
    assert [t["text"] for t in post["targets"]] == ["Just here", "Hello from Pressroom"]
    assert post["text"] == "Hello from Pressroom"


async def test_media_of_the_post_and_overrides_are_effective_per_target(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    other = await connect_channel(runtime, tenant.organization_id)
    image = await add_media(runtime, tenant.organization_id)
    body = post_body(
        channel,
        mediaIds=[str(image)],
        targets=[{"channelId": str(channel), "mediaIds": []}, {"channelId": str(other)}],
    )
    post = await create_post(client, tenant, body)
    assert post["mediaIds"] == [str(image)]
    assert [t["mediaIds"] for t in post["targets"]] == [[], [str(image)]]


async def test_unknown_and_foreign_media_ids_are_400_naming_the_field(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    other_tenant: Tenant,
    channel: uuid.UUID,
):
    theirs = await add_media(runtime, other_tenant.organization_id)
    body = post_body(
        channel,
        mediaIds=[str(theirs)],
        targets=[{"channelId": str(channel), "mediaIds": [str(uuid.uuid4())]}],
    )
    assert await post_400(client, tenant, body) == ["mediaIds[0]", "targets[0].mediaIds[0]"]


async def test_media_breaking_the_providers_rules_is_400_on_the_item(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    instagram = await connect_channel(runtime, tenant.organization_id, provider="instagram")
    png = await add_media(runtime, tenant.organization_id, mime_type="image/png")
    fields = await post_400(client, tenant, post_body(instagram, mediaIds=[str(png)]))
    assert fields == ["targets[0].mediaIds[0]"]


async def test_too_many_images_for_the_sandbox_is_400(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    images = [str(await add_media(runtime, tenant.organization_id)) for _ in range(5)]
    assert await post_400(client, tenant, post_body(channel, mediaIds=images)) == [
        "targets[0].mediaIds"
    ]


@pytest.mark.parametrize(
    ("tags", "field"),
    [
        (["a,b"], "tags[0]"),
        (["x", "x"], "tags[1]"),
        (["ok", " "], "tags[1]"),
        (["t" * 101], "tags[0]"),
    ],
)
async def test_bad_tags_are_400_naming_the_tag(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID, tags: list[str], field: str
):
    assert await post_400(client, tenant, post_body(channel, tags=tags)) == [field]


async def test_every_problem_of_a_body_is_reported_at_once(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    body = post_body(
        channel,
        text="x" * 301,
        tags=["a,b"],
        targets=[{"channelId": str(channel)}, {"channelId": str(uuid.uuid4())}],
    )
    assert await post_400(client, tenant, body) == [
        "tags[0]",
        "targets[0].text",
        "targets[1].channelId",
    ]


async def test_failed_create_writes_nothing(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    before = await events_of(runtime, tenant.organization_id)
    await post_400(client, tenant, post_body(channel, text="x" * 301))
    listed = (await client.get("/api/v1/posts", headers=tenant.headers)).json()
    assert listed["items"] == []
    assert await events_of(runtime, tenant.organization_id) == before


async def test_create_replayed_with_its_idempotency_key_makes_one_post(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    headers = {**tenant.headers, "Idempotency-Key": "create-1"}
    first = await client.post("/api/v1/posts", json=post_body(channel), headers=headers)
    again = await client.post("/api/v1/posts", json=post_body(channel), headers=headers)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again.headers["location"] == first.headers["location"]
    assert again.headers["idempotent-replayed"] == "true"
    assert len(await events_of(runtime, tenant.organization_id, "post.created.v1")) == 1
    assert await audit_entries_of(runtime, tenant.organization_id, "createPost") == [
        (first.json()["id"], 201)
    ]
    listed = (await client.get("/api/v1/posts", headers=tenant.headers)).json()
    assert [p["id"] for p in listed["items"]] == [first.json()["id"]]
