"""Publishing to Instagram through media containers: each content kind, the container polling,
the content-publishing limit, first comments, and a retried publish that finds its post."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import respx

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.instagram import InstagramAdapter

from .instagram_support import CREDENTIALS
from .instagram_support import GRAPH
from .instagram_support import IG_USER
from .instagram_support import MEDIA_ID
from .instagram_support import PERMALINK
from .instagram_support import created
from .instagram_support import form
from .instagram_support import graph_error
from .instagram_support import query
from .instagram_support import quota
from .instagram_support import signed_url
from .instagram_support import status
from .support import CredentialsLog
from .support import MediaShelf
from .support import RecordedSleep
from .support import channel
from .support import fixed_clock
from .support import publish_request

CAPTION = "Autumn menu is here #pressroom"


@pytest.fixture
def sleep() -> RecordedSleep:
    return RecordedSleep()


@pytest.fixture
async def adapter(sleep: RecordedSleep) -> AsyncIterator[InstagramAdapter]:
    adapter = InstagramAdapter(
        media_url=signed_url,
        on_credentials_changed=CredentialsLog(),
        graph_version="v24.0",
        credential_cache=CredentialCache(),
        sleep=sleep,
        clock=fixed_clock,
        processing_timeout=60,
    )
    yield adapter
    await adapter.aclose()


def image(shelf: MediaShelf) -> MediaItem:
    return shelf.add("image", "image/jpeg", b"\xff\xd8 a jpeg")


def video(shelf: MediaShelf) -> MediaItem:
    return shelf.add("video", "video/mp4", b"an mp4")


def request_of(
    kind: str,
    media: tuple[MediaItem, ...],
    text: str = CAPTION,
    options: dict[str, Any] | None = None,
    attempt: int = 1,
) -> PublishRequest:
    request = publish_request(
        channel("instagram", CREDENTIALS, "@pressroom"),
        text,
        media=media,
        options=options,
        attempt=attempt,
    )
    return dataclasses.replace(request, content_kind=kind)


def mock_quota(network: respx.MockRouter, usage: int = 2) -> respx.Route:
    return network.get(f"{GRAPH}/{IG_USER}/content_publishing_limit").mock(
        return_value=quota(usage)
    )


def mock_container(network: respx.MockRouter, container: str) -> respx.Route:
    """The quota check, and one container made and processed at once; returns its creation."""
    mock_quota(network)
    create = network.post(f"{GRAPH}/{IG_USER}/media").mock(return_value=created(container))
    network.get(f"{GRAPH}/{container}").mock(return_value=status("FINISHED"))
    return create


def mock_published(network: respx.MockRouter) -> tuple[respx.Route, respx.Route]:
    publish = network.post(f"{GRAPH}/{IG_USER}/media_publish").mock(return_value=created(MEDIA_ID))
    link = network.get(f"{GRAPH}/{MEDIA_ID}").mock(
        return_value=httpx.Response(200, json={"permalink": PERMALINK, "id": MEDIA_ID})
    )
    return publish, link


async def test_single_image_is_a_container_of_its_signed_link_polled_then_published(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    shelf = MediaShelf()
    photo = image(shelf)
    limit = mock_quota(network)
    create = network.post(f"{GRAPH}/{IG_USER}/media").mock(return_value=created("c-1"))
    poll = network.get(f"{GRAPH}/c-1").mock(return_value=status("FINISHED"))
    publish, link = mock_published(network)

    result = await adapter.publish(
        request_of("post", (photo,), options={"altTexts": ["A bowl of pumpkin soup"]})
    )

    assert query(limit.calls[0].request) == {"fields": "quota_usage,config"}
    sent = create.calls[0].request
    assert sent.headers["Authorization"] == "Bearer IGAA-long-1"
    assert "access_token" not in str(sent.url)
    assert form(sent) == {
        "image_url": await signed_url(photo),
        "caption": CAPTION,
        "alt_text": "A bowl of pumpkin soup",
    }
    assert query(poll.calls[0].request) == {"fields": "status_code,status"}
    assert form(publish.calls[0].request) == {"creation_id": "c-1"}
    assert query(link.calls[0].request) == {"fields": "permalink"}
    assert (result.provider_post_id, result.url) == (MEDIA_ID, PERMALINK)
    assert result.published_at == fixed_clock()
    assert shelf.reads == 0  # Instagram fetches the media itself


async def test_a_container_still_in_progress_is_polled_at_growing_intervals(
    network: respx.MockRouter, adapter: InstagramAdapter, sleep: RecordedSleep
) -> None:
    mock_quota(network)
    network.post(f"{GRAPH}/{IG_USER}/media").mock(return_value=created("c-2"))
    poll = network.get(f"{GRAPH}/c-2").mock(
        side_effect=[status("IN_PROGRESS"), status("IN_PROGRESS"), status("FINISHED")]
    )
    mock_published(network)
    await adapter.publish(request_of("reel", (video(MediaShelf()),)))
    assert poll.call_count == 3
    assert sleep.delays == [3.0, 6.0]


async def test_processing_that_outlasts_the_bound_is_retryable_and_nothing_is_published(
    network: respx.MockRouter, adapter: InstagramAdapter, sleep: RecordedSleep
) -> None:
    mock_quota(network)
    network.post(f"{GRAPH}/{IG_USER}/media").mock(return_value=created("c-3"))
    network.get(f"{GRAPH}/c-3").mock(return_value=status("IN_PROGRESS"))
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(request_of("reel", (video(MediaShelf()),)))
    assert caught.value.code == "provider_unavailable"
    assert caught.value.retryable
    assert "still processing the reel after 45 s" in caught.value.message
    assert sleep.delays == [3.0, 6.0, 12.0, 24.0]


async def test_a_container_in_error_is_media_rejected_with_instagrams_status(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    mock_quota(network)
    network.post(f"{GRAPH}/{IG_USER}/media").mock(return_value=created("c-4"))
    network.get(f"{GRAPH}/c-4").mock(
        return_value=status(
            "ERROR", "Error: 2207026: Unsupported video format. The video format is not supported."
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(request_of("reel", (video(MediaShelf()),)))
    assert caught.value.code == "media_rejected"
    assert not caught.value.retryable
    assert "Unsupported video format" in caught.value.message


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (status("ERROR", "Error: 2207003: It takes too long to download the media."), "too long"),
        (status("EXPIRED"), "expire"),
    ],
)
async def test_a_container_instagram_says_to_retry_is_retryable(
    network: respx.MockRouter, adapter: InstagramAdapter, answer: httpx.Response, says: str
) -> None:
    mock_quota(network)
    network.post(f"{GRAPH}/{IG_USER}/media").mock(return_value=created("c-5"))
    network.get(f"{GRAPH}/c-5").mock(return_value=answer)
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(request_of("post", (image(MediaShelf()),)))
    assert (caught.value.code, caught.value.retryable) == ("provider_unavailable", True)
    assert says in caught.value.message


async def test_reel_is_a_reels_container_of_the_video_with_share_to_feed(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    clip = video(MediaShelf())
    create = mock_container(network, "c-6")
    mock_published(network)
    await adapter.publish(request_of("reel", (clip,), options={"shareToFeed": False}))
    assert form(create.calls[0].request) == {
        "media_type": "REELS",
        "video_url": await signed_url(clip),
        "share_to_feed": "false",
        "caption": CAPTION,
    }


@pytest.mark.parametrize("kind", ["image", "video"])
async def test_story_is_a_stories_container_without_a_caption(
    network: respx.MockRouter, adapter: InstagramAdapter, kind: str
) -> None:
    shelf = MediaShelf()
    item = image(shelf) if kind == "image" else video(shelf)
    create = mock_container(network, "c-7")
    mock_published(network)
    await adapter.publish(request_of("story", (item,), options={"firstComment": "ignored"}))
    assert form(create.calls[0].request) == {
        "media_type": "STORIES",
        f"{kind}_url": await signed_url(item),
    }


async def test_carousel_items_then_the_carousel_are_made_polled_and_published(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    shelf = MediaShelf()
    photo, clip = image(shelf), video(shelf)
    mock_quota(network)
    create = network.post(f"{GRAPH}/{IG_USER}/media").mock(
        side_effect=[created("item-1"), created("item-2"), created("album")]
    )
    polls = [
        network.get(f"{GRAPH}/{cid}").mock(return_value=status("FINISHED"))
        for cid in ("item-1", "item-2", "album")
    ]
    publish, _ = mock_published(network)

    await adapter.publish(
        request_of("carousel", (photo, clip), options={"altTexts": {str(photo.id): "Soup"}})
    )

    assert [form(call.request) for call in create.calls] == [
        {"is_carousel_item": "true", "image_url": await signed_url(photo), "alt_text": "Soup"},
        {"is_carousel_item": "true", "media_type": "VIDEO", "video_url": await signed_url(clip)},
        {"media_type": "CAROUSEL", "children": "item-1,item-2", "caption": CAPTION},
    ]
    assert [poll.call_count for poll in polls] == [1, 1, 1]
    assert form(publish.calls[0].request) == {"creation_id": "album"}


async def test_a_spent_publishing_quota_waits_for_the_window_and_makes_no_container(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    network.get(f"{GRAPH}/{IG_USER}/content_publishing_limit").mock(
        return_value=quota(50, 50, 86400)
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(request_of("post", (image(MediaShelf()),)))
    assert (caught.value.code, caught.value.retryable) == ("rate_limited", True)
    assert caught.value.retry_after == 86400
    assert "50 of 50 posts used" in caught.value.message


async def test_a_limit_reached_at_publish_is_rate_limited_not_a_failed_post(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    mock_container(network, "c-8")
    network.post(f"{GRAPH}/{IG_USER}/media_publish").mock(
        return_value=graph_error(
            400,
            9,
            "Application request limit reached",
            2207042,
            error_user_msg="You reached maximum number of posts that is allowed to be "
            "published by Content Publishing API.",
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(request_of("post", (image(MediaShelf()),)))
    assert (caught.value.code, caught.value.retryable) == ("rate_limited", True)
    assert caught.value.retry_after == 86400
    assert "maximum number of posts" in caught.value.message


async def test_without_public_media_links_nothing_is_sent(network: respx.MockRouter) -> None:
    without = InstagramAdapter(media_url=None, credential_cache=CredentialCache())
    with pytest.raises(ProviderError) as caught:
        await without.publish(request_of("post", (image(MediaShelf()),)))
    await without.aclose()
    assert (caught.value.code, caught.value.retryable) == ("invalid_request", False)
    assert "public media links are unavailable" in caught.value.message


async def test_first_comment_is_posted_under_the_published_media(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    mock_container(network, "c-9")
    mock_published(network)
    comment = network.post(f"{GRAPH}/{MEDIA_ID}/comments").mock(
        return_value=created("17870913679156914")
    )
    await adapter.publish(
        request_of("post", (image(MediaShelf()),), options={"firstComment": "Menu: pr.ss/menu"})
    )
    assert form(comment.calls[0].request) == {"message": "Menu: pr.ss/menu"}


async def test_a_first_comment_refused_for_good_does_not_fail_the_live_post(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    mock_container(network, "c-10")
    mock_published(network)
    network.post(f"{GRAPH}/{MEDIA_ID}/comments").mock(
        return_value=graph_error(403, 10, "Application does not have permission for this action")
    )
    result = await adapter.publish(
        request_of("post", (image(MediaShelf()),), options={"firstComment": "hello"})
    )
    assert result.provider_post_id == MEDIA_ID


async def test_a_first_comment_that_failed_in_passing_fails_the_attempt_for_a_retry(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    mock_container(network, "c-11")
    mock_published(network)
    network.post(f"{GRAPH}/{MEDIA_ID}/comments").mock(
        return_value=graph_error(500, 2, "Service temporarily unavailable", is_transient=True)
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(
            request_of("post", (image(MediaShelf()),), options={"firstComment": "hello"})
        )
    assert (caught.value.code, caught.value.retryable) == ("provider_unavailable", True)


def recent_media(caption: str) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "data": [
                {
                    "id": "17800000000000001",
                    "caption": "Yesterday's news",
                    "media_product_type": "FEED",
                    "timestamp": "2026-11-22T08:00:00+0000",
                },
                {
                    "id": MEDIA_ID,
                    "caption": caption,
                    "media_product_type": "FEED",
                    "timestamp": "2026-11-22T09:12:00+0000",
                    "permalink": PERMALINK,
                },
            ]
        },
    )


async def test_a_retry_returns_the_post_an_earlier_attempt_published_and_adds_the_comment(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    # Instagram may return a caption without its @.
    mine = network.get(f"{GRAPH}/{IG_USER}/media").mock(
        return_value=recent_media("Autumn menu  is here pressroom")
    )
    comments = network.get(f"{GRAPH}/{MEDIA_ID}/comments").mock(
        return_value=httpx.Response(200, json={"data": []})
    )
    comment = network.post(f"{GRAPH}/{MEDIA_ID}/comments").mock(return_value=created("c"))
    result = await adapter.publish(
        request_of(
            "post",
            (image(MediaShelf()),),
            text="Autumn menu is here @pressroom",
            options={"firstComment": "hello"},
            attempt=2,
        )
    )
    assert query(mine.calls[0].request) == {
        "fields": "id,caption,media_product_type,timestamp,permalink",
        "limit": "25",
    }
    assert query(comments.calls[0].request) == {"fields": "text,username"}
    assert comment.call_count == 1
    assert (result.provider_post_id, result.url) == (MEDIA_ID, PERMALINK)


async def test_a_retry_whose_comment_is_already_there_posts_nothing_more(
    network: respx.MockRouter, adapter: InstagramAdapter
) -> None:
    network.get(f"{GRAPH}/{IG_USER}/media").mock(return_value=recent_media(CAPTION))
    network.get(f"{GRAPH}/{MEDIA_ID}/comments").mock(
        return_value=httpx.Response(
            200, json={"data": [{"id": "1", "text": "hello", "username": "pressroom"}]}
        )
    )
    result = await adapter.publish(
        request_of("post", (image(MediaShelf()),), options={"firstComment": "hello"}, attempt=3)
    )
    assert result.provider_post_id == MEDIA_ID


@pytest.mark.parametrize(
    ("product", "timestamp"),
    [("REELS", "2026-11-22T09:12:00+0000"), ("FEED", "2026-11-20T09:12:00+0000")],
)
async def test_a_retry_that_finds_no_post_of_its_kind_from_the_last_day_publishes(
    network: respx.MockRouter, adapter: InstagramAdapter, product: str, timestamp: str
) -> None:
    entry = {"id": "1", "caption": CAPTION, "media_product_type": product, "timestamp": timestamp}
    network.get(f"{GRAPH}/{IG_USER}/media").mock(
        return_value=httpx.Response(200, json={"data": [entry]})
    )
    mock_container(network, "c-12")
    publish, _ = mock_published(network)
    await adapter.publish(request_of("post", (image(MediaShelf()),), attempt=2))
    assert publish.call_count == 1
