"""Signed public media links: `/media-links/{token}` serves one asset of one organization,
without an API key, until the link expires; anything else is 404. With S3 storage the bucket
serves a presigned URL instead (a moto server on loopback)."""

from __future__ import annotations

import base64
import hashlib
import re
import uuid
from pathlib import Path
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import delete

from pressroom.app import create_app
from pressroom.channels.adapters import adapter_services
from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.kit.crypto import SecretBox
from pressroom.media import links
from pressroom.media import service
from pressroom.media.models import MediaAsset
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.runtime import Runtime
from tests.factories import Tenant

from . import factories
from .api import upload
from .factories import FormPart

PUBLIC_URL = "https://pressroom.example"
SIX_HOURS = 6 * 3600


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"public_url": PUBLIC_URL})


async def uploaded(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, part: FormPart
) -> MediaItem:
    """The asset as an adapter is handed it."""
    response = await upload(client, tenant, [part])
    assert response.status_code == 201, response.text
    media_id = uuid.UUID(response.json()["items"][0]["id"])
    async with unit_of_work(runtime.sessions) as session:
        items = await service.media_items(session, tenant.organization_id, [media_id])
    return items[media_id]


@pytest.fixture
async def video(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> tuple[MediaItem, bytes]:
    content = factories.mp4_bytes()
    part = FormPart(content, "clip.mp4", "video/mp4")
    return await uploaded(client, runtime, tenant, part), content


def path_of(url: str) -> str:
    assert url.startswith(f"{PUBLIC_URL}/media-links/")
    return url.removeprefix(PUBLIC_URL)


async def link(runtime: Runtime, tenant: Tenant, item: MediaItem) -> str:
    return path_of(await links.public_url(runtime, tenant.organization_id, item))


def token_bytes(path: str) -> bytearray:
    token = path.rsplit("/", 1)[1]
    return bytearray(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))


def path_with(raw: bytes) -> str:
    return "/media-links/" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def assert_not_found(response: httpx.Response) -> None:
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "not_found"


async def test_a_link_serves_the_bytes_without_an_api_key(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, video: tuple[MediaItem, bytes]
) -> None:
    item, content = video
    url = await links.public_url(runtime, tenant.organization_id, item)

    response = await client.get(path_of(url))

    assert response.status_code == 200
    assert response.content == content
    assert response.headers["content-type"] == "video/mp4"
    assert response.headers["content-length"] == str(len(content))
    assert response.headers["accept-ranges"] == "bytes"
    assert response.headers["etag"] == f'"{hashlib.sha256(content).hexdigest()}"'
    match = re.fullmatch(r"private, max-age=(\d+)", response.headers["cache-control"])
    assert match is not None and SIX_HOURS - 5 <= int(match.group(1)) <= SIX_HOURS
    assert tenant.key not in url
    assert re.fullmatch(r"/media-links/[A-Za-z0-9_-]{90,}", path_of(url))


async def test_each_link_is_unguessable_and_names_nothing_readable(
    runtime: Runtime, tenant: Tenant, video: tuple[MediaItem, bytes]
) -> None:
    item, _ = video
    first = await link(runtime, tenant, item)
    assert str(item.id) not in first and str(tenant.organization_id) not in first
    assert item.storage_key not in first


async def test_an_expired_link_is_404(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, video: tuple[MediaItem, bytes]
) -> None:
    item, _ = video
    expired = links.sign_link(runtime.box, tenant.organization_id, item.id, links.now_seconds() - 1)
    assert_not_found(await client.get(f"/media-links/{expired}"))


@pytest.mark.parametrize(
    "offset",
    [0, 1, 16, 17, 32, 33, 40, 41, 72],
    ids=[
        "version",
        "organization-first",
        "organization-last",
        "media-first",
        "media-last",
        "expiry-first",
        "expiry-last",
        "signature-first",
        "signature-last",
    ],
)
async def test_a_link_with_any_byte_changed_is_404(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    video: tuple[MediaItem, bytes],
    offset: int,
) -> None:
    item, _ = video
    raw = token_bytes(await link(runtime, tenant, item))
    raw[offset] ^= 0x01
    assert_not_found(await client.get(path_with(bytes(raw))))


