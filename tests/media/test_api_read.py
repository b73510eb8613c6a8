"""listMedia, getMedia, getMediaContent and the service functions other domains call."""

from __future__ import annotations

import uuid
from contextlib import aclosing

import httpx
import pytest
from fastapi import FastAPI

from pressroom.db import unit_of_work
from pressroom.media import service
from pressroom.media.storage import READ_CHUNK
from pressroom.providers.validation import MediaFacts
from pressroom.runtime import Runtime
from tests.factories import Tenant
from tests.factories import add_member_with_key

from . import factories
from .api import MEDIA
from .api import asgi_call
from .api import stored_files
from .api import upload
from .factories import FormPart


async def upload_files(
    client: httpx.AsyncClient, tenant: Tenant, parts: list[FormPart]
) -> list[dict[str, object]]:
    response = await upload(client, tenant, parts)
    assert response.status_code == 201, response.text
    return response.json()["items"]  # type: ignore[no-any-return]


async def test_get_media_answers_the_uploaded_form(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    [item] = await upload_files(client, tenant, [FormPart(factories.mp4_bytes(), "clip.mp4")])

    response = await client.get(f"{MEDIA}/{item['id']}", headers=tenant.headers)

    assert response.status_code == 200
    assert response.json() == item


async def test_media_of_another_organization_is_404_like_a_missing_one(
    client: httpx.AsyncClient, tenant: Tenant, other_tenant: Tenant
) -> None:
    [item] = await upload_files(client, tenant, [FormPart(factories.png_bytes(), "a.png")])

    foreign = await client.get(f"{MEDIA}/{item['id']}", headers=other_tenant.headers)
    missing = await client.get(f"{MEDIA}/{uuid.uuid4()}", headers=other_tenant.headers)

    assert (foreign.status_code, foreign.json()["code"]) == (404, "not_found")
    assert foreign.json()["detail"] == missing.json()["detail"]


async def test_content_of_another_organization_is_404(
    client: httpx.AsyncClient, tenant: Tenant, other_tenant: Tenant
) -> None:
    [item] = await upload_files(client, tenant, [FormPart(factories.png_bytes(), "a.png")])

    response = await client.get(f"{MEDIA}/{item['id']}/content", headers=other_tenant.headers)

    assert (response.status_code, response.json()["code"]) == (404, "not_found")


async def test_media_id_that_is_not_a_uuid_is_400(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    response = await client.get(f"{MEDIA}/not-a-uuid", headers=tenant.headers)

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "mediaId"


async def test_list_is_newest_first_and_pages_with_a_cursor(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    ids = []
    for n in range(3):
        [item] = await upload_files(client, tenant, [FormPart(factories.png_bytes(), f"{n}.png")])
        ids.append(item["id"])

    first = (await client.get(MEDIA, params={"pageSize": 2}, headers=tenant.headers)).json()
    second = (
        await client.get(
            MEDIA, params={"pageSize": 2, "cursor": first["nextCursor"]}, headers=tenant.headers
        )
    ).json()

    assert [item["id"] for item in first["items"]] == [ids[2], ids[1]]
    assert [item["id"] for item in second["items"]] == [ids[0]]
    assert second["nextCursor"] is None


async def test_list_items_have_the_get_media_form(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    [item] = await upload_files(client, tenant, [FormPart(factories.webm_bytes(), "v.webm")])

    listed = (await client.get(MEDIA, headers=tenant.headers)).json()

    assert listed == {"items": [item], "nextCursor": None}


async def test_list_shows_only_the_callers_organization(
    client: httpx.AsyncClient, tenant: Tenant, other_tenant: Tenant
) -> None:
    await upload_files(client, tenant, [FormPart(factories.png_bytes(), "mine.png")])

    listed = (await client.get(MEDIA, headers=other_tenant.headers)).json()

    assert listed["items"] == []


async def test_list_with_a_tampered_cursor_is_400(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    response = await client.get(MEDIA, params={"cursor": "AAAA" * 10}, headers=tenant.headers)

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "cursor"


async def test_list_page_size_over_100_is_400(client: httpx.AsyncClient, tenant: Tenant) -> None:
    response = await client.get(MEDIA, params={"pageSize": 101}, headers=tenant.headers)

    assert response.status_code == 400


@pytest.mark.parametrize(
    ("make", "filename", "mime_type"),
    [
        (factories.mp4_bytes, "clip.mp4", "video/mp4"),
        (lambda: factories.jpeg_bytes((300, 200), noise=True), "photo.jpg", "image/jpeg"),
    ],
    ids=["mp4", "jpeg"],
)
async def test_content_round_trips_the_exact_bytes_with_type_length_and_etag(
    client: httpx.AsyncClient,
    tenant: Tenant,
    make: object,
    filename: str,
    mime_type: str,
) -> None:
    content: bytes = make()  # type: ignore[operator]
    [item] = await upload_files(client, tenant, [FormPart(content, filename, "text/plain")])

    response = await client.get(f"{MEDIA}/{item['id']}/content", headers=tenant.headers)

    assert response.status_code == 200
    assert response.content == content
    assert response.headers["content-type"] == mime_type
    assert response.headers["content-length"] == str(len(content))
    assert response.headers["etag"] == f'"{item["sha256"]}"'
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-request-id"]


async def test_content_is_streamed_in_pieces_not_read_whole(
    app: FastAPI, client: httpx.AsyncClient, tenant: Tenant
) -> None:
    content = factories.padded_mp4_bytes(3 * 1024 * 1024 + 123)
    [item] = await upload_files(client, tenant, [FormPart(content, "padded.mp4")])

    sent = await asgi_call(app, "GET", f"{MEDIA}/{item['id']}/content", tenant.headers)

    pieces = [m["body"] for m in sent if m["type"] == "http.response.body" and m.get("body")]
    assert b"".join(pieces) == content
    assert max(len(piece) for piece in pieces) <= READ_CHUNK
    assert len(pieces) == 4


async def test_content_names_the_file_for_downloads(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    [item] = await upload_files(client, tenant, [FormPart(factories.png_bytes(), "été 1.png")])

    response = await client.get(f"{MEDIA}/{item['id']}/content", headers=tenant.headers)

    assert response.headers["content-disposition"] == (
        "inline; filename=\"_t_ 1.png\"; filename*=UTF-8''%C3%A9t%C3%A9%201.png"
    )


async def test_content_of_png_bytes_named_html_is_served_as_a_png(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    [item] = await upload_files(
        client, tenant, [FormPart(factories.png_bytes(), "x.html", "text/html")]
    )

    response = await client.get(f"{MEDIA}/{item['id']}/content", headers=tenant.headers)

    assert item["filename"] == "x.html"  # the client's name is kept as sent...
    # ...but the download is named, typed and marked after what the bytes are.
    assert response.headers["content-disposition"] == (
        "inline; filename=\"x.png\"; filename*=UTF-8''x.png"
    )
    assert response.headers["content-type"] == "image/png"
    assert response.headers["x-content-type-options"] == "nosniff"


async def test_content_disposition_of_a_name_with_quotes_and_unicode_is_safe(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    sent = 'quote\\"d résumé%41.html'  # escaped as a quoted-string in the part header
    [item] = await upload_files(client, tenant, [FormPart(factories.png_bytes(), sent)])

    response = await client.get(f"{MEDIA}/{item['id']}/content", headers=tenant.headers)

    assert item["filename"] == 'quote"d résumé%41.html'
    assert response.headers["content-disposition"] == (
        'inline; filename="quote\'d r_sum__41.png"; '
        "filename*=UTF-8''quote%22d%20r%C3%A9sum%C3%A9%2541.png"
    )


@pytest.mark.parametrize(
    "filename",
    ['a\r\nSet-Cookie: x=1".png', "evil\"; filename*=UTF-8''x.html", "tab\there\\.png"],
)
def test_content_disposition_never_breaks_out_of_its_header_value(filename: str) -> None:
    from pressroom.media.routes import content_disposition

    value = content_disposition(filename)

    fallback, _, encoded = value.removeprefix('inline; filename="').partition('"; filename*=')
    assert all(" " <= char <= "~" for char in value)
    assert not any(char in fallback for char in '"\\%')
    assert encoded.startswith("UTF-8''") and ";" not in encoded and " " not in encoded


@pytest.mark.parametrize(
    ("filename", "mime_type", "served"),
    [
        ("x.html", "image/png", "x.png"),
        ("photo.JPEG", "image/jpeg", "photo.JPEG"),
        ("photo.jpg", "image/jpeg", "photo.jpg"),
        ("photo.png", "image/jpeg", "photo.jpg"),
        ("clip", "video/mp4", "clip.mp4"),
        ("x.png.html", "image/png", "x.png.png"),
        ("movie.qt", "video/quicktime", "movie.qt"),
        ("upload", "image/gif", "upload.gif"),
    ],
)
def test_served_file_name_keeps_the_stem_and_takes_the_proven_extension(
    filename: str, mime_type: str, served: str
) -> None:
    assert service.served_filename(filename, mime_type) == served


@pytest.mark.parametrize("given", ["{etag}", "W/{etag}", '"other", {etag}', "*"])
async def test_content_with_matching_if_none_match_is_304(
    client: httpx.AsyncClient, tenant: Tenant, given: str
) -> None:
    [item] = await upload_files(client, tenant, [FormPart(factories.png_bytes(), "a.png")])
    etag = f'"{item["sha256"]}"'

    response = await client.get(
        f"{MEDIA}/{item['id']}/content",
        headers={**tenant.headers, "If-None-Match": given.format(etag=etag)},
    )

    assert response.status_code == 304
    assert response.content == b""
    assert response.headers["etag"] == etag


async def test_content_with_another_if_none_match_is_200(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    [item] = await upload_files(client, tenant, [FormPart(factories.png_bytes(), "a.png")])

    response = await client.get(
        f"{MEDIA}/{item['id']}/content", headers={**tenant.headers, "If-None-Match": '"stale"'}
    )

    assert response.status_code == 200


async def test_content_whose_stored_file_vanished_is_a_clean_500(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    [item] = await upload_files(client, tenant, [FormPart(factories.png_bytes(), "a.png")])
    [path] = stored_files(runtime)
    path.unlink()

    response = await client.get(f"{MEDIA}/{item['id']}/content", headers=tenant.headers)

    assert response.status_code == 500
    assert response.json()["code"] == "internal_error"


async def test_key_with_media_read_only_can_download(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    [item] = await upload_files(client, tenant, [FormPart(factories.png_bytes(), "a.png")])
    reader = await add_member_with_key(runtime, tenant.organization_id, scopes=["media:read"])

    response = await client.get(f"{MEDIA}/{item['id']}/content", headers=reader.headers)

    assert response.status_code == 200


async def test_open_media_streams_the_stored_bytes_for_adapters(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    content = factories.webm_bytes()
    [item] = await upload_files(client, tenant, [FormPart(content, "clip.webm")])
    async with unit_of_work(runtime.sessions) as session:
        asset = await service.get_media(session, tenant.organization_id, uuid.UUID(str(item["id"])))

    async with aclosing(service.open_media(runtime, asset)) as chunks:
        received = b"".join([chunk async for chunk in chunks])

    assert received == content


async def test_media_facts_carry_what_provider_rules_check(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    content = factories.mp4_bytes()
    [item] = await upload_files(client, tenant, [FormPart(content, "clip.mp4")])
    async with unit_of_work(runtime.sessions) as session:
        assets = await service.get_assets(
            session, tenant.organization_id, [uuid.UUID(str(item["id"])), uuid.uuid4()]
        )

    [asset] = assets.values()
    assert service.media_facts(asset) == MediaFacts(
        id=str(item["id"]),
        kind="video",
        mime_type="video/mp4",
        size_bytes=len(content),
        width=factories.VIDEO_SIZE[0],
        height=factories.VIDEO_SIZE[1],
        duration_seconds=item["durationSeconds"],  # type: ignore[arg-type]
    )
