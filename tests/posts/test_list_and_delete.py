"""listPosts (filters, date bounds, keyset pagination), getPost across organizations, and
deletePost."""

from __future__ import annotations

import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import select

from pressroom.db import unit_of_work
from pressroom.posts.models import PostTarget
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import create_post
from tests.posts.factories import events_of
from tests.posts.factories import future
from tests.posts.factories import get_post
from tests.posts.factories import iso
from tests.posts.factories import make_due
from tests.posts.factories import post_body
from tests.posts.factories import publish_all_due


@pytest.fixture
async def channel(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    return await connect_channel(runtime, tenant.organization_id)


async def listed(client: httpx.AsyncClient, tenant: Tenant, **params: str | int) -> list[str]:
    response = await client.get("/api/v1/posts", params=params, headers=tenant.headers)
    assert response.status_code == 200, response.text
    return [item["id"] for item in response.json()["items"]]


async def test_list_is_newest_first_with_keyset_pages(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    ids = [(await create_post(client, tenant, post_body(channel)))["id"] for _ in range(5)]
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, str | int] = {"pageSize": 2}
        if cursor:
            params["cursor"] = cursor
        body = (await client.get("/api/v1/posts", params=params, headers=tenant.headers)).json()
        seen += [item["id"] for item in body["items"]]
        cursor = body["nextCursor"]
        if cursor is None:
            break
        # Inserting while paging neither repeats nor skips the older posts.
        await create_post(client, tenant, post_body(channel))
    assert seen == ids[::-1]


async def test_status_channel_and_tag_filters(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    other = await connect_channel(runtime, tenant.organization_id)
    draft = await create_post(client, tenant, post_body(channel, tags=["spring"]))
    scheduled = await create_post(client, tenant, post_body(other, scheduledAt=future()))
    assert await listed(client, tenant, status="scheduled") == [scheduled["id"]]
    assert await listed(client, tenant, channelId=str(channel)) == [draft["id"]]
    assert await listed(client, tenant, tag="spring") == [draft["id"]]
    assert await listed(client, tenant, tag="autumn") == []


async def test_bad_filters_are_400(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
):
    theirs = await connect_channel(runtime, other_tenant.organization_id)
    for params, field in (
        ({"status": "sent"}, "status"),
        ({"channelId": str(theirs)}, "channelId"),
        ({"channelId": "nope"}, "channelId"),
        ({"start": "2026-01-01T00:00:00"}, "start"),
        ({"start": "2026-02-01T00:00:00Z", "end": "2026-01-01T00:00:00Z"}, "end"),
        ({"pageSize": 101}, "pageSize"),
    ):
        response = await client.get("/api/v1/posts", params=params, headers=tenant.headers)
        assert response.status_code == 400, params
        assert response.json()["errors"][0]["field"] == field


async def test_start_and_end_bound_the_post_date_inclusively(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    in_a_day = datetime.now(UTC).replace(microsecond=0) + timedelta(days=1)
    in_two_days = in_a_day + timedelta(days=1)
    later = await create_post(client, tenant, post_body(channel, scheduledAt=iso(in_two_days)))
    sooner = await create_post(client, tenant, post_body(channel, scheduledAt=iso(in_a_day)))
    now_post = await create_post(client, tenant, post_body(channel, publishNow=True))
    await publish_all_due(runtime)

    assert await listed(client, tenant, start=iso(in_a_day), end=iso(in_a_day)) == [sooner["id"]]
    assert await listed(client, tenant, start=iso(in_a_day)) == [sooner["id"], later["id"]]
    # The published post's date is its publishedAt: within the last minute.
    published_at = (await get_post(client, tenant, now_post["id"]))["publishedAt"]
    assert await listed(client, tenant, start=published_at, end=published_at) == [now_post["id"]]
    assert await listed(client, tenant, end=iso(in_a_day - timedelta(seconds=1))) == [
        now_post["id"]
    ]


async def test_the_post_date_is_publishedat_before_scheduledat_before_createdat(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    draft = await create_post(client, tenant, post_body(channel))
    scheduled_at = iso(datetime.now(UTC).replace(microsecond=0) + timedelta(hours=5))
    went_early = await create_post(client, tenant, post_body(channel, scheduledAt=scheduled_at))
    await make_due(runtime)  # published now, hours before its scheduledAt
    await publish_all_due(runtime)
    published = await get_post(client, tenant, went_early["id"])
    assert published["scheduledAt"] == scheduled_at.replace("Z", ".000Z")

    created = draft["createdAt"]
    assert await listed(client, tenant, start=created, end=created) == [draft["id"]]
    at = published["publishedAt"]
    assert await listed(client, tenant, start=at, end=at) == [went_early["id"]]
    assert await listed(client, tenant, start=scheduled_at, end=scheduled_at) == []


async def test_offsets_in_the_bounds_are_understood(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    moment = datetime.now(UTC).replace(microsecond=0) + timedelta(days=1)
    post = await create_post(client, tenant, post_body(channel, scheduledAt=iso(moment)))
    in_paris = moment.astimezone(ZoneInfo("Europe/Paris")).isoformat()
    assert await listed(client, tenant, start=in_paris, end=in_paris) == [post["id"]]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("start", "9999-12-31T23:00:00-05:00"),
        ("end", "9999-12-31T20:00:00-14:00"),
        ("start", "0001-01-01T00:00:00+05:00"),
        ("end", "0001-01-01T00:00:00+05:00"),
    ],
)
async def test_a_bound_outside_the_years_1_to_9999_in_utc_is_400_naming_it(
    client: httpx.AsyncClient, tenant: Tenant, name: str, value: str
):
    response = await client.get("/api/v1/posts", params={name: value}, headers=tenant.headers)
    assert response.status_code == 400, response.text
    assert [(e["field"], e["code"]) for e in response.json()["errors"]] == [(name, "out_of_range")]


async def test_bounds_at_the_ends_of_the_representable_range_are_accepted(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    assert await listed(
        client, tenant, start="0001-01-01T00:00:00Z", end="9999-12-31T23:59:59.999999Z"
    ) == [post["id"]]


async def test_another_organizations_post_is_404_and_never_listed(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
):
    theirs_channel = await connect_channel(runtime, other_tenant.organization_id)
    theirs = await create_post(client, other_tenant, post_body(theirs_channel))
    response = await client.get(f"/api/v1/posts/{theirs['id']}", headers=tenant.headers)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert (
        await client.delete(f"/api/v1/posts/{theirs['id']}", headers=tenant.headers)
    ).status_code == 404
    assert await listed(client, tenant) == []


async def test_delete_answers_the_deleted_form_then_404_and_leaves_the_list(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel))
    response = await client.delete(f"/api/v1/posts/{post['id']}", headers=tenant.headers)
    assert response.status_code == 200
    assert response.json() == {"id": post["id"], "object": "post", "deleted": True}
    assert (
        await client.get(f"/api/v1/posts/{post['id']}", headers=tenant.headers)
    ).status_code == 404
    assert await listed(client, tenant) == []


async def test_delete_cancels_unpublished_targets_and_they_are_never_published(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, publishNow=True))
    await client.delete(f"/api/v1/posts/{post['id']}", headers=tenant.headers)
    assert await publish_all_due(runtime) == 0
    async with unit_of_work(runtime.sessions) as session:
        statuses = (
            await session.scalars(
                select(PostTarget.status).where(PostTarget.post_id == uuid.UUID(post["id"]))
            )
        ).all()
    assert statuses == ["canceled"]


async def test_deleted_event_carries_the_post_as_it_was(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    post = await create_post(client, tenant, post_body(channel, scheduledAt=future()))
    await client.delete(f"/api/v1/posts/{post['id']}", headers=tenant.headers)
    [event] = await events_of(runtime, tenant.organization_id, "post.deleted.v1")
    assert event["data"] == {"post": post}
