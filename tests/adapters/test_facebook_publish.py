"""Publishing to a Facebook Page against recorded Graph API exchanges.

Shapes follow developers.facebook.com: graph-api/reference/page/feed (message, link,
attached_media -> {"id": "{page-id}_{post-id}"}), graph-api/reference/page/photos (url, caption,
published=false, alt_text_custom -> {"id", "post_id"}), graph-api/reference/page/videos
(file_url, description -> {"id"}), video-api/guides/reels-publishing (video_reels
upload_phase=start -> {"video_id", "upload_url"}; rupload.facebook.com with
`Authorization: OAuth` and a `file_url` header -> {"success": true}; upload_phase=finish,
video_state=PUBLISHED; GET /{video-id}?fields=status with its phases), page-stories-api
(photo_stories, video_stories -> {"success", "post_id"}) and pages-api/comments-mentions
(POST /{object-id}/comments -> {"id"})."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
import respx

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.facebook import FacebookAdapter

from .facebook_support import GRAPH
from .facebook_support import PAGE_ID
from .facebook_support import PAGE_TOKEN
from .facebook_support import POST_ID
from .facebook_support import PROOF
from .facebook_support import facebook_adapter
from .facebook_support import form
from .facebook_support import graph_error
from .facebook_support import headers
from .facebook_support import page_channel
from .facebook_support import query
from .facebook_support import signed_url
from .facebook_support import video_status
from .support import MediaShelf
from .support import RecordedSleep
from .support import png_bytes
from .support import publish_request

VIDEO_ID = "1200000000000042"
UPLOAD_URL = f"https://rupload.facebook.com/video-upload/v24.0/{VIDEO_ID}"


@pytest.fixture
def sleep() -> RecordedSleep:
    return RecordedSleep()


@pytest.fixture
async def adapter(sleep: RecordedSleep) -> AsyncIterator[FacebookAdapter]:
    async with facebook_adapter(sleep) as adapter:
        yield adapter


@pytest.fixture
def shelf() -> MediaShelf:
    return MediaShelf()


def photo(shelf: MediaShelf) -> MediaItem:
    return shelf.add("image", "image/png", png_bytes(8, 8))


def video(shelf: MediaShelf) -> MediaItem:
    return shelf.add("video", "video/mp4", b"\x00\x00\x00\x18ftypmp42")


def of_kind(kind: str, text: str, *media: MediaItem, **extra: Any) -> PublishRequest:
    return replace(publish_request(page_channel(), text, media=media, **extra), content_kind=kind)


async def test_text_post_goes_to_the_page_feed_with_the_token_in_a_header(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    feed = network.post(f"{GRAPH}/{PAGE_ID}/feed").respond(200, json={"id": POST_ID})
    result = await adapter.publish(publish_request(page_channel(), "Hello, Page"))
    assert form(feed) == {"message": "Hello, Page"}
    assert query(feed) == {"appsecret_proof": PROOF}
    assert headers(feed)["authorization"] == f"Bearer {PAGE_TOKEN}"
    assert PAGE_TOKEN not in str(feed.calls[0].request.url)
    assert (result.provider_post_id, result.url) == (POST_ID, f"https://www.facebook.com/{POST_ID}")


async def test_link_option_attaches_the_link(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    feed = network.post(f"{GRAPH}/{PAGE_ID}/feed").respond(200, json={"id": POST_ID})
    request = publish_request(page_channel(), "Read this", options={"link": "https://ex.org/a"})
    await adapter.publish(request)
    assert form(feed) == {"message": "Read this", "link": "https://ex.org/a"}


async def test_link_with_media_is_refused_before_any_call(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf
) -> None:
    request = publish_request(
        page_channel(), "x", media=(photo(shelf),), options={"link": "https://ex.org"}
    )
    with pytest.raises(ProviderError) as refused:
        await adapter.publish(request)
    assert (refused.value.code, refused.value.retryable) == ("invalid_request", False)


async def test_one_photo_is_published_with_caption_and_alt_text(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf
) -> None:
    item = photo(shelf)
    photos = network.post(f"{GRAPH}/{PAGE_ID}/photos").respond(
        200, json={"id": "5550001", "post_id": POST_ID}
    )
    request = publish_request(
        page_channel(), "Look", media=(item,), options={"altTexts": ["A red square"]}
    )
    result = await adapter.publish(request)
    assert form(photos) == {
        "url": await signed_url(item),
        "caption": "Look",
        "alt_text_custom": "A red square",
    }
    assert result.provider_post_id == POST_ID


async def test_several_photos_are_attached_unpublished_in_media_order(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf
) -> None:
    first, second = photo(shelf), photo(shelf)
    ids = {await signed_url(first): "5550001", await signed_url(second): "5550002"}

    def uploaded(request: httpx.Request) -> httpx.Response:
        sent = dict(httpx.QueryParams(request.content.decode()))
        return httpx.Response(200, json={"id": ids[sent["url"]]})

    photos = network.post(f"{GRAPH}/{PAGE_ID}/photos").mock(side_effect=uploaded)
    feed = network.post(f"{GRAPH}/{PAGE_ID}/feed").respond(200, json={"id": POST_ID})
    request = publish_request(
        page_channel(), "Two", media=(first, second), options={"altTexts": [None, "Second"]}
    )
    result = await adapter.publish(request)
    sent = sorted((form(photos, n) for n in range(2)), key=lambda f: f["url"])
    expected = [
        {"url": await signed_url(first), "published": "false"},
        {"url": await signed_url(second), "published": "false", "alt_text_custom": "Second"},
    ]
    assert sent == sorted(expected, key=lambda f: f["url"])
    assert form(feed) == {
        "message": "Two",
        "attached_media[0]": json.dumps({"media_fbid": "5550001"}),
        "attached_media[1]": json.dumps({"media_fbid": "5550002"}),
    }
    assert result.provider_post_id == POST_ID


async def test_video_post_is_fetched_by_url_and_waited_for(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf, sleep: RecordedSleep
) -> None:
    item = video(shelf)
    videos = network.post(f"{GRAPH}/{PAGE_ID}/videos").respond(200, json={"id": VIDEO_ID})
    status = network.get(f"{GRAPH}/{VIDEO_ID}", params={"fields": "status"}).mock(
        side_effect=[video_status("processing", processing="in_progress"), video_status("ready")]
    )
    result = await adapter.publish(publish_request(page_channel(), "Watch", media=(item,)))
    assert form(videos) == {"file_url": await signed_url(item), "description": "Watch"}
    assert status.call_count == 2
    assert sleep.delays == [2.0]
    assert result.provider_post_id == VIDEO_ID
    assert result.url == f"https://www.facebook.com/{PAGE_ID}/videos/{VIDEO_ID}"


def reel_routes(network: respx.MockRouter, upload_url: str = UPLOAD_URL) -> tuple[respx.Route, ...]:
    def phase(request: httpx.Request) -> httpx.Response:
        sent = dict(httpx.QueryParams(request.content.decode()))
        if sent["upload_phase"] == "start":
            return httpx.Response(200, json={"video_id": VIDEO_ID, "upload_url": upload_url})
        return httpx.Response(200, json={"success": True})

    reels = network.post(f"{GRAPH}/{PAGE_ID}/video_reels").mock(side_effect=phase)
    upload = network.post(UPLOAD_URL).respond(200, json={"success": True})
    return reels, upload


async def test_reel_is_started_fetched_from_the_signed_url_then_finished(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf, sleep: RecordedSleep
) -> None:
    item = video(shelf)
    reels, upload = reel_routes(network)
    status = network.get(f"{GRAPH}/{VIDEO_ID}").mock(
        side_effect=[
            video_status("uploading", uploading="in_progress"),
            video_status("upload_complete"),
            video_status("ready", processing="complete", publishing="complete"),
        ]
    )
    result = await adapter.publish(of_kind("reel", "My reel", item))
    assert form(reels, 0) == {"upload_phase": "start"}
    assert headers(upload)["authorization"] == f"OAuth {PAGE_TOKEN}"
    assert headers(upload)["file_url"] == await signed_url(item)
    assert "appsecret_proof" not in query(upload)
    assert form(reels, 1) == {
        "upload_phase": "finish",
        "video_id": VIDEO_ID,
        "video_state": "PUBLISHED",
        "description": "My reel",
    }
    assert status.call_count == 3
    assert sleep.delays == [2.0]
    assert (result.provider_post_id, result.url) == (
        VIDEO_ID,
        f"https://www.facebook.com/reel/{VIDEO_ID}",
    )


async def test_reel_upload_url_off_facebooks_upload_host_is_not_trusted(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf
) -> None:
    # The Page token goes with the upload: only rupload.facebook.com may receive it.
    _, upload = reel_routes(network, upload_url="https://elsewhere.example/upload")
    network.get(f"{GRAPH}/{VIDEO_ID}").mock(
        side_effect=[video_status("upload_complete"), video_status("ready", publishing="complete")]
    )
    await adapter.publish(of_kind("reel", "Reel", video(shelf)))
    assert upload.call_count == 1


async def test_reel_processing_error_is_media_rejected_in_facebooks_words(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf
) -> None:
    reel_routes(network)
    network.get(f"{GRAPH}/{VIDEO_ID}").mock(
        side_effect=[
            video_status("upload_complete"),
            video_status("error", processing="error", error="Video aspect ratio is not 9:16"),
        ]
    )
    with pytest.raises(ProviderError) as refused:
        await adapter.publish(of_kind("reel", "Reel", video(shelf)))
    assert (refused.value.code, refused.value.retryable) == ("media_rejected", False)
    assert "Video aspect ratio is not 9:16" in refused.value.message


async def test_reel_still_uploading_when_the_budget_is_spent_is_retried_unpublished(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf, sleep: RecordedSleep
) -> None:
    reels, _ = reel_routes(network)
    status = network.get(f"{GRAPH}/{VIDEO_ID}").respond(
        json=video_status("uploading", uploading="in_progress").json()
    )
    with pytest.raises(ProviderError) as refused:
        await adapter.publish(of_kind("reel", "Reel", video(shelf)))
    assert (refused.value.code, refused.value.retryable) == ("timeout", True)
    # A budget of 6 seconds at 2-second intervals: 3 waits, 4 checks, and never a finish.
    assert (sleep.delays, status.call_count, reels.call_count) == ([2.0, 2.0, 2.0], 4, 1)


async def test_reel_still_publishing_when_the_budget_is_spent_counts_as_published(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf, sleep: RecordedSleep
) -> None:
    # Facebook accepted the finish: failing now would publish the reel again on the retry.
    reel_routes(network)
    network.get(f"{GRAPH}/{VIDEO_ID}").mock(
        side_effect=[video_status("upload_complete")]
        + [video_status("processing", processing="in_progress", publishing="in_progress")] * 4
    )
    result = await adapter.publish(of_kind("reel", "Reel", video(shelf)))
    assert result.provider_post_id == VIDEO_ID
    assert sleep.delays == [2.0, 2.0, 2.0]


async def test_expired_upload_session_is_a_retryable_timeout(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf
) -> None:
    reel_routes(network)
    network.get(f"{GRAPH}/{VIDEO_ID}").mock(return_value=video_status("expired"))
    with pytest.raises(ProviderError) as refused:
        await adapter.publish(of_kind("reel", "Reel", video(shelf)))
    assert (refused.value.code, refused.value.retryable) == ("timeout", True)


async def test_video_story_goes_through_the_story_upload_session(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf
) -> None:
    item = video(shelf)

    def phase(request: httpx.Request) -> httpx.Response:
        if dict(httpx.QueryParams(request.content.decode()))["upload_phase"] == "start":
            return httpx.Response(200, json={"video_id": VIDEO_ID, "upload_url": UPLOAD_URL})
        return httpx.Response(200, json={"success": True, "post_id": "7770001"})

    stories = network.post(f"{GRAPH}/{PAGE_ID}/video_stories").mock(side_effect=phase)
    upload = network.post(UPLOAD_URL).respond(200, json={"success": True})
    network.get(f"{GRAPH}/{VIDEO_ID}").mock(return_value=video_status("upload_complete"))
    result = await adapter.publish(of_kind("story", "ignored", item))
    assert form(stories, 1) == {"upload_phase": "finish", "video_id": VIDEO_ID}
    assert headers(upload)["file_url"] == await signed_url(item)
    assert (result.provider_post_id, result.url) == ("7770001", None)


async def test_photo_story_publishes_an_unpublished_photo(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf
) -> None:
    item = photo(shelf)
    photos = network.post(f"{GRAPH}/{PAGE_ID}/photos").respond(200, json={"id": "5550009"})
    stories = network.post(f"{GRAPH}/{PAGE_ID}/photo_stories").respond(
        200, json={"success": True, "post_id": "7770002"}
    )
    result = await adapter.publish(of_kind("story", "", item))
    assert form(photos) == {"url": await signed_url(item), "published": "false"}
    assert form(stories) == {"photo_id": "5550009"}
    assert result.provider_post_id == "7770002"


async def test_media_without_public_links_in_this_process_is_a_permanent_error(
    network: respx.MockRouter, sleep: RecordedSleep, shelf: MediaShelf
) -> None:
    async with facebook_adapter(sleep, media=False) as adapter:
        with pytest.raises(ProviderError) as refused:
            await adapter.publish(publish_request(page_channel(), "x", media=(photo(shelf),)))
    assert (refused.value.code, refused.value.retryable) == ("invalid_request", False)
    assert "public media links are unavailable" in refused.value.message


async def test_first_comment_is_posted_on_the_new_post(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.post(f"{GRAPH}/{PAGE_ID}/feed").respond(200, json={"id": POST_ID})
    comments = network.post(f"{GRAPH}/{POST_ID}/comments").respond(200, json={"id": "c1"})
    request = publish_request(page_channel(), "Post", options={"firstComment": "Link: x.org"})
    result = await adapter.publish(request)
    assert form(comments) == {"message": "Link: x.org"}
    assert result.provider_post_id == POST_ID


async def test_first_comment_on_a_reel_goes_on_its_video(
    network: respx.MockRouter, adapter: FacebookAdapter, shelf: MediaShelf
) -> None:
    reel_routes(network)
    network.get(f"{GRAPH}/{VIDEO_ID}").mock(
        side_effect=[video_status("upload_complete"), video_status("ready", publishing="complete")]
    )
    comments = network.post(f"{GRAPH}/{VIDEO_ID}/comments").respond(200, json={"id": "c1"})
    await adapter.publish(of_kind("reel", "R", video(shelf), options={"firstComment": "Hi"}))
    assert form(comments) == {"message": "Hi"}


async def test_retryable_first_comment_failure_fails_the_publish_to_be_retried(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.post(f"{GRAPH}/{PAGE_ID}/feed").respond(200, json={"id": POST_ID})
    network.post(f"{GRAPH}/{POST_ID}/comments").mock(
        return_value=graph_error(2, "Service temporarily unavailable", status=500)
    )
    request = publish_request(page_channel(), "Post", options={"firstComment": "Hi"})
    with pytest.raises(ProviderError) as failed:
        await adapter.publish(request)
    assert failed.value.retryable is True
    assert f"The post was published ({POST_ID})" in failed.value.message


async def test_permanent_first_comment_failure_leaves_the_publish_a_success(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.post(f"{GRAPH}/{PAGE_ID}/feed").respond(200, json={"id": POST_ID})
    network.post(f"{GRAPH}/{POST_ID}/comments").mock(
        return_value=graph_error(200, "(#200) Requires pages_manage_engagement permission")
    )
    request = publish_request(page_channel(), "Post", options={"firstComment": "Hi"})
    result = await adapter.publish(request)
    assert result.provider_post_id == POST_ID
