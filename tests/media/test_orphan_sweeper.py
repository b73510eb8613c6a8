"""The media-orphan-sweeper loop: stored objects that no asset row names (an upload killed between
storing and committing) go once they are older than the grace period; objects with a row, recent
ones and anything the store holds that is not ours stay. On local and S3 storage alike."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from pressroom.config import Settings
from pressroom.kit.clock import utcnow
from pressroom.kit.ids import uuid7
from pressroom.media.service import storage_for
from pressroom.media.storage import MediaStorage
from pressroom.media.worker import ORPHAN_GRACE
from pressroom.media.worker import remove_orphaned_objects
from pressroom.runtime import Runtime
from tests.factories import Tenant

from . import factories
from .api import upload
from .factories import FormPart


@pytest.fixture(params=["file", "s3"])
def settings(
    request: pytest.FixtureRequest, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    if request.param == "file":
        return settings
    moto_endpoint = request.getfixturevalue("moto_endpoint")
    bucket = request.getfixturevalue("s3_bucket")
    monkeypatch.setenv("PRESSROOM_S3_ENDPOINT_URL", moto_endpoint)
    return settings.model_copy(update={"media_storage": f"s3://{bucket}/tenants/media"})


@pytest.fixture
def storage(runtime: Runtime) -> MediaStorage:
    return storage_for(runtime.settings)


async def store(storage: MediaStorage, tmp_path: Path, key: str) -> str:
    staged = tmp_path / f"staged-{uuid.uuid4().hex}"
    staged.write_bytes(factories.png_bytes())
    await storage.put_file(key, staged)
    return key


def orphan_key(tenant: Tenant) -> str:
    """A key as an upload makes it, for an asset whose row was never committed."""
    return f"{tenant.organization_id}/{uuid7()}.png"


async def upload_one(client: httpx.AsyncClient, tenant: Tenant) -> tuple[str, str]:
    """An asset uploaded the ordinary way: its id and its storage key."""
    response = await upload(client, tenant, [FormPart(factories.png_bytes(), "kept.png")])
    assert response.status_code == 201, response.text
    [item] = response.json()["items"]
    return item["id"], f"{tenant.organization_id}/{item['id']}.png"


async def keys(storage: MediaStorage) -> set[str]:
    return {item.key async for item in storage.list_objects()}


def after_the_grace_period() -> timedelta:
    return ORPHAN_GRACE + timedelta(minutes=1)


async def test_an_old_object_without_a_row_is_removed_and_one_with_a_row_stays(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    storage: MediaStorage,
    tmp_path: Path,
) -> None:
    media_id, kept = await upload_one(client, tenant)
    orphan = await store(storage, tmp_path, orphan_key(tenant))
    assert {kept, orphan} <= await keys(storage)

    removed = await remove_orphaned_objects(
        runtime, storage, older_than=ORPHAN_GRACE, now=utcnow() + after_the_grace_period()
    )

    assert removed == 1
    remaining = await keys(storage)
    assert orphan not in remaining
    assert kept in remaining
    response = await client.get(f"/api/v1/media/{media_id}/content", headers=tenant.headers)
    assert response.status_code == 200


async def test_an_orphan_within_the_grace_period_stays(
    runtime: Runtime, tenant: Tenant, storage: MediaStorage, tmp_path: Path
) -> None:
    orphan = await store(storage, tmp_path, orphan_key(tenant))

    removed = await remove_orphaned_objects(
        runtime, storage, older_than=ORPHAN_GRACE, now=utcnow() + ORPHAN_GRACE / 2
    )

    assert removed == 0
    assert orphan in await keys(storage)


async def test_objects_not_named_like_ours_are_never_removed(
    runtime: Runtime, tenant: Tenant, storage: MediaStorage, tmp_path: Path
) -> None:
    foreign = [
        "notes.txt",
        f"{tenant.organization_id}/holiday.png",
        f"backups/{tenant.organization_id}/{uuid7()}.png",
    ]
    for key in foreign:
        await store(storage, tmp_path, key)

    removed = await remove_orphaned_objects(
        runtime, storage, older_than=ORPHAN_GRACE, now=utcnow() + after_the_grace_period()
    )

    assert removed == 0
    assert set(foreign) <= await keys(storage)
