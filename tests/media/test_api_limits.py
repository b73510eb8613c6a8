"""Size limits through the HTTP API (lowered here): 413 while streaming, nothing kept."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic import ByteSize

from pressroom.config import Settings
from pressroom.media import service
from pressroom.media.storage import LocalStorage
from pressroom.runtime import Runtime
from tests.factories import Tenant

from . import factories
from .api import MEDIA
from .api import assert_nothing_stored
from .api import upload
from .api import upload_stream
from .factories import CONTENT_TYPE
from .factories import FormPart
from .factories import chunked
from .factories import multipart_body

KiB = 1024
IMAGE_LIMIT = 64 * KiB
GIF_LIMIT = 32 * KiB
VIDEO_LIMIT = 256 * KiB
REQUEST_LIMIT = 512 * KiB
DOCUMENT_LIMIT = 48 * KiB


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={
            "media_max_image_bytes": ByteSize(IMAGE_LIMIT),
            "media_max_gif_bytes": ByteSize(GIF_LIMIT),
            "media_max_video_bytes": ByteSize(VIDEO_LIMIT),
            "media_max_request_bytes": ByteSize(REQUEST_LIMIT),
            "media_max_document_bytes": ByteSize(DOCUMENT_LIMIT),
        }
    )


class EndlessPng:
    """A PNG part that keeps coming: the server must stop reading once it is over the limit."""

    def __init__(self, chunk_size: int = 16 * KiB, chunks: int = 1024) -> None:
        self.chunk_size = chunk_size
        self.chunks = chunks
        self.sent = 0

    async def body(self) -> AsyncIterator[bytes]:
        yield factories.part_header(FormPart(b"", "huge.png", "image/png"))
        yield factories.png_bytes()
        for _ in range(self.chunks):
            self.sent += self.chunk_size
            yield os.urandom(self.chunk_size)
        yield factories.closing()


async def test_image_over_its_limit_is_413_detected_while_streaming(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    stream = EndlessPng()  # 16 MiB offered against a 64 KiB image limit

    response = await upload_stream(client, tenant, stream.body())

    assert response.status_code == 413
    body = response.json()
    assert body["code"] == "payload_too_large"
    assert body["detail"] == 'File "huge.png" exceeds the image size limit of 64 KiB.'
    assert body["errors"][0]["field"] == "files[0]"
    # Refused as soon as the limit was crossed: the rest of the body was never pulled.
    assert stream.sent <= IMAGE_LIMIT + 2 * stream.chunk_size
    await assert_nothing_stored(runtime, tenant)


async def test_pdf_over_the_document_limit_is_413(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    content = b"%PDF-1.7\n" + os.urandom(DOCUMENT_LIMIT)

    response = await upload(client, tenant, [FormPart(content, "big.pdf", "application/pdf")])

    assert response.status_code == 413
    assert response.json()["detail"] == (
        'File "big.pdf" exceeds the document size limit of 48 KiB.'
    )
    await assert_nothing_stored(runtime, tenant)


async def test_gif_over_the_gif_limit_is_413(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    content = factories.image_bytes("GIF", (180, 180), noise=True)
    assert GIF_LIMIT < len(content) < IMAGE_LIMIT  # an image of this size would pass

    response = await upload(client, tenant, [FormPart(content, "big.gif", "image/gif")])

    assert response.status_code == 413
    assert "GIF size limit of 32 KiB" in response.json()["detail"]
    await assert_nothing_stored(runtime, tenant)


async def test_video_between_the_image_and_video_limits_is_accepted(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    content = factories.padded_mp4_bytes(128 * KiB)
    assert IMAGE_LIMIT < len(content) < VIDEO_LIMIT

    response = await upload(client, tenant, [FormPart(content, "clip.mp4", "video/mp4")])

    assert response.status_code == 201
    assert response.json()["items"][0]["sizeBytes"] == len(content)


async def test_video_over_the_video_limit_is_413(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    content = factories.padded_mp4_bytes(VIDEO_LIMIT + 1)

    response = await upload(client, tenant, [FormPart(content, "long.mp4", "video/mp4")])

    assert response.status_code == 413
    assert response.json()["detail"] == 'File "long.mp4" exceeds the video size limit of 256 KiB.'
    await assert_nothing_stored(runtime, tenant)


async def test_batch_over_the_request_limit_is_413_naming_the_file_it_reached(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    # Each 60 KiB image is within its limit; the ninth crosses the 512 KiB request limit.
    content = factories.jpeg_bytes((160, 160), noise=True)
    content += bytes(60 * KiB - len(content))
    parts = [FormPart(content, f"{n}.jpg", "image/jpeg") for n in range(10)]

    # Streamed without a Content-Length, so only the running count can catch it.
    response = await upload_stream(client, tenant, chunked(multipart_body(parts), 16 * KiB))

    assert response.status_code == 413
    body = response.json()
    assert "512 KiB" in body["detail"]
    assert '"8.jpg"' in body["detail"]
    assert body["errors"][0]["field"] == "files[8]"
    await assert_nothing_stored(runtime, tenant)


async def test_declared_content_length_over_the_request_limit_is_413_before_reading(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    pulled = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal pulled
        pulled += 1
        yield multipart_body([FormPart(factories.png_bytes(), "a.png")])

    headers = {
        **tenant.headers,
        "Content-Type": CONTENT_TYPE,
        "Content-Length": str(REQUEST_LIMIT + 1),
    }
    response = await client.post(MEDIA, content=body(), headers=headers)

    assert response.status_code == 413
    assert response.json()["detail"] == (
        f"The request's Content-Length of {REQUEST_LIMIT + 1} bytes exceeds the size limit "
        "of 512 KiB."
    )
    assert pulled == 0
    await assert_nothing_stored(runtime, tenant)


def test_limits_come_from_the_settings(settings: Settings) -> None:
    limits = service.upload_limits(settings)

    assert (limits.image_bytes, limits.gif_bytes, limits.video_bytes, limits.request_bytes) == (
        IMAGE_LIMIT,
        GIF_LIMIT,
        VIDEO_LIMIT,
        REQUEST_LIMIT,
    )


def test_default_limits_are_the_contracts(tmp_path: Path) -> None:
    limits = service.upload_limits(Settings(data_dir=tmp_path))

    MiB = 1024 * KiB
    assert (limits.image_bytes, limits.gif_bytes, limits.video_bytes, limits.request_bytes) == (
        20 * MiB,
        15 * MiB,
        1024 * MiB,
        2048 * MiB,
    )


def test_limits_accept_sizes_with_units_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRESSROOM_MEDIA_MAX_VIDEO_BYTES", "512MiB")
    monkeypatch.setenv("PRESSROOM_MEDIA_MAX_IMAGE_BYTES", "1048576")

    limits = service.upload_limits(Settings(data_dir=tmp_path))

    assert (limits.video_bytes, limits.image_bytes) == (512 * 1024 * KiB, 1024 * KiB)


def test_default_media_storage_is_the_media_directory_of_the_absolute_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PRESSROOM_MEDIA_STORAGE", raising=False)
    settings = Settings(data_dir=Path("relative data"))

    assert settings.media_storage_url == f"file://{tmp_path}/relative%20data/media"
    storage = service.storage_for(settings)
    assert isinstance(storage, LocalStorage)
    assert storage.root == tmp_path / "relative data" / "media"
    # Accepted files are renamed into it and made durable there: staging writes back early.
    assert service.stores_staged_files_in_place(settings)


def test_media_storage_setting_must_be_a_file_or_s3_url(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="file://PATH or s3://BUCKET/PREFIX"):
        Settings(data_dir=tmp_path, media_storage="ftp://example.com/media")
