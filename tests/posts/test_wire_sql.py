"""The database writes a post's wire form for listPosts (posts/wire_sql.py): it must be, value
for value, the document `views.post_view` builds for getPost and the post events, on both
databases, whatever the stored values (generated here and written as rows)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC
from datetime import datetime
from typing import Any

import httpx
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from sqlalchemy import null
from sqlalchemy import select

from pressroom.db import dialect_name
from pressroom.db import unit_of_work
from pressroom.posts import repository
from pressroom.posts import views
from pressroom.posts.models import APPROVAL_STATUSES
from pressroom.posts.models import POST_STATUSES
from pressroom.posts.models import TARGET_STATUSES
from pressroom.posts.models import Post
from pressroom.posts.models import PostTag
from pressroom.posts.models import PostTarget
from pressroom.posts.models import PostTopic
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.factories import make_tenant

# Text as people write it: any character PostgreSQL stores (not NUL, no lone surrogate).
texts = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
)
short = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=20,
)
times = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(2999, 12, 30), timezones=st.just(UTC)
)
# Whole seconds, whole milliseconds, and microseconds that truncation must not round.
instants = st.one_of(times, times.map(lambda t: t.replace(microsecond=0)))
ids = st.uuids()
media = st.one_of(
    st.just({}),
    st.lists(ids, max_size=3).map(lambda found: {"ids": [str(item) for item in found]}),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**9), 10**9), short),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(short, inner, max_size=3),
    max_leaves=6,
)
# A stored override: SQL NULL, JSON null, or a value; options (NOT NULL): JSON null or a value.
stored_media = st.sampled_from(["sql-null", "json-null"]) | media
stored_options = st.just("json-null") | st.dictionaries(short, json_values, max_size=3)


def _stored(value: Any) -> Any:
    return (
        {"sql-null": null(), "json-null": None}.get(value, value)
        if isinstance(value, str)
        else value
    )


targets = st.fixed_dictionaries(
    {
        "channel": st.integers(0, 1),
        "content_kind": st.sampled_from(["post", "thread", "story", "reel"]),
        "text_override": st.none() | texts,
        "media_ids_override": stored_media,
        "options": stored_options,
        "status": st.sampled_from(TARGET_STATUSES),
        "published_at": st.none() | instants,
        "provider_post_id": st.none() | short,
        "url": st.none() | short.map(lambda path: f"https://example.test/{path}"),
        "attempts": st.integers(0, 20),
        "error_code": st.none() | short,
        "error_message": st.none() | texts,
        "error_retryable": st.none() | st.booleans(),
        "created_at": instants,
    }
)
posts = st.fixed_dictionaries(
    {
        "text": st.none() | texts,
        "media_ids": media,
        "scheduled_at": st.none() | instants,
        "model": st.none() | short,
        "status": st.sampled_from(POST_STATUSES),
        "approval_required": st.booleans(),
        "approval_status": st.sampled_from(APPROVAL_STATUSES),
        "approval_decided_by": st.none() | ids,
        "approval_decided_at": st.none() | instants,
        "first_published_at": st.none() | instants,
        "created_by": st.none() | ids,
        "created_at": instants,
        "updated_at": instants,
        # Labels whose stored positions are not their order of insertion.
        "tags": st.lists(short, unique=True, max_size=4).flatmap(
            lambda values: st.permutations(range(len(values))).map(
                lambda order: list(zip(values, order, strict=True))
            )
        ),
        "topics": st.lists(short, unique=True, max_size=3).map(
            lambda values: list(zip(values, reversed(range(len(values))), strict=True))
        ),
        "targets": st.lists(targets, max_size=3),
    }
)


async def _store(
    runtime: Runtime, tenant: Tenant, channels: list[uuid.UUID], case: Any
) -> uuid.UUID:
    fields = {key: value for key, value in case.items() if key not in ("tags", "topics", "targets")}
    post = Post(organization_id=tenant.organization_id, publish_mode="scheduled", **fields)
    async with unit_of_work(runtime.sessions) as session:
        session.add(post)
        await session.flush()
        for label, values in ((PostTag, case["tags"]), (PostTopic, case["topics"])):
            for value, position in values:
                session.add(
                    label(
                        post_id=post.id,
                        organization_id=tenant.organization_id,
                        value=value,
                        position=position,
                    )
                )
        for target in case["targets"]:
            fields = {key: value for key, value in target.items() if key != "channel"}
            fields["media_ids_override"] = _stored(fields["media_ids_override"])
            fields["options"] = _stored(fields["options"])
            session.add(
                PostTarget(
                    organization_id=tenant.organization_id,
                    post_id=post.id,
                    channel_id=channels[target["channel"]],
                    provider="sandbox",
                    **fields,
                )
            )
    return post.id


async def _both_forms(runtime: Runtime, tenant: Tenant, post_id: uuid.UUID) -> tuple[Any, Any]:
    async with unit_of_work(runtime.sessions) as session:
        statement, parameters = repository.list_query(
            dialect_name(session), tenant.organization_id, repository.PostFilters(), limit=2
        )
        found = (await session.execute(statement, parameters)).all()
        written = next(row.document for row in found if row.id == post_id)
        post = (await session.execute(select(Post).where(Post.id == post_id))).scalar_one()
        built = await views.load_view(session, post)
    return json.loads(written), json.loads(json.dumps(built))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=posts)
async def test_the_database_writes_the_document_post_view_builds(runtime: Runtime, case: Any):
    tenant = await make_tenant(runtime, name=f"Wire {uuid.uuid4().hex[:8]}")
    channels = [await connect_channel(runtime, tenant.organization_id) for _ in range(2)]
    post_id = await _store(runtime, tenant, channels, case)
    written, built = await _both_forms(runtime, tenant, post_id)
    assert written == built


async def test_a_listed_page_is_what_getpost_answers_for_each_post(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channels = [str(await connect_channel(runtime, tenant.organization_id)) for _ in range(2)]
    created = []
    for number in range(3):
        answer = await client.post(
            "/api/v1/posts",
            headers=tenant.headers,
            json={
                "text": f'Launch "{number}" — ünïcode 🚀\n',
                "tags": ["spring", "launch"][: number + 1],
                "topics": ["pricing"],
                "targets": [
                    {"channelId": channels[0]},
                    {
                        "channelId": channels[1],
                        "text": "Override",
                        "options": {"firstComment": f"First {number}"},
                    },
                ],
            },
        )
        assert answer.status_code == 201, answer.text
        created.append(answer.json()["id"])
    page = await client.get("/api/v1/posts", headers=tenant.headers, params={"pageSize": 2})
    assert page.status_code == 200
    assert page.headers["content-type"] == "application/json"
    listed = page.json()["items"]
    assert [item["id"] for item in listed] == created[::-1][:2]
    for item in listed:
        single = await client.get(f"/api/v1/posts/{item['id']}", headers=tenant.headers)
        assert item == single.json()
    rest = await client.get(
        "/api/v1/posts",
        headers=tenant.headers,
        params={"pageSize": 2, "cursor": page.json()["nextCursor"]},
    )
    assert [item["id"] for item in rest.json()["items"]] == created[:1]
    assert rest.json()["nextCursor"] is None
