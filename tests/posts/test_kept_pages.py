"""On a SQLite file a listed page is kept while the database is unchanged (http/documents.py,
kit/data_version.py): asked again, it is answered without reading the posts, and a change
committed by any connection (this server, another process) shows on the next request."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from pressroom.kit.data_version import VersionedCache
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.factories import make_tenant
from tests.posts.factories import create_post
from tests.posts.factories import post_body
from tests.sqlite_files import commit_elsewhere
from tests.sqlite_files import sqlite_path_or_skip


@pytest.fixture
def sqlite_path(runtime: Runtime, is_postgres: bool) -> str:
    return sqlite_path_or_skip(
        runtime, is_postgres, "on PostgreSQL every page is read from the database"
    )


@pytest.fixture
async def channel(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    return await connect_channel(runtime, tenant.organization_id)


def _post_reads(runtime: Runtime) -> list[str]:
    """The statements reading posts that the server runs from now on."""
    seen: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        if "FROM posts" in statement:
            seen.append(statement)

    for engine in {runtime.engine, runtime.read_engine or runtime.engine}:
        event.listen(engine.sync_engine, "before_cursor_execute", record)
    return seen


async def _page(client: httpx.AsyncClient, tenant: Tenant, **params: Any) -> httpx.Response:
    response = await client.get("/api/v1/posts", params=params, headers=tenant.headers)
    assert response.status_code == 200, response.text
    return response


async def test_a_page_asked_again_is_answered_without_reading_the_posts(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    channel: uuid.UUID,
    sqlite_path: str,
):
    for _ in range(3):
        await create_post(client, tenant, post_body(channel))
    first = await _page(client, tenant, pageSize=2)
    reads = _post_reads(runtime)
    again = [await _page(client, tenant, pageSize=2) for _ in range(3)]
    assert reads == []
    assert all(answer.content == first.content for answer in again)
    # Another page (other parameters) is another answer, read once and then kept too.
    other = await _page(client, tenant, pageSize=2, cursor=first.json()["nextCursor"])
    assert len(other.json()["items"]) == 1
    assert len(reads) == 1
    await _page(client, tenant, pageSize=2, cursor=first.json()["nextCursor"])
    assert len(reads) == 1


async def test_a_change_through_the_api_shows_on_the_next_request(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID, sqlite_path: str
):
    await create_post(client, tenant, post_body(channel))
    assert len((await _page(client, tenant)).json()["items"]) == 1
    created = await create_post(client, tenant, post_body(channel, text="Second"))
    items = (await _page(client, tenant)).json()["items"]
    assert items[0]["id"] == created["id"]
    deleted = await client.delete(f"/api/v1/posts/{created['id']}", headers=tenant.headers)
    assert deleted.status_code in (200, 204), deleted.text
    assert len((await _page(client, tenant)).json()["items"]) == 1


async def test_a_change_committed_elsewhere_shows_on_the_next_request(
    client: httpx.AsyncClient, tenant: Tenant, channel: uuid.UUID, sqlite_path: str
):
    post = await create_post(client, tenant, post_body(channel, text="As written"))
    assert (await _page(client, tenant)).json()["items"][0]["text"] == "As written"
    # A worker process records a publish outcome; the server hears nothing of it.
    commit_elsewhere(
        sqlite_path,
        "UPDATE post_targets SET status = 'failed', error_code = 'network_down' WHERE post_id = ?",
        uuid.UUID(post["id"]).hex,
    )
    target = (await _page(client, tenant)).json()["items"][0]["targets"][0]
    assert (target["status"], target["error"]["code"]) == ("failed", "network_down")


async def test_a_commit_while_a_page_is_read_keeps_nothing(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    channel: uuid.UUID,
    sqlite_path: str,
):
    """The page read while another connection commits may show either state: the next
    request reads again, and sees the commit."""
    post = await create_post(client, tenant, post_body(channel, text="Before"))
    engine = (runtime.read_engine or runtime.engine).sync_engine
    committed: list[bool] = []

    def commit_meanwhile(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        if "FROM posts" in statement and not committed:
            committed.append(True)
            commit_elsewhere(
                sqlite_path,
                "UPDATE posts SET text = 'After' WHERE id = ?",
                uuid.UUID(post["id"]).hex,
            )

    event.listen(engine, "before_cursor_execute", commit_meanwhile)
    try:
        await _page(client, tenant)
    finally:
        event.remove(engine, "before_cursor_execute", commit_meanwhile)
    assert committed == [True]
    reads = _post_reads(runtime)
    assert (await _page(client, tenant)).json()["items"][0]["text"] == "After"
    assert len(reads) == 1


async def test_pages_are_kept_per_organization(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    channel: uuid.UUID,
    sqlite_path: str,
):
    await create_post(client, tenant, post_body(channel))
    other = await make_tenant(runtime, name="Other")
    assert len((await _page(client, tenant)).json()["items"]) == 1
    assert (await _page(client, other)).json()["items"] == []


def test_the_cache_serves_a_value_only_at_the_version_it_was_read_at():
    cache: VersionedCache[bytes] = VersionedCache(max_entries=2)
    assert cache.get(1, "a") is None
    cache.put(1, "a", b"page a")
    assert cache.get(1, "a") == b"page a"
    # Another version empties it, and what was read at the old one is not kept.
    assert cache.get(2, "a") is None
    cache.put(1, "a", b"stale")
    assert cache.get(2, "a") is None
    # Bounded: past its size it starts again.
    for key in ("a", "b", "c"):
        cache.put(2, key, key.encode())
    assert (cache.get(2, "a"), cache.get(2, "c")) == (None, b"c")
