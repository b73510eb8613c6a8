"""uploadMedia with S3-compatible storage (a moto server on loopback), and the clean-up of
stored objects when an upload fails after storing some of its files."""

from __future__ import annotations

import hashlib
from typing import Any

import boto3
import httpx
import pytest
from botocore.exceptions import ClientError

from pressroom.config import Settings
from pressroom.media import service
from pressroom.media import upload as upload_module
from pressroom.media.storage import S3Storage
from pressroom.runtime import Runtime
from tests.factories import Tenant

from . import factories
from .api import MEDIA
from .api import asset_count
from .api import media_events
from .api import staged_files
from .api import stored_files
from .api import upload
from .factories import FormPart

PREFIX = "tenants/media"


@pytest.fixture
def settings(
    settings: Settings, moto_endpoint: str, s3_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    monkeypatch.setenv("PRESSROOM_S3_ENDPOINT_URL", moto_endpoint)
    return settings.model_copy(update={"media_storage": f"s3://{s3_bucket}/{PREFIX}"})


def bucket_objects(moto_endpoint: str, bucket: str) -> dict[str, bytes]:
    client = boto3.client("s3", endpoint_url=moto_endpoint, region_name="us-east-1")
    listed = client.list_objects_v2(Bucket=bucket).get("Contents", [])
    return {
        item["Key"]: client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
        for item in listed
    }


def batch() -> list[FormPart]:
    return [
        FormPart(factories.jpeg_bytes((120, 80), noise=True), "a.jpg", "image/jpeg"),
        FormPart(factories.mp4_bytes(), "b.mp4", "video/mp4"),
    ]


async def test_upload_stores_the_files_in_the_bucket_and_serves_them_back(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    moto_endpoint: str,
    s3_bucket: str,
) -> None:
    parts = batch()

    response = await upload(client, tenant, parts)

    assert response.status_code == 201
    items = response.json()["items"]
    objects = bucket_objects(moto_endpoint, s3_bucket)
    assert objects == {
        f"{PREFIX}/{tenant.organization_id}/{items[0]['id']}.jpg": parts[0].content,
        f"{PREFIX}/{tenant.organization_id}/{items[1]['id']}.mp4": parts[1].content,
    }
    assert [item["sha256"] for item in items] == [
        hashlib.sha256(part.content).hexdigest() for part in parts
    ]
    assert stored_files(runtime) == []  # nothing went to the local directory
    assert staged_files(runtime) == []
    content = await client.get(f"{MEDIA}/{items[1]['id']}/content", headers=tenant.headers)
    assert content.content == parts[1].content
    assert content.headers["content-type"] == "video/mp4"


async def test_refused_batch_puts_nothing_in_the_bucket(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    moto_endpoint: str,
    s3_bucket: str,
) -> None:
    parts = [*batch(), FormPart(b"", "empty.webm", "video/webm")]

    response = await upload(client, tenant, parts)

    assert response.status_code == 422
    assert bucket_objects(moto_endpoint, s3_bucket) == {}
    assert await asset_count(runtime, tenant.organization_id) == 0


def test_settings_name_an_s3_storage(settings: Settings, s3_bucket: str) -> None:
    storage = service.storage_for(settings)

    assert isinstance(storage, S3Storage)
    assert (storage.bucket, storage.prefix) == (s3_bucket, PREFIX)
    # Staged files are sent to the bucket and deleted: no early write-back to the local disk.
    assert not service.stores_staged_files_in_place(settings)


async def test_storage_failure_on_the_second_file_removes_the_first(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    moto_endpoint: str,
    s3_bucket: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_put = S3Storage._put_file
    calls = 0

    def flaky_put(self: S3Storage, object_key: str, path: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise ClientError({"Error": {"Code": "SlowDown", "Message": "busy"}}, "PutObject")
        real_put(self, object_key, path)

    monkeypatch.setattr(S3Storage, "_put_file", flaky_put)

    response = await upload(client, tenant, batch())

    assert response.status_code == 500
    assert calls == 2
    assert bucket_objects(moto_endpoint, s3_bucket) == {}
    assert await asset_count(runtime, tenant.organization_id) == 0
    assert staged_files(runtime) == []


async def test_database_failure_after_storing_removes_the_stored_files(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    moto_endpoint: str,
    s3_bucket: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_emit = upload_module.emit
    calls = 0

    async def failing_emit(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("database went away")
        return await real_emit(*args, **kwargs)

    monkeypatch.setattr(upload_module, "emit", failing_emit)

    response = await upload(client, tenant, batch())

    assert response.status_code == 500
    assert bucket_objects(moto_endpoint, s3_bucket) == {}
    assert await asset_count(runtime, tenant.organization_id) == 0
    assert await media_events(runtime, tenant.organization_id) == []