@pytest.mark.parametrize(
    "spoil",
    [
        lambda path: path + "A",  # one more character
        lambda path: path[:-1],  # one fewer
        lambda path: path + "=",  # padding
        lambda path: path[:-1] + chr(ord(path[-1]) ^ 1),  # the last character's spare bits
        lambda path: path.replace("-", "+").replace("_", "/") + "x",  # another alphabet
        lambda path: "/media-links/" + "A" * 98,
        lambda path: "/media-links/%00",
    ],
)
async def test_a_malformed_link_is_404(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    video: tuple[MediaItem, bytes],
    spoil: object,
) -> None:
    item, _ = video
    path = await link(runtime, tenant, item)
    assert_not_found(await client.get(spoil(path)))  # type: ignore[operator]


async def test_a_link_signed_with_another_server_key_is_404(
    client: httpx.AsyncClient, tenant: Tenant, video: tuple[MediaItem, bytes]
) -> None:
    item, _ = video
    foreign = SecretBox("another-server-key-" + "y" * 32)
    token = links.sign_link(foreign, tenant.organization_id, item.id, links.now_seconds() + 60)
    assert_not_found(await client.get(f"/media-links/{token}"))


async def test_an_asset_named_with_another_organization_is_404(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    other_tenant: Tenant,
    video: tuple[MediaItem, bytes],
) -> None:
    item, _ = video
    # A valid signature, but for the other organization: the asset is not one of its own.
    token = links.sign_link(
        runtime.box, other_tenant.organization_id, item.id, links.now_seconds() + 60
    )
    assert_not_found(await client.get(f"/media-links/{token}"))


async def test_a_link_to_a_deleted_asset_is_404(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, video: tuple[MediaItem, bytes]
) -> None:
    item, _ = video
    path = await link(runtime, tenant, item)
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(delete(MediaAsset).where(MediaAsset.id == item.id))
    assert_not_found(await client.get(path))


@pytest.mark.parametrize(
    ("header", "start", "end"),
    [
        ("bytes=0-9", 0, 9),
        ("bytes=10-", 10, None),
        ("bytes=-5", -5, None),
        ("bytes=100-1000000000", 100, None),
        ("bytes=-1000000000", 0, None),
    ],
)
async def test_a_single_range_is_206_with_content_range(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    video: tuple[MediaItem, bytes],
    header: str,
    start: int,
    end: int | None,
) -> None:
    item, content = video
    size = len(content)
    expected = content[start : None if end is None else end + 1]
    first = start if start >= 0 else size + start

    response = await client.get(await link(runtime, tenant, item), headers={"Range": header})

    assert response.status_code == 206
    assert response.content == expected
    assert response.headers["content-length"] == str(len(expected))
    assert response.headers["content-range"] == f"bytes {first}-{first + len(expected) - 1}/{size}"
    assert response.headers["content-type"] == "video/mp4"


@pytest.mark.parametrize("header", ["bytes=999999999-", "bytes=-0"])
async def test_a_range_past_the_end_is_416(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    video: tuple[MediaItem, bytes],
    header: str,
) -> None:
    item, content = video
    response = await client.get(await link(runtime, tenant, item), headers={"Range": header})
    assert response.status_code == 416
    assert response.headers["content-range"] == f"bytes */{len(content)}"
    assert response.json()["code"] == "range_not_satisfiable"


@pytest.mark.parametrize(
    "headers",
    [
        {"Range": "bytes=0-1,5-9"},  # several ranges: the whole file instead
        {"Range": "items=0-1"},
        {"Range": "bytes=9-2"},
        {"Range": "bytes=0-9", "If-Range": '"another-etag"'},
    ],
)
async def test_ranges_this_server_ignores_answer_the_whole_file(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    video: tuple[MediaItem, bytes],
    headers: dict[str, str],
) -> None:
    item, content = video
    response = await client.get(await link(runtime, tenant, item), headers=headers)
    assert response.status_code == 200
    assert response.content == content


async def test_if_range_with_the_current_etag_keeps_the_range(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, video: tuple[MediaItem, bytes]
) -> None:
    item, content = video
    path = await link(runtime, tenant, item)
    etag = (await client.head(path)).headers["etag"]
    response = await client.get(path, headers={"Range": "bytes=0-3", "If-Range": etag})
    assert (response.status_code, response.content) == (206, content[:4])


async def test_head_answers_the_headers_without_the_body(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, video: tuple[MediaItem, bytes]
) -> None:
    item, content = video
    path = await link(runtime, tenant, item)

    whole = await client.head(path)
    part = await client.head(path, headers={"Range": "bytes=2-5"})

    assert whole.status_code == 200 and whole.content == b""
    assert whole.headers["content-length"] == str(len(content))
    assert whole.headers["content-type"] == "video/mp4"
    assert whole.headers["accept-ranges"] == "bytes"
    assert part.status_code == 206 and part.content == b""
    assert part.headers["content-range"] == f"bytes 2-5/{len(content)}"
    missing = await client.head("/media-links/tampered")
    assert (missing.status_code, missing.content) == (404, b"")


