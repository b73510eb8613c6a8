"""uploadMedia through the HTTP API with real files: what is accepted, described and recorded."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import httpx
import pytest

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

MEDIA_FIELDS = {
    "id",
    "kind",
    "mimeType",
    "filename",
    "sizeBytes",
    "sha256",
    "width",
    "height",
    "durationSeconds",
    "frameRate",
    "videoCodec",
    "audioCodec",
    "pageCount",
    "createdAt",
}


def expected_video_codec() -> str:
    return "h264" if factories.h264_or_mpeg4() == "libx264" else "mpeg4"


async def upload_one(
    client: httpx.AsyncClient, tenant: Tenant, content: bytes, filename: str, declared: str
) -> dict[str, object]:
    response = await upload(client, tenant, [FormPart(content, filename, declared)])
    assert response.status_code == 201, response.text
    [item] = response.json()["items"]
    return item  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("make", "mime_type", "filename"),
    [
        (factories.png_bytes, "image/png", "photo.png"),
        (factories.jpeg_bytes, "image/jpeg", "photo.jpg"),
        (factories.webp_bytes, "image/webp", "photo.webp"),
    ],
    ids=["png", "jpeg", "webp"],
)
async def test_still_image_is_described_from_its_bytes(
    client: httpx.AsyncClient,
    tenant: Tenant,
    make: Callable[[tuple[int, int]], bytes],
    mime_type: str,
    filename: str,
) -> None:
    content = make((321, 123))

    item = await upload_one(client, tenant, content, filename, mime_type)

    assert set(item) == MEDIA_FIELDS
    assert {k: v for k, v in item.items() if k not in ("id", "createdAt")} == {
        "kind": "image",
        "mimeType": mime_type,
        "filename": filename,
        "sizeBytes": len(content),
        "sha256": hashlib.sha256(content).hexdigest(),
        "width": 321,
        "height": 123,
        "durationSeconds": None,
        "frameRate": None,
        "videoCodec": None,
        "audioCodec": None,
        "pageCount": None,
    }
    assert str(item["createdAt"]).endswith("Z")


async def test_animated_gif_is_kind_gif_with_its_total_frame_time(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    content = factories.animated_bytes("GIF", frames=5, frame_ms=120)

    item = await upload_one(client, tenant, content, "loop.gif", "image/gif")

    assert (item["kind"], item["mimeType"], item["width"], item["height"]) == (
        "gif",
        "image/gif",
        40,
        30,
    )
    assert item["durationSeconds"] == pytest.approx(0.6)
    assert item["videoCodec"] is None


async def test_mp4_video_reports_dimensions_duration_rate_and_codecs(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    content = factories.mp4_bytes()

    item = await upload_one(client, tenant, content, "clip.mp4", "video/mp4")

    assert item["kind"] == "video"
    assert item["mimeType"] == "video/mp4"
    assert (item["width"], item["height"]) == factories.VIDEO_SIZE
    assert item["durationSeconds"] == pytest.approx(factories.VIDEO_SECONDS, abs=0.1)
    assert item["frameRate"] == pytest.approx(factories.VIDEO_FPS)
    assert item["videoCodec"] == expected_video_codec()
    assert item["audioCodec"] == "aac"
    assert item["sizeBytes"] == len(content)
    assert item["sha256"] == hashlib.sha256(content).hexdigest()


async def test_webm_video_reports_vp8_and_opus(client: httpx.AsyncClient, tenant: Tenant) -> None:
    item = await upload_one(client, tenant, factories.webm_bytes(), "clip.webm", "video/webm")

    assert (item["kind"], item["mimeType"]) == ("video", "video/webm")
    assert (item["videoCodec"], item["audioCodec"]) == ("vp8", "opus")
    assert item["durationSeconds"] == pytest.approx(factories.VIDEO_SECONDS, abs=0.1)


async def test_quicktime_movie_without_audio_has_null_audio_codec(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    item = await upload_one(client, tenant, factories.mov_bytes(), "clip.mov", "video/quicktime")

    assert (item["kind"], item["mimeType"]) == ("video", "video/quicktime")
    assert item["audioCodec"] is None
    assert (item["width"], item["height"]) == factories.VIDEO_SIZE


async def test_renamed_png_declared_as_video_is_inspected_as_png(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    item = await upload_one(client, tenant, factories.png_bytes((10, 20)), "movie.mp4", "video/mp4")

    assert (item["kind"], item["mimeType"], item["width"], item["height"]) == (
        "image",
        "image/png",
        10,
        20,
    )
    assert item["filename"] == "movie.mp4"


async def test_batch_answers_201_with_assets_in_part_order(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    parts = [
        FormPart(factories.jpeg_bytes(), "a.jpg", "image/jpeg"),
        FormPart(factories.mp4_bytes(), "b.mp4", "video/mp4"),
        FormPart(factories.gif_bytes(), "c.gif", "image/gif"),
    ]

    response = await upload(client, tenant, parts)

    assert response.status_code == 201
    items = response.json()["items"]
    assert [item["filename"] for item in items] == ["a.jpg", "b.mp4", "c.gif"]
    assert [item["kind"] for item in items] == ["image", "video", "gif"]
    assert len({item["id"] for item in items}) == 3
    assert await asset_count(runtime, tenant.organization_id) == 3


async def test_accepted_files_are_in_storage_and_none_left_in_staging(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    contents = [factories.png_bytes(), factories.webm_bytes()]
    parts = [FormPart(contents[0], "a.png"), FormPart(contents[1], "b.webm")]

    response = await upload(client, tenant, parts)

    assert response.status_code == 201
    stored = stored_files(runtime)
    assert sorted(path.read_bytes() for path in stored) == sorted(contents)
    # Keyed by organization and asset id, with the proven type's extension.
    ids = {item["id"] for item in response.json()["items"]}
    assert {path.stem for path in stored} == ids
    assert {path.suffix for path in stored} == {".png", ".webm"}
    assert {path.parent.name for path in stored} == {str(tenant.organization_id)}
    assert staged_files(runtime) == []


async def test_each_asset_emits_media_created_with_its_get_media_form(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    parts = [FormPart(factories.png_bytes(), "a.png"), FormPart(factories.jpeg_bytes(), "b.jpg")]

    response = await upload(client, tenant, parts)

    events = await media_events(runtime, tenant.organization_id)
    assert len(events) == 2
    payloads = [json.loads(event.body) for event in events]
    assert {p["type"] for p in payloads} == {"media.created.v1"}
    assert {p["organizationId"] for p in payloads} == {str(tenant.organization_id)}
    by_id = {p["data"]["media"]["id"]: p["data"] for p in payloads}
    for item in response.json()["items"]:
        fetched = (await client.get(f"{MEDIA}/{item['id']}", headers=tenant.headers)).json()
        assert by_id[item["id"]] == {"media": fetched}


async def test_upload_appends_one_audit_entry_listing_every_asset(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    parts = [FormPart(factories.png_bytes(), "a.png"), FormPart(factories.gif_bytes(), "b.gif")]

    response = await upload(client, tenant, parts)

    [entry] = await upload_audit_entries(runtime, tenant.organization_id)
    ids = [item["id"] for item in response.json()["items"]]
    assert entry.outcome_status == 201
    assert entry.member_id == tenant.member_id
    assert (entry.resource_type, entry.resource_id) == ("media", ids[0])
    assert entry.changes["mediaIds"] == ids
    assert [f["filename"] for f in entry.changes["files"]] == ["a.png", "b.gif"]


async def test_client_file_name_is_reduced_to_its_last_segment(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    item = await upload_one(
        client, tenant, factories.png_bytes(), "../../etc/\u00e9t\u00e9.png", "image/png"
    )

    assert item["filename"] == "\u00e9t\u00e9.png"


async def test_upload_with_a_files_part_named_twice_keeps_both(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    # The same bytes twice are two assets: uploads are not deduplicated.
    content = factories.png_bytes()
    parts = [FormPart(content, "same.png"), FormPart(content, "same.png")]

    response = await upload(client, tenant, parts)

    items = response.json()["items"]
    assert items[0]["sha256"] == items[1]["sha256"]
    assert items[0]["id"] != items[1]["id"]


async def test_upload_creates_the_staging_directory_under_the_data_dir(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    staging = runtime.settings.resolved_data_dir / "staging" / "media"
    assert not staging.exists()

    response = await upload(client, tenant, [FormPart(factories.png_bytes(), "a.png")])

    assert response.status_code == 201
    assert staging.is_dir()
