"""The publisher and YouTube's custom thumbnail: the image an option names is read from the
organization's library through the adapter services, and a thumbnail YouTube refuses leaves
the target published once, never retried, with the reason in its error (a warning).

Recorded shapes (respx): videos.insert's resumable upload (developers.google.com/youtube/v3/
guides/using_resumable_upload_protocol) and thumbnails.set (.../youtube/v3/docs/thumbnails/set,
403 `forbidden` in Google's error envelope)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
import respx

from pressroom.channels import service as channels
from pressroom.db import unit_of_work
from pressroom.media.models import MediaAsset
from pressroom.media.service import storage_for
from pressroom.providers.registry import configured_providers
from pressroom.publishing.worker import publish_due_targets
from pressroom.runtime import Runtime
from tests.adapters.support import png_bytes
from tests.adapters.youtube_support import SESSION_URI
from tests.adapters.youtube_support import UPLOAD
from tests.adapters.youtube_support import VIDEO_ID
from tests.adapters.youtube_support import google_error
from tests.factories import Tenant
from tests.posts.factories import add_media
from tests.posts.factories import create_post
from tests.posts.factories import events_of
from tests.posts.factories import get_post
from tests.posts.factories import post_body

THUMBNAIL_URL = "https://www.googleapis.com/upload/youtube/v3/thumbnails/set"
ACCESS = "ya29.publisher-access-token"


@pytest.fixture
def network() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=True) as router:
        yield router


async def youtube_channel(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    async with unit_of_work(runtime.sessions) as session:
        channel = await channels.connect(
            session,
            runtime,
            organization_id=tenant.organization_id,
            provider="youtube",
            name="YouTube",
            handle="@pressroomhq",
            credentials={"accessToken": ACCESS, "channelId": "UCabcdefghijklmnopqrstuv"},
            configured=configured_providers(runtime.settings) | {"youtube"},
        )
        return channel.id


async def stored_media(runtime: Runtime, tenant: Tenant, data: bytes, **facts: object) -> str:
    media_id = await add_media(
        runtime,
        tenant.organization_id,
        size_bytes=len(data),
        **facts,  # type: ignore[arg-type]
    )
    async with unit_of_work(runtime.sessions) as session:
        asset = await session.get(MediaAsset, media_id)
        assert asset is not None
        key = asset.storage_key
    path = storage_for(runtime.settings).path_for(key)  # type: ignore[attr-defined]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(media_id)


async def test_a_refused_thumbnail_leaves_the_video_published_with_a_warning(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, network: respx.MockRouter
) -> None:
    channel_id = await youtube_channel(runtime, tenant)
    video = await stored_media(
        runtime,
        tenant,
        b"v" * 700,
        kind="video",
        mime_type="video/mp4",
        width=1920,
        height=1080,
        duration_seconds=12,
    )
    image = png_bytes(64, 36)
    thumbnail = await stored_media(runtime, tenant, image, mime_type="image/png")
    start = network.post(UPLOAD).mock(
        return_value=httpx.Response(200, headers={"Location": SESSION_URI})
    )
    network.put(SESSION_URI).mock(
        return_value=httpx.Response(200, json={"kind": "youtube#video", "id": VIDEO_ID})
    )
    thumbnails = network.post(THUMBNAIL_URL).mock(
        return_value=google_error(
            403,
            "forbidden",
            "The authenticated user doesn't have permissions to upload and set custom video "
            "thumbnails.",
        )
    )
    options = {"title": "Launch day", "thumbnailMediaId": thumbnail}
    body = post_body(
        channel_id,
        text="What we shipped",
        mediaIds=[video],
        publishNow=True,
        targets=[{"channelId": str(channel_id), "contentKind": "video", "options": options}],
    )
    post = await create_post(client, tenant, body)

    await publish_due_targets(runtime)
    await publish_due_targets(runtime)  # nothing is left to retry

    published = await get_post(client, tenant, post["id"])
    [target] = published["targets"]
    assert (published["status"], target["status"], target["attempts"]) == (
        "published",
        "published",
        1,
    )
    assert target["providerPostId"] == VIDEO_ID
    assert target["error"]["code"] == "permission_denied"
    assert target["error"]["message"].startswith(
        "The video was published but its custom thumbnail was not set:"
    )
    assert start.call_count == 1
    [call] = thumbnails.calls
    assert call.request.content == image
    assert dict(call.request.url.params) == {"videoId": VIDEO_ID, "uploadType": "media"}
    [event] = await events_of(runtime, tenant.organization_id, "post.published.v1")
    assert event["data"]["targetId"] == target["id"]
    assert await events_of(runtime, tenant.organization_id, "post.failed.v1") == []
