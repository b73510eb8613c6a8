"""uploadMedia refusals through the HTTP API: the right status, the file named, nothing kept."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from pressroom.runtime import Runtime
from tests.factories import Tenant

from . import factories
from .api import MEDIA
from .api import asgi_call
from .api import assert_nothing_stored
from .api import upload
from .api import upload_audit_entries
from .factories import CONTENT_TYPE
from .factories import FormPart
from .factories import multipart_body


@functools.cache
def png_bomb_bytes() -> bytes:
    """A valid 30,000 x 30,000 PNG (900 megapixels) in under 1 MB."""
    with tempfile.TemporaryDirectory() as scratch:
        return factories.write_png_bomb(Path(scratch) / "bomb.png", 30_000, 30_000).read_bytes()


def truncated_jpeg() -> bytes:
    content = factories.jpeg_bytes((256, 256), noise=True)
    return content[: len(content) // 2]


def assert_problem(response: httpx.Response, status: int, code: str, field: str | None) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == code
    if field is not None:
        assert [error["field"] for error in body["errors"]] == [field]


@pytest.mark.parametrize(
    ("content", "filename", "declared", "status", "code"),
    [
        (truncated_jpeg(), "cut.jpg", "image/jpeg", 422, "unprocessable_media"),
        (b"", "empty.png", "image/png", 422, "unprocessable_media"),
        (b"this is not a video\n" * 20, "notes.mp4", "video/mp4", 415, "unsupported_media_type"),
        (png_bomb_bytes(), "bomb.png", "image/png", 422, "unprocessable_media"),
    ],
    ids=["truncated-jpeg", "empty-file", "text-named-mp4", "png-bomb-30000x30000"],
)
async def test_bad_file_is_refused_naming_it_and_nothing_is_kept(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    content: bytes,
    filename: str,
    declared: str,
    status: int,
    code: str,
) -> None:
    response = await upload(client, tenant, [FormPart(content, filename, declared)])

    assert_problem(response, status, code, "files[0]")
    assert f'"{filename}"' in response.json()["detail"]
    await assert_nothing_stored(runtime, tenant)


async def test_png_bomb_is_refused_for_its_pixel_count(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    response = await upload(client, tenant, [FormPart(png_bomb_bytes(), "bomb.png", "image/png")])

    assert "decompression bomb" in response.json()["detail"]


async def test_audio_only_mp4_is_422_for_having_no_video_stream(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    content = factories.audio_only_mp4_bytes()

    response = await upload(client, tenant, [FormPart(content, "song.m4a", "video/mp4")])

    assert_problem(response, 422, "unprocessable_media", "files[0]")
    assert "no video stream" in response.json()["detail"]
    await assert_nothing_stored(runtime, tenant)


async def test_batch_with_one_undecodable_file_stores_nothing(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    parts = [
        FormPart(factories.png_bytes(), "good.png", "image/png"),
        FormPart(factories.mp4_bytes(), "good.mp4", "video/mp4"),
        FormPart(truncated_jpeg(), "bad.jpg", "image/jpeg"),
    ]

    response = await upload(client, tenant, parts)

    assert_problem(response, 422, "unprocessable_media", "files[2]")
    assert '"bad.jpg"' in response.json()["detail"]
    await assert_nothing_stored(runtime, tenant)


async def test_batch_with_one_unsupported_file_stores_nothing(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    parts = [
        FormPart(factories.png_bytes(), "good.png", "image/png"),
        # A PPTX (a ZIP): LinkedIn takes them, Pressroom does not (README "Media").
        FormPart(b"PK\x03\x04" + bytes(5000), "deck.pptx", "application/vnd.ms-powerpoint"),
        FormPart(factories.jpeg_bytes(), "later.jpg", "image/jpeg"),
    ]

    response = await upload(client, tenant, parts)

    assert_problem(response, 415, "unsupported_media_type", "files[1]")
    await assert_nothing_stored(runtime, tenant)


async def test_refused_upload_is_audited_with_its_status(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    await upload(client, tenant, [FormPart(truncated_jpeg(), "cut.jpg")])

    [entry] = await upload_audit_entries(runtime, tenant.organization_id)
    assert entry.outcome_status == 422


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/x-www-form-urlencoded", "image/png", None],
    ids=["json", "urlencoded-form", "raw-image", "no-content-type"],
)
async def test_request_that_is_not_multipart_is_415(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, content_type: str | None
) -> None:
    headers = dict(tenant.headers)
    if content_type is not None:
        headers["Content-Type"] = content_type

    response = await client.post(MEDIA, content=factories.png_bytes(), headers=headers)

    assert_problem(response, 415, "unsupported_media_type", None)
    await assert_nothing_stored(runtime, tenant)


async def test_upload_without_files_is_400(client: httpx.AsyncClient, tenant: Tenant) -> None:
    response = await upload(client, tenant, [])

    assert_problem(response, 400, "validation_failed", "files")


async def test_upload_of_eleven_files_is_400_and_stores_nothing(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    parts = [FormPart(factories.png_bytes(), f"{n}.png", "image/png") for n in range(11)]

    response = await upload(client, tenant, parts)

    assert_problem(response, 400, "validation_failed", "files")
    await assert_nothing_stored(runtime, tenant)


async def test_ten_files_are_accepted(client: httpx.AsyncClient, tenant: Tenant) -> None:
    parts = [FormPart(factories.png_bytes(), f"{n}.png", "image/png") for n in range(10)]

    response = await upload(client, tenant, parts)

    assert response.status_code == 201
    assert len(response.json()["items"]) == 10


async def test_other_form_field_is_400_naming_it(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    parts = [
        FormPart(factories.png_bytes(), "a.png", "image/png"),
        FormPart(b"hello", None, None, name="caption"),
    ]

    response = await upload(client, tenant, parts)

    assert_problem(response, 400, "validation_failed", "caption")
    await assert_nothing_stored(runtime, tenant)


async def test_body_cut_before_its_closing_boundary_is_400(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    body = multipart_body([FormPart(factories.png_bytes(), "a.png")])
    headers = {**tenant.headers, "Content-Type": CONTENT_TYPE}

    response = await client.post(MEDIA, content=body[:-40], headers=headers)

    assert_problem(response, 400, "validation_failed", "files")
    await assert_nothing_stored(runtime, tenant)


async def test_malformed_idempotency_key_is_400_before_the_body_is_read(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    response = await upload(
        client, tenant, [FormPart(factories.png_bytes(), "a.png")], {"Idempotency-Key": "has space"}
    )

    assert_problem(response, 400, "validation_failed", "Idempotency-Key")
    await assert_nothing_stored(runtime, tenant)


async def test_client_disconnect_mid_upload_leaves_nothing_behind(
    app: FastAPI, runtime: Runtime, tenant: Tenant
) -> None:
    body = multipart_body([FormPart(factories.mp4_bytes(), "clip.mp4", "video/mp4")])

    sent = await asgi_call(
        app,
        "POST",
        MEDIA,
        {**tenant.headers, "Content-Type": CONTENT_TYPE},
        [
            {"type": "http.request", "body": body[: len(body) // 2], "more_body": True},
            {"type": "http.disconnect"},
        ],
    )

    assert sent[0]["status"] == 400  # nobody reads it, but it is not a 500
    await assert_nothing_stored(runtime, tenant)
