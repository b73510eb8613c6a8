"""Idempotency-Key on uploadMedia: the request is its files' names and bytes."""

from __future__ import annotations

import asyncio

import httpx

from pressroom.runtime import Runtime
from tests.factories import Tenant

from . import factories
from .api import MEDIA
from .api import asset_count
from .api import media_events
from .api import staged_files
from .api import stored_files
from .api import upload
from .api import upload_audit_entries
from .factories import FormPart


def batch() -> list[FormPart]:
    return [
        FormPart(factories.png_bytes(), "a.png", "image/png"),
        FormPart(factories.mp4_bytes(), "b.mp4", "video/mp4"),
    ]


async def test_repeat_with_the_same_key_and_files_replays_without_a_second_effect(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    key = {"Idempotency-Key": "upload-1"}
    first = await upload(client, tenant, batch(), key)

    again = await upload(client, tenant, batch(), key)

    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert await asset_count(runtime, tenant.organization_id) == 2
    assert len(await media_events(runtime, tenant.organization_id)) == 2
    assert len(await upload_audit_entries(runtime, tenant.organization_id)) == 1
    assert len(stored_files(runtime)) == 2
    assert staged_files(runtime) == []


async def test_same_files_in_a_differently_framed_body_are_the_same_request(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    key = {"Idempotency-Key": "upload-2"}
    first = await upload(client, tenant, batch(), key)
    # Another client library: other boundary, other part headers, same names and bytes.
    reframed = [
        ("files", ("a.png", factories.png_bytes(), "application/octet-stream")),
        ("files", ("b.mp4", factories.mp4_bytes(), "application/octet-stream")),
    ]

    again = await client.post(MEDIA, files=reframed, headers={**tenant.headers, **key})

    assert again.status_code == 201
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()


async def test_same_key_with_other_files_is_409_and_stores_nothing_more(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    key = {"Idempotency-Key": "upload-3"}
    await upload(client, tenant, batch(), key)

    other = await upload(client, tenant, [FormPart(factories.gif_bytes(), "c.gif")], key)

    assert other.status_code == 409
    assert other.json()["code"] == "idempotency_key_reused"
    assert await asset_count(runtime, tenant.organization_id) == 2
    assert len(stored_files(runtime)) == 2
    assert staged_files(runtime) == []


async def test_same_bytes_under_another_name_are_another_request(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    key = {"Idempotency-Key": "upload-4"}
    await upload(client, tenant, [FormPart(factories.png_bytes(), "a.png")], key)

    renamed = await upload(client, tenant, [FormPart(factories.png_bytes(), "b.png")], key)

    assert renamed.status_code == 409


async def test_refused_upload_is_replayed_with_its_refusal(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    key = {"Idempotency-Key": "upload-5"}
    cut = factories.jpeg_bytes((128, 128), noise=True)[:600]
    first = await upload(client, tenant, [FormPart(cut, "cut.jpg")], key)

    again = await upload(client, tenant, [FormPart(cut, "cut.jpg")], key)

    assert first.status_code == again.status_code == 422
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json()["detail"] == first.json()["detail"]
    assert len(await upload_audit_entries(runtime, tenant.organization_id)) == 1


async def test_key_is_per_organization(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
) -> None:
    key = {"Idempotency-Key": "shared-key"}
    mine = await upload(client, tenant, batch(), key)

    theirs = await upload(client, other_tenant, batch(), key)

    assert theirs.status_code == 201
    assert "idempotent-replayed" not in theirs.headers
    assert theirs.json()["items"][0]["id"] != mine.json()["items"][0]["id"]


async def test_concurrent_repeats_create_the_assets_once(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    key = {"Idempotency-Key": "upload-race"}

    responses = await asyncio.gather(*(upload(client, tenant, batch(), key) for _ in range(3)))

    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(201) >= 1
    assert set(statuses) <= {201, 409}
    for response in responses:
        if response.status_code == 409:
            assert response.json()["code"] == "idempotency_key_in_progress"
    assert await asset_count(runtime, tenant.organization_id) == 2
    assert len(await media_events(runtime, tenant.organization_id)) == 2
    assert staged_files(runtime) == []
