"""Keyset pagination (contract section 4) through a real collection route."""

from __future__ import annotations

import httpx

from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from pressroom.tenant import service as tenant_service
from tests.factories import Tenant

URL = "/api/v1/test/members"


async def add_members(runtime: Runtime, tenant: Tenant, count: int, tag: str) -> None:
    async with unit_of_work(runtime.sessions) as session:
        for i in range(count):
            await tenant_service.add_member(
                session, tenant.organization_id, f"{tag}-{i}@example.com", "member"
            )


async def test_pages_walk_every_item_once_newest_first_while_rows_are_inserted(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await add_members(runtime, tenant, 29, "before")
    seen: list[str] = []
    created: list[str] = []
    cursor = None
    pages = 0
    while True:
        params = {"pageSize": 10, **({"cursor": cursor} if cursor else {})}
        page = (await test_client.get(URL, params=params, headers=tenant.headers)).json()
        pages += 1
        seen.extend(item["id"] for item in page["items"])
        created.extend(item["createdAt"] for item in page["items"])
        if pages == 1:
            # New rows arrive while a client pages: they must not shift later pages.
            await add_members(runtime, tenant, 5, "during")
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert pages == 3
    assert len(seen) == len(set(seen)) == 30  # 29 + the owner
    assert created == sorted(created, reverse=True)


async def test_default_page_size_is_25(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    await add_members(runtime, tenant, 30, "default")
    page = (await test_client.get(URL, headers=tenant.headers)).json()
    assert len(page["items"]) == 25
    assert page["nextCursor"]


async def test_cursor_of_another_collection_or_tampered_is_400(
    test_client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    from pressroom.kit.clock import utcnow
    from pressroom.kit.ids import uuid7
    from pressroom.kit.pagination import encode_cursor

    await add_members(runtime, tenant, 3, "tamper")
    page = (await test_client.get(URL, params={"pageSize": 1}, headers=tenant.headers)).json()
    cursor = page["nextCursor"]
    flipped = cursor[:-2] + ("A" if cursor[-2] != "A" else "B") + cursor[-1]
    foreign = encode_cursor(runtime.box, "posts", utcnow(), uuid7())
    for bad in (flipped, foreign, "!!!", "a" * 600):
        response = await test_client.get(URL, params={"cursor": bad}, headers=tenant.headers)
        assert response.status_code == 400, bad
        assert response.json()["errors"][0]["field"] == "cursor"
