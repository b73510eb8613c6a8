"""The providers' media rules applied to posts through the API: each violation is a 400 on
`targets[i].mediaIds` (the list) or `targets[i].mediaIds[j]` (one item), named by the target's
index and the item's, on create and on update."""

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


async def image(runtime: Runtime, tenant: Tenant, **facts: object) -> str:
    return str(await add_media(runtime, tenant.organization_id, **facts))  # type: ignore[arg-type]


async def video(runtime: Runtime, tenant: Tenant, seconds: float = 10, **facts: object) -> str:
    shape: dict[str, object] = {
        "kind": "video",
        "mime_type": "video/mp4",
        "width": 1080,
        "height": 1920,
        "duration_seconds": seconds,
    }
    return await image(runtime, tenant, **{**shape, **facts})


async def refused(
    client: httpx.AsyncClient, tenant: Tenant, body: dict[str, object]
) -> list[tuple[str, str]]:
    response = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
    assert response.status_code == 400, response.text
    return [(e["field"], e["code"]) for e in response.json()["errors"]]


async def test_too_many_images_for_x_is_400_on_the_list(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    x = await connect_channel(runtime, tenant.organization_id, provider="x")
    images = [await image(runtime, tenant) for _ in range(5)]
    assert await refused(client, tenant, post_body(x, mediaIds=images)) == [
        ("targets[0].mediaIds", "too_many")
    ]
    assert (await create_post(client, tenant, post_body(x, mediaIds=images[:4])))["id"]


async def test_a_video_on_an_image_only_kind_is_400_on_the_item(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    instagram = await connect_channel(runtime, tenant.organization_id, provider="instagram")
    tiktok = await connect_channel(runtime, tenant.organization_id, provider="tiktok")
    clip = await video(runtime, tenant, width=1080, height=1080)
    body = post_body(
        instagram,
        targets=[
            {"channelId": str(instagram), "contentKind": "post", "mediaIds": [clip]},
            {"channelId": str(tiktok), "contentKind": "photo", "mediaIds": [clip]},
        ],
    )
    assert await refused(client, tenant, body) == [
        ("targets[0].mediaIds[0]", "unsupported_media_kind"),
        ("targets[1].mediaIds[0]", "unsupported_media_kind"),
    ]


async def test_a_mime_type_the_network_refuses_is_400_on_the_item(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    tiktok = await connect_channel(runtime, tenant.organization_id, provider="tiktok")
    jpeg = await image(runtime, tenant)
    png = await image(runtime, tenant, mime_type="image/png")
    body = post_body(
        tiktok,
        targets=[{"channelId": str(tiktok), "contentKind": "photo", "mediaIds": [jpeg, png]}],
    )
    response = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["field"], error["code"]) == ("targets[0].mediaIds[1]", "unsupported_media_type")
    assert error["message"] == "is image/png; tiktok photo accepts image/jpeg, image/webp"


async def test_a_video_too_long_for_the_network_is_400_on_the_item(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    x = await connect_channel(runtime, tenant.organization_id, provider="x")
    youtube = await connect_channel(runtime, tenant.organization_id, provider="youtube")
    long_clip = await video(runtime, tenant, seconds=181)
    body = {
        "text": "Watch",
        "mediaIds": [long_clip],
        "targets": [
            {"channelId": str(x)},
            {"channelId": str(youtube), "contentKind": "short", "options": {"title": "Clip"}},
            {"channelId": str(youtube), "contentKind": "video", "options": {"title": "Clip"}},
        ],
    }
    response = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert [(e["field"], e["code"]) for e in errors] == [
        ("targets[0].mediaIds[0]", "too_long"),
        ("targets[1].mediaIds[0]", "too_long"),
    ]
    assert errors[0]["message"] == "lasts 181 seconds; x post accepts videos up to 140 seconds"
    # At the limit it is accepted.
    body["mediaIds"] = [await video(runtime, tenant, seconds=140)]
    assert (await create_post(client, tenant, body))["id"]


async def test_a_file_too_large_for_the_network_is_400_on_the_item(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    bluesky = await connect_channel(runtime, tenant.organization_id, provider="bluesky")
    fits = await image(runtime, tenant, size_bytes=1_000_000)
    too_big = await image(runtime, tenant, size_bytes=1_000_001)
    assert await refused(client, tenant, post_body(bluesky, mediaIds=[fits, too_big])) == [
        ("targets[0].mediaIds[1]", "too_large")
    ]


async def test_a_video_mixed_with_images_where_it_must_stand_alone_is_400_on_the_list(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    sandbox = await connect_channel(runtime, tenant.organization_id)
    media = [await image(runtime, tenant), await video(runtime, tenant)]
    assert await refused(client, tenant, post_body(sandbox, mediaIds=media)) == [
        ("targets[0].mediaIds", "mixed_media")
    ]


async def test_a_target_override_is_named_by_its_own_indexes(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    sandbox = await connect_channel(runtime, tenant.organization_id)
    instagram = await connect_channel(runtime, tenant.organization_id, provider="instagram")
    square = await image(runtime, tenant)
    tall = await image(runtime, tenant, width=1080, height=1920)
    body = post_body(
        sandbox,
        mediaIds=[square],
        targets=[
            {"channelId": str(sandbox)},
            {"channelId": str(instagram), "contentKind": "carousel", "mediaIds": [square, tall]},
        ],
    )
    assert await refused(client, tenant, body) == [
        ("targets[1].mediaIds[1]", "invalid_aspect_ratio")
    ]


async def test_media_added_by_a_patch_is_held_to_the_same_rules(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    sandbox = await connect_channel(runtime, tenant.organization_id)
    instagram = await connect_channel(runtime, tenant.organization_id, provider="instagram")
    jpeg = await image(runtime, tenant)
    post = await create_post(
        client,
        tenant,
        post_body(
            sandbox,
            mediaIds=[jpeg],
            targets=[{"channelId": str(sandbox)}, {"channelId": str(instagram)}],
        ),
    )
    clip = await video(runtime, tenant)
    response = await patch_post(client, tenant, post["id"], {"mediaIds": [jpeg, clip]})
    assert response.status_code == 400
    assert [(e["field"], e["code"]) for e in response.json()["errors"]] == [
        ("targets[0].mediaIds", "mixed_media"),
        ("targets[1].mediaIds", "too_many"),
        ("targets[1].mediaIds[1]", "unsupported_media_kind"),
    ]
    unknown = str(uuid.uuid4())
    response = await patch_post(
        client,
        tenant,
        post["id"],
        {
            "targets": [
                {"id": post["targets"][0]["id"]},
                {"id": post["targets"][1]["id"], "mediaIds": [jpeg, unknown]},
            ]
        },
    )
    assert [(e["field"], e["code"]) for e in response.json()["errors"]] == [
        ("targets[1].mediaIds[1]", "unknown_media")
    ]


async def test_a_youtube_title_over_100_graphemes_is_400_on_the_option(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    youtube = await connect_channel(runtime, tenant.organization_id, provider="youtube")
    clip = await video(runtime, tenant)
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"

    def body(title: str) -> dict[str, object]:
        target = {"channelId": str(youtube), "mediaIds": [clip], "options": {"title": title}}
        return {"text": "Description", "targets": [target]}

    assert (await create_post(client, tenant, body(family * 100)))["id"]
    response = await client.post("/api/v1/posts", json=body(family * 101), headers=tenant.headers)
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["field"], error["code"]) == ("targets[0].options.title", "too_long")


async def document(runtime: Runtime, tenant: Tenant, pages: int = 12, **facts: object) -> str:
    shape: dict[str, object] = {
        "kind": "document",
        "mime_type": "application/pdf",
        "width": None,
        "height": None,
        "page_count": pages,
    }
    return await image(runtime, tenant, **{**shape, **facts})


async def test_a_linkedin_post_takes_one_pdf_document(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    linkedin = await connect_channel(runtime, tenant.organization_id, provider="linkedin")
    pdf = await document(runtime, tenant, pages=300, size_bytes=100_000_000)
    post = await create_post(client, tenant, post_body(linkedin, mediaIds=[pdf]))
    assert post["targets"][0]["mediaIds"] == [pdf]


async def test_a_document_is_alone_one_and_within_linkedins_pages_and_size(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    linkedin = await connect_channel(runtime, tenant.organization_id, provider="linkedin")
    pdf, other = await document(runtime, tenant), await document(runtime, tenant)
    assert await refused(
        client, tenant, post_body(linkedin, mediaIds=[pdf, await image(runtime, tenant)])
    ) == [("targets[0].mediaIds", "mixed_media")]
    assert await refused(client, tenant, post_body(linkedin, mediaIds=[pdf, other])) == [
        ("targets[0].mediaIds", "too_many")
    ]
    long = await document(runtime, tenant, pages=301)
    big = await document(runtime, tenant, size_bytes=100_000_001)
    assert await refused(client, tenant, post_body(linkedin, mediaIds=[long])) == [
        ("targets[0].mediaIds[0]", "too_many_pages")
    ]
    assert await refused(client, tenant, post_body(linkedin, mediaIds=[big])) == [
        ("targets[0].mediaIds[0]", "too_large")
    ]


async def test_networks_without_document_posts_refuse_a_document(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    pdf = await document(runtime, tenant)
    for provider in ("x", "facebook", "instagram", "youtube", "pinterest", "sandbox"):
        channel = await connect_channel(runtime, tenant.organization_id, provider=provider)
        response = await client.post(
            "/api/v1/posts",
            json=post_body(channel, text="Read this", mediaIds=[pdf]),
            headers=tenant.headers,
        )
        assert response.status_code == 400, response.text
        errors = response.json()["errors"]
        assert ("targets[0].mediaIds[0]", "unsupported_media_kind") in [
            (e["field"], e["code"]) for e in errors
        ], provider
        [item] = [e for e in errors if e["field"] == "targets[0].mediaIds[0]"]
        assert item["message"].startswith("is a document;")
