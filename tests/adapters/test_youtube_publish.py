"""Publishing a video to YouTube: videos.insert through the resumable upload protocol.

Shapes follow developers.google.com/youtube/v3/guides/using_resumable_upload_protocol (POST
/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status with the video resource and
X-Upload-Content-Length / X-Upload-Content-Type -> 200 with Location; PUT of chunks with
Content-Range -> 308 with Range, then 200 with the video resource; an empty PUT with
Content-Range: bytes */TOTAL asks the session's status) and docs/videos (snippet, status)."""

from __future__ import annotations

import json

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.youtube.upload import UploadSessions

from .support import MediaShelf
from .support import publish_request
from .youtube_support import ACCESS_TOKEN
from .youtube_support import API
from .youtube_support import CHUNK
from .youtube_support import SESSION_URI
from .youtube_support import UPLOAD
from .youtube_support import VIDEO_ID
from .youtube_support import incomplete
from .youtube_support import video_answer
from .youtube_support import youtube_adapter
from .youtube_support import youtube_channel

SIZE = 2 * CHUNK + 300
DATA = bytes(range(256)) * (SIZE // 256) + bytes(SIZE % 256)
OPTIONS = {"title": "Launch day", "privacyStatus": "unlisted", "madeForKids": False}


def start_route(network: respx.MockRouter) -> respx.Route:
    return network.post(UPLOAD).mock(
        return_value=httpx.Response(200, headers={"Location": SESSION_URI})
    )


def ranges(route: respx.Route) -> list[str]:
    return [call.request.headers["content-range"] for call in route.calls]


async def test_a_video_is_uploaded_in_chunks_through_a_resumable_session(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", DATA)
    start = start_route(network)
    put = network.put(SESSION_URI).mock(
        side_effect=[incomplete(CHUNK - 1), incomplete(2 * CHUNK - 1), video_answer()]
    )
    options = {**OPTIONS, "tags": ["launch", "behind the scenes"], "categoryId": "22"}
    async with youtube_adapter(shelf) as adapter:
        result = await adapter.publish(
            publish_request(youtube_channel(), "What we shipped", media=(video,), options=options)
        )

    assert result.provider_post_id == VIDEO_ID
    assert result.url == f"https://www.youtube.com/watch?v={VIDEO_ID}"
    sent = start.calls[0].request
    assert dict(sent.url.params) == {"uploadType": "resumable", "part": "snippet,status"}
    assert sent.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert sent.headers["content-type"] == "application/json; charset=UTF-8"
    assert sent.headers["x-upload-content-length"] == str(SIZE)
    assert sent.headers["x-upload-content-type"] == "video/mp4"
    assert json.loads(sent.content) == {
        "snippet": {
            "title": "Launch day",
            "description": "What we shipped",
            "tags": ["launch", "behind the scenes"],
            "categoryId": "22",
        },
        "status": {"privacyStatus": "unlisted", "selfDeclaredMadeForKids": False},
    }
    assert ranges(put) == [
        f"bytes 0-{CHUNK - 1}/{SIZE}",
        f"bytes {CHUNK}-{2 * CHUNK - 1}/{SIZE}",
        f"bytes {2 * CHUNK}-{SIZE - 1}/{SIZE}",
    ]
    assert b"".join(call.request.content for call in put.calls) == DATA
    assert all(c.request.headers["authorization"] == f"Bearer {ACCESS_TOKEN}" for c in put.calls)


async def test_a_short_links_to_its_shorts_page(network: respx.MockRouter) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", b"x" * 1000)
    start_route(network)
    network.put(SESSION_URI).mock(return_value=video_answer())
    request = publish_request(youtube_channel(), "", media=(video,), options={"title": "Clip"})
    async with youtube_adapter(shelf) as adapter:
        result = await adapter.publish(
            request.__class__(**{**request.__dict__, "content_kind": "short"})
        )
    assert result.url == f"https://www.youtube.com/shorts/{VIDEO_ID}"


async def test_a_broken_connection_resumes_from_the_range_the_session_reports(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", DATA)
    start_route(network)
    # The second chunk's connection breaks; the status query says the server holds only the
    # first 100 bytes of it, so the upload goes on from byte CHUNK + 100, not from 0.
    put = network.put(SESSION_URI).mock(
        side_effect=[
            incomplete(CHUNK - 1),
            httpx.ConnectError("connection reset"),
            incomplete(CHUNK + 99),
            incomplete(2 * CHUNK + 99),
            video_answer(),
        ]
    )
    async with youtube_adapter(shelf) as adapter:
        result = await adapter.publish(
            publish_request(youtube_channel(), "", media=(video,), options=OPTIONS)
        )
    assert result.provider_post_id == VIDEO_ID
    assert ranges(put) == [
        f"bytes 0-{CHUNK - 1}/{SIZE}",
        f"bytes {CHUNK}-{2 * CHUNK - 1}/{SIZE}",
        f"bytes */{SIZE}",
        f"bytes {CHUNK + 100}-{2 * CHUNK + 99}/{SIZE}",
        f"bytes {2 * CHUNK + 100}-{SIZE - 1}/{SIZE}",
    ]
    assert put.calls[2].request.content == b""
    assert put.calls[3].request.content == DATA[CHUNK + 100 : 2 * CHUNK + 100]
    assert put.calls[4].request.content == DATA[2 * CHUNK + 100 :]


async def test_a_retried_publish_resumes_the_session_of_the_failed_attempt(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", DATA)
    sessions = UploadSessions()
    start = start_route(network)
    unavailable = httpx.Response(503, json={"error": {"code": 503, "message": "Backend Error"}})
    put = network.put(SESSION_URI).mock(
        # Attempt 1: a chunk, then the next one and the status query fail with 503.
        # Attempt 2: the status query, then the rest.
        side_effect=[
            incomplete(CHUNK - 1),
            unavailable,
            unavailable,
            incomplete(CHUNK - 1),
            incomplete(2 * CHUNK - 1),
            video_answer(),
        ]
    )
    request = publish_request(youtube_channel(), "", media=(video,), options=OPTIONS)
    async with youtube_adapter(shelf, sessions=sessions) as adapter:
        with pytest.raises(ProviderError) as failed:
            await adapter.publish(request)
        assert failed.value.code == "provider_unavailable" and failed.value.retryable
        retry = request.__class__(**{**request.__dict__, "attempt": 2})
        result = await adapter.publish(retry)

    assert result.provider_post_id == VIDEO_ID
    assert start.call_count == 1  # one session for both attempts: no second video
    assert ranges(put)[-3:] == [
        f"bytes */{SIZE}",
        f"bytes {CHUNK}-{2 * CHUNK - 1}/{SIZE}",
        f"bytes {2 * CHUNK}-{SIZE - 1}/{SIZE}",
    ]


async def test_a_retry_after_the_upload_completed_returns_the_video_without_uploading(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", DATA)
    sessions = UploadSessions()
    request = publish_request(youtube_channel(), "", media=(video,), options=OPTIONS)
    sessions.remember((str(request.channel.id), request.idempotency_key), SESSION_URI)
    put = network.put(SESSION_URI).mock(return_value=video_answer())
    async with youtube_adapter(shelf, sessions=sessions) as adapter:
        result = await adapter.publish(request.__class__(**{**request.__dict__, "attempt": 2}))
    assert result.provider_post_id == VIDEO_ID
    assert ranges(put) == [f"bytes */{SIZE}"]
    assert shelf.reads == 0


async def test_an_expired_session_starts_a_new_upload(network: respx.MockRouter) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", b"v" * 500)
    sessions = UploadSessions()
    request = publish_request(youtube_channel(), "", media=(video,), options=OPTIONS)
    old = f"{UPLOAD}?uploadType=resumable&upload_id=old"
    sessions.remember((str(request.channel.id), request.idempotency_key), old)
    network.put(old).mock(return_value=httpx.Response(404))
    start = start_route(network)
    network.put(SESSION_URI).mock(return_value=video_answer())
    async with youtube_adapter(shelf, sessions=sessions) as adapter:
        result = await adapter.publish(request)
    assert result.provider_post_id == VIDEO_ID
    assert start.call_count == 1


async def test_a_retry_after_a_crash_finds_the_video_the_earlier_attempt_uploaded(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", b"v" * 500)
    channels = network.get(f"{API}/channels").mock(
        return_value=httpx.Response(
            200,
            json={"items": [{"contentDetails": {"relatedPlaylists": {"uploads": "UUabc"}}}]},
        )
    )
    items = network.get(f"{API}/playlistItems").mock(
        return_value=httpx.Response(
            200,
            json={
                "items": [
                    {
                        "snippet": {
                            "publishedAt": "2026-11-22T09:29:00Z",
                            "title": "Launch day",
                            "description": "What we shipped",
                            "resourceId": {"kind": "youtube#video", "videoId": VIDEO_ID},
                        }
                    }
                ]
            },
        )
    )
    request = publish_request(
        youtube_channel(), "What we shipped", media=(video,), options=OPTIONS, attempt=2
    )
    async with youtube_adapter(shelf) as adapter:
        result = await adapter.publish(request)
    assert result.provider_post_id == VIDEO_ID
    assert dict(channels.calls[0].request.url.params) == {"part": "contentDetails", "mine": "true"}
    assert dict(items.calls[0].request.url.params) == {
        "part": "snippet",
        "playlistId": "UUabc",
        "maxResults": "10",
    }
    assert shelf.reads == 0


async def test_an_upload_location_off_googles_upload_host_is_refused(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", b"v" * 500)
    network.post(UPLOAD).mock(
        return_value=httpx.Response(200, headers={"Location": "https://evil.example/upload"})
    )
    async with youtube_adapter(shelf) as adapter:
        with pytest.raises(ProviderError) as failed:
            await adapter.publish(
                publish_request(youtube_channel(), "", media=(video,), options=OPTIONS)
            )
    assert failed.value.code == "provider_unavailable"
