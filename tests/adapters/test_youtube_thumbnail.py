"""A YouTube video's custom thumbnail: `options.thumbnailMediaId` names an image of the
organization's media, set with thumbnails.set once videos.insert has finished.

Shapes follow developers.google.com/youtube/v3/docs/thumbnails/set: `POST
https://www.googleapis.com/upload/youtube/v3/thumbnails/set?videoId=ID&uploadType=media` with
the image as the body (image/jpeg or image/png, 2 MB at most) -> `{"kind":
"youtube#thumbnailSetResponse", "items": [...]}`; errors `invalidImage` (400) and `forbidden`
(403: the channel may not upload custom thumbnails) in Google's error envelope."""

from __future__ import annotations

import uuid

import httpx
import respx

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import PublishResult

from .support import MediaShelf
from .support import png_bytes
from .support import publish_request
from .youtube_support import ACCESS_TOKEN
from .youtube_support import SESSION_URI
from .youtube_support import UPLOAD
from .youtube_support import VIDEO_ID
from .youtube_support import google_error
from .youtube_support import video_answer
from .youtube_support import youtube_adapter
from .youtube_support import youtube_channel

THUMBNAIL_URL = "https://www.googleapis.com/upload/youtube/v3/thumbnails/set"
VIDEO = b"v" * 900
IMAGE = png_bytes(128, 72)
THUMBNAIL_SET = {
    "kind": "youtube#thumbnailSetResponse",
    "etag": "Bdx4f4ps3xCOUvEIrsNHd4Ot3Z4",
    "items": [{"default": {"url": f"https://i.ytimg.com/vi/{VIDEO_ID}/default.jpg"}}],
}


def upload_routes(network: respx.MockRouter) -> tuple[respx.Route, respx.Route]:
    start = network.post(UPLOAD).mock(
        return_value=httpx.Response(200, headers={"Location": SESSION_URI})
    )
    put = network.put(SESSION_URI).mock(return_value=video_answer())
    return start, put


async def publish_with_thumbnail(
    shelf: MediaShelf, thumbnail: MediaItem, *, library: dict[uuid.UUID, MediaItem] | None = None
) -> PublishResult:
    video = shelf.add("video", "video/mp4", VIDEO)
    options = {"title": "Launch day", "thumbnailMediaId": str(thumbnail.id)}
    known = library if library is not None else {thumbnail.id: thumbnail}
    async with youtube_adapter(shelf, library=known) as adapter:
        return await adapter.publish(
            publish_request(youtube_channel(), "What we shipped", media=(video,), options=options)
        )


async def test_the_thumbnail_is_set_on_the_new_video_after_the_upload(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    thumbnail = shelf.add("image", "image/png", IMAGE)
    start, put = upload_routes(network)
    route = network.post(THUMBNAIL_URL).mock(return_value=httpx.Response(200, json=THUMBNAIL_SET))

    result = await publish_with_thumbnail(shelf, thumbnail)

    assert result.provider_post_id == VIDEO_ID
    assert result.warning is None
    [call] = route.calls
    sent = call.request
    assert dict(sent.url.params) == {"videoId": VIDEO_ID, "uploadType": "media"}
    assert sent.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert sent.headers["content-type"] == "image/png"
    assert sent.headers["content-length"] == str(len(IMAGE))
    assert sent.content == IMAGE
    assert start.call_count == 1 and put.call_count == 1
    # The video went up first, the thumbnail after it.
    assert network.calls[-1].request.url.path == "/upload/youtube/v3/thumbnails/set"


async def test_a_refused_thumbnail_leaves_the_video_published_with_a_warning(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    thumbnail = shelf.add("image", "image/jpeg", b"\xff\xd8\xff" + b"j" * 200)
    start, put = upload_routes(network)
    network.post(THUMBNAIL_URL).mock(
        return_value=google_error(
            403,
            "forbidden",
            "The authenticated user doesn't have permissions to upload and set custom video "
            "thumbnails.",
        )
    )

    result = await publish_with_thumbnail(shelf, thumbnail)

    assert result.provider_post_id == VIDEO_ID
    assert result.url == f"https://www.youtube.com/watch?v={VIDEO_ID}"
    warning = result.warning
    assert warning is not None and warning.code == "permission_denied"
    assert warning.message.startswith(
        "The video was published but its custom thumbnail was not set:"
    )
    assert "custom video thumbnails" in warning.message
    assert ACCESS_TOKEN not in warning.message
    assert start.call_count == 1 and put.call_count == 1  # the video is never sent twice


async def test_a_thumbnail_gone_from_the_library_is_a_warning_without_a_call(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    thumbnail = shelf.add("image", "image/png", IMAGE)
    upload_routes(network)

    result = await publish_with_thumbnail(shelf, thumbnail, library={})

    warning = result.warning
    assert warning is not None and warning.code == "not_found"
    assert "thumbnailMediaId" in warning.message
    assert not any("thumbnails" in str(call.request.url) for call in network.calls)


async def test_without_the_option_no_thumbnail_is_sent(network: respx.MockRouter) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", VIDEO)
    upload_routes(network)
    async with youtube_adapter(shelf) as adapter:
        result = await adapter.publish(
            publish_request(youtube_channel(), "", media=(video,), options={"title": "Clip"})
        )
    assert result.warning is None
    assert len(network.calls) == 2  # start and the one chunk
