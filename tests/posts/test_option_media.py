"""A target option that names a media item of the organization's library (YouTube's
`thumbnailMediaId`) is checked at createPost and updatePost: the item must exist in this
organization and meet the option's media rule (thumbnails.set: JPEG or PNG, 2 MB), else a 400
whose field error names the option."""

from __future__ import annotations

import uuid

import httpx

from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import add_media
from tests.posts.factories import create_post
from tests.posts.factories import patch_post
from tests.posts.factories import post_body

FIELD = "targets[0].options.thumbnailMediaId"


async def youtube_target(
    runtime: Runtime, tenant: Tenant, thumbnail: object
) -> tuple[uuid.UUID, dict[str, object]]:
    channel = await connect_channel(runtime, tenant.organization_id, provider="youtube")
    clip = await add_media(
        runtime,
        tenant.organization_id,
        kind="video",
        mime_type="video/mp4",
        width=1920,
        height=1080,
        duration_seconds=30,
    )
    body = post_body(
        channel,
        text="What we shipped",
        mediaIds=[str(clip)],
        targets=[
            {
                "channelId": str(channel),
                "contentKind": "video",
                "options": {"title": "Launch day", "thumbnailMediaId": thumbnail},
            }
        ],
    )
    return channel, body


async def refused(
    client: httpx.AsyncClient, tenant: Tenant, body: dict[str, object]
) -> list[dict[str, str]]:
    response = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
    assert response.status_code == 400, response.text
    return [e for e in response.json()["errors"] if e["field"] == FIELD]


async def test_a_png_of_the_organization_within_2_mb_is_accepted(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    png = await add_media(
        runtime, tenant.organization_id, mime_type="image/png", size_bytes=2_000_000
    )
    _, body = await youtube_target(runtime, tenant, str(png))
    post = await create_post(client, tenant, body)
    assert post["targets"][0]["options"]["thumbnailMediaId"] == str(png)


async def test_a_thumbnail_over_2_mb_is_refused_naming_the_option(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    big = await add_media(runtime, tenant.organization_id, size_bytes=2_000_001)
    _, body = await youtube_target(runtime, tenant, str(big))
    [error] = await refused(client, tenant, body)
    assert error["code"] == "too_large"
    assert "2,000,000 bytes (2 MB)" in error["message"]


async def test_a_webp_or_a_video_is_not_a_thumbnail(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    webp = await add_media(runtime, tenant.organization_id, mime_type="image/webp")
    _, body = await youtube_target(runtime, tenant, str(webp))
    assert [e["code"] for e in await refused(client, tenant, body)] == ["unsupported_media_type"]
    clip = await add_media(
        runtime, tenant.organization_id, kind="video", mime_type="video/mp4", duration_seconds=3
    )
    _, body = await youtube_target(runtime, tenant, str(clip))
    assert [e["code"] for e in await refused(client, tenant, body)] == ["unsupported_media_kind"]


async def test_another_organizations_image_or_no_id_names_no_media(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
) -> None:
    foreign = await add_media(runtime, other_tenant.organization_id)
    for value in (str(foreign), str(uuid.uuid4()), "not-an-id"):
        _, body = await youtube_target(runtime, tenant, value)
        assert [e["code"] for e in await refused(client, tenant, body)] == ["unknown_media"]
    _, body = await youtube_target(runtime, tenant, 42)
    assert [e["code"] for e in await refused(client, tenant, body)] == ["invalid_type"]


async def test_an_update_naming_a_bad_thumbnail_is_refused_too(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    channel, body = await youtube_target(runtime, tenant, None)
    post = await create_post(client, tenant, body)
    big = await add_media(runtime, tenant.organization_id, size_bytes=3_000_000)
    target = post["targets"][0]
    response = await patch_post(
        client,
        tenant,
        post["id"],
        {
            "targets": [
                {
                    "id": target["id"],
                    "channelId": str(channel),
                    "contentKind": "video",
                    "options": {"title": "Launch day", "thumbnailMediaId": str(big)},
                }
            ]
        },
    )
    assert response.status_code == 400, response.text
    assert [(e["field"], e["code"]) for e in response.json()["errors"]] == [(FIELD, "too_large")]
