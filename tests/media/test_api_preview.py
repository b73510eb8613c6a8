"""getMediaPreview: a bounded JPEG of an image, a GIF's first frame or a video's poster frame,
made once and kept; scope and organization checks like the other media reads."""

from __future__ import annotations

import io

import httpx
from PIL import Image

from pressroom.runtime import Runtime
from tests.factories import Tenant
from tests.factories import make_tenant

from . import factories
from .api import MEDIA
from .api import upload
from .factories import FormPart


async def uploaded(client: httpx.AsyncClient, tenant: Tenant, data: bytes, name: str) -> str:
    response = await upload(client, tenant, [FormPart(data, name)])
    assert response.status_code == 201, response.text
    return str(response.json()["items"][0]["id"])


def decoded(response: httpx.Response) -> Image.Image:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/jpeg"
    image = Image.open(io.BytesIO(response.content))
    assert image.format == "JPEG"
    return image


async def test_a_large_image_is_shrunk_to_320_pixels_keeping_its_shape(
    client: httpx.AsyncClient, tenant: Tenant, runtime: Runtime
) -> None:
    media_id = await uploaded(client, tenant, factories.png_bytes((1200, 600)), "wide.png")
    response = await client.get(f"{MEDIA}/{media_id}/preview", headers=tenant.headers)
    assert decoded(response).size == (320, 160)
    assert response.headers["cache-control"] == "private, max-age=31536000, immutable"
    kept = runtime.settings.resolved_data_dir / "previews" / f"{media_id}.jpg"
    assert kept.read_bytes() == response.content
    again = await client.get(f"{MEDIA}/{media_id}/preview", headers=tenant.headers)
    assert again.content == response.content


async def test_a_small_jpeg_keeps_its_size(client: httpx.AsyncClient, tenant: Tenant) -> None:
    media_id = await uploaded(client, tenant, factories.jpeg_bytes((64, 48)), "small.jpg")
    response = await client.get(f"{MEDIA}/{media_id}/preview", headers=tenant.headers)
    assert decoded(response).size == (64, 48)


async def test_a_gif_and_a_video_preview_their_first_frame(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    gif = await uploaded(client, tenant, factories.animated_bytes("GIF", 3, 100), "a.gif")
    assert decoded(await client.get(f"{MEDIA}/{gif}/preview", headers=tenant.headers)).size == (
        40,
        30,
    )
    for data, name in ((factories.mp4_bytes(), "clip.mp4"), (factories.webm_bytes(), "c.webm")):
        video = await uploaded(client, tenant, data, name)
        facts = (await client.get(f"{MEDIA}/{video}", headers=tenant.headers)).json()
        poster = decoded(await client.get(f"{MEDIA}/{video}/preview", headers=tenant.headers))
        assert max(poster.size) <= 320
        assert poster.size[0] / poster.size[1] == facts["width"] / facts["height"]


async def test_another_organizations_asset_and_a_missing_scope_are_refused(
    client: httpx.AsyncClient, tenant: Tenant, runtime: Runtime
) -> None:
    media_id = await uploaded(client, tenant, factories.png_bytes(), "a.png")
    other = await make_tenant(runtime, name="Other")
    foreign = await client.get(f"{MEDIA}/{media_id}/preview", headers=other.headers)
    assert foreign.status_code == 404
    assert foreign.json()["code"] == "not_found"
    writer = await make_tenant(runtime, name="Writer", scopes=["media:write"])
    media_of_writer = await uploaded(client, writer, factories.png_bytes(), "b.png")
    refused = await client.get(f"{MEDIA}/{media_of_writer}/preview", headers=writer.headers)
    assert refused.status_code == 403
    assert refused.json()["code"] == "insufficient_scope"