async def test_a_matching_if_none_match_is_304(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, video: tuple[MediaItem, bytes]
) -> None:
    item, _ = video
    path = await link(runtime, tenant, item)
    etag = (await client.head(path)).headers["etag"]
    response = await client.get(path, headers={"If-None-Match": etag})
    assert (response.status_code, response.content) == (304, b"")


async def test_a_big_file_is_served_in_ranges_across_read_chunks(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    content = factories.jpeg_bytes((1800, 1200), noise=True)
    assert len(content) > 1024 * 1024 + 10
    item = await uploaded(client, runtime, tenant, FormPart(content, "big.jpg", "image/jpeg"))
    path = await link(runtime, tenant, item)
    middle = 1024 * 1024 - 3

    response = await client.get(path, headers={"Range": f"bytes={middle}-{middle + 9}"})

    assert (response.status_code, response.content) == (206, content[middle : middle + 10])
    assert (await client.get(path)).content == content


async def test_links_are_rate_limited_per_client_address(
    settings: Settings, runtime: Runtime, tenant: Tenant, video: tuple[MediaItem, bytes]
) -> None:
    item, _ = video
    path = await link(runtime, tenant, item)
    # Built afresh: a copy would keep the parsed policy the original has cached.
    limited = Runtime.build(
        Settings.model_validate({**settings.model_dump(), "rate_limit": "2/3600"})
    )
    app: FastAPI = create_app(runtime=limited)
    transport = httpx.ASGITransport(app=app, client=(f"198.51.100.{uuid.uuid4().int % 250}", 1))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            answers = [await client.head(path) for _ in range(3)]
    finally:
        await limited.close()
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[0].headers["ratelimit-limit"] == "2"


async def test_adapters_are_handed_links_bound_to_the_channels_organization(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    other_tenant: Tenant,
    video: tuple[MediaItem, bytes],
) -> None:
    item, content = video
    own = adapter_services(runtime, tenant.organization_id).media_url
    foreign = adapter_services(runtime, other_tenant.organization_id).media_url
    assert own is not None and foreign is not None

    assert (await client.get(path_of(await own(item)))).content == content
    assert_not_found(await client.get(path_of(await foreign(item))))


@pytest.mark.parametrize(
    "public_url", ["http://127.0.0.1:8000", "http://localhost:8000", "https://10.1.2.3"]
)
async def test_a_public_url_no_network_can_reach_is_a_permanent_provider_error(
    settings: Settings, data_dir: Path, video: tuple[MediaItem, bytes], public_url: str
) -> None:
    item, _ = video
    local = Runtime.build(settings.model_copy(update={"public_url": public_url}))
    try:
        with pytest.raises(ProviderError) as raised:
            await links.public_url(local, uuid.uuid4(), item)
    finally:
        await local.close()
    assert (raised.value.code, raised.value.retryable) == ("invalid_request", False)
    assert "PRESSROOM_PUBLIC_URL" in raised.value.message


# -- S3: the bucket serves a presigned URL -------------------------------------------------------


@pytest.fixture
def s3_settings(
    settings: Settings, moto_endpoint: str, s3_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    monkeypatch.setenv("PRESSROOM_S3_ENDPOINT_URL", moto_endpoint)
    return settings.model_copy(
        update={"media_storage": f"s3://{s3_bucket}/media", "media_link_seconds": 900}
    )


async def test_with_s3_storage_the_link_is_a_presigned_url_of_the_same_lifetime(
    s3_settings: Settings, moto_endpoint: str, tenant: Tenant
) -> None:
    s3_runtime = Runtime.build(s3_settings)
    app = create_app(runtime=s3_runtime)
    transport = httpx.ASGITransport(app=app)
    content = factories.png_bytes()
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            part = FormPart(content, "a.png", "image/png")
            item = await uploaded(client, s3_runtime, tenant, part)
        url = await links.public_url(s3_runtime, tenant.organization_id, item)
    finally:
        await s3_runtime.close()

    assert url.startswith(moto_endpoint)
    query = parse_qs(urlsplit(url).query)
    assert query["X-Amz-Expires"] == ["900"]
    assert "X-Amz-Signature" in query
    async with httpx.AsyncClient() as plain:
        fetched = await plain.get(url)
    assert fetched.status_code == 200
    assert fetched.content == content
    assert fetched.headers["content-type"] == "image/png"
