"""The Threads adapter publishing: each content kind through its containers, threads, the first
comment, container polling, and the quota checked first (shapes: threads_support.py)."""

from __future__ import annotations

import dataclasses
import json

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.threads import ThreadsAdapter

from .support import MediaShelf
from .support import RecordedSleep
from .support import channel
from .support import fixed_clock
from .support import png_bytes
from .support import publish_request
from .threads_support import API
from .threads_support import CREDENTIALS
from .threads_support import DAY
from .threads_support import PERMALINK
from .threads_support import POST_ID
from .threads_support import TOKEN
from .threads_support import USER_ID
from .threads_support import adapter_fixture  # noqa: F401
from .threads_support import answer
from .threads_support import container_status
from .threads_support import form
from .threads_support import graph_error
from .threads_support import log_fixture  # noqa: F401
from .threads_support import progress_fixture  # noqa: F401
from .threads_support import publishing_limit
from .threads_support import query
from .threads_support import shelf_fixture  # noqa: F401
from .threads_support import signed_url
from .threads_support import sleep_fixture  # noqa: F401

THREADS = channel("threads", CREDENTIALS, handle="@pressroom")


def mock_limit(network: respx.MockRouter, **usage: int) -> respx.Route:
    return network.get(f"{API}/{USER_ID}/threads_publishing_limit").mock(
        return_value=publishing_limit(**usage)
    )


def mock_ready(network: respx.MockRouter, container_id: str) -> respx.Route:
    return network.get(f"{API}/{container_id}").mock(
        return_value=container_status("FINISHED", container_id)
    )


def mock_permalink(network: respx.MockRouter, media_id: str = POST_ID) -> respx.Route:
    return network.get(f"{API}/{media_id}").mock(
        return_value=answer({"permalink": PERMALINK, "id": media_id})
    )


async def test_text_post_is_a_container_waited_for_then_published(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    limit = mock_limit(network)
    create = network.post(f"{API}/{USER_ID}/threads").mock(return_value=answer({"id": "c-1"}))
    status = mock_ready(network, "c-1")
    publish = network.post(f"{API}/{USER_ID}/threads_publish").mock(
        return_value=answer({"id": POST_ID})
    )
    link = mock_permalink(network)

    result = await adapter.publish(
        publish_request(THREADS, "Hello from Pressroom", options={"replyControl": "mentioned_only"})
    )

    assert query(limit.calls[0].request) == {
        "fields": "quota_usage,config",
        "access_token": TOKEN,
    }
    assert form(create.calls[0].request) == {
        "media_type": "TEXT",
        "text": "Hello from Pressroom",
        "reply_control": "mentioned_only",
        "access_token": TOKEN,
    }
    assert query(status.calls[0].request) == {
        "fields": "id,status,error_message",
        "access_token": TOKEN,
    }
    assert form(publish.calls[0].request) == {"creation_id": "c-1", "access_token": TOKEN}
    assert query(link.calls[0].request) == {"fields": "permalink", "access_token": TOKEN}
    assert (result.provider_post_id, result.url) == (POST_ID, PERMALINK)
    assert result.published_at == fixed_clock()


async def test_image_post_sends_the_signed_media_url_and_its_alt_text(
    network: respx.MockRouter, adapter: ThreadsAdapter, shelf: MediaShelf
) -> None:
    image = shelf.add("image", "image/png", png_bytes(40, 30))
    mock_limit(network)
    create = network.post(f"{API}/{USER_ID}/threads").mock(return_value=answer({"id": "c-1"}))
    mock_ready(network, "c-1")
    network.post(f"{API}/{USER_ID}/threads_publish").mock(return_value=answer({"id": POST_ID}))
    mock_permalink(network)

    await adapter.publish(
        publish_request(THREADS, "A photo", media=(image,), options={"altTexts": ["Red square"]})
    )

    assert form(create.calls[0].request) == {
        "media_type": "IMAGE",
        "image_url": await signed_url(image),
        "alt_text": "Red square",
        "text": "A photo",
        "access_token": TOKEN,
    }
    assert shelf.reads == 0  # Threads fetches the file itself


async def test_video_is_polled_until_finished_then_published(
    network: respx.MockRouter, adapter: ThreadsAdapter, shelf: MediaShelf, sleep: RecordedSleep
) -> None:
    video = shelf.add("video", "video/mp4", b"\x00" * 64)
    mock_limit(network)
    create = network.post(f"{API}/{USER_ID}/threads").mock(return_value=answer({"id": "c-v"}))
    status = network.get(f"{API}/c-v").mock(
        side_effect=[
            container_status("IN_PROGRESS", "c-v"),
            container_status("IN_PROGRESS", "c-v"),
            container_status("FINISHED", "c-v"),
        ]
    )
    publish = network.post(f"{API}/{USER_ID}/threads_publish").mock(
        return_value=answer({"id": POST_ID})
    )
    mock_permalink(network)

    await adapter.publish(publish_request(THREADS, "", media=(video,)))

    assert form(create.calls[0].request) == {
        "media_type": "VIDEO",
        "video_url": await signed_url(video),
        "access_token": TOKEN,
    }
    assert status.call_count == 3
    assert sleep.delays == [5.0, 5.0]
    assert publish.call_count == 1


async def test_video_threads_cannot_process_is_media_rejected_with_its_reason(
    network: respx.MockRouter, adapter: ThreadsAdapter, shelf: MediaShelf
) -> None:
    video = shelf.add("video", "video/mp4", b"\x00" * 64)
    mock_limit(network)
    network.post(f"{API}/{USER_ID}/threads").mock(return_value=answer({"id": "c-v"}))
    network.get(f"{API}/c-v").mock(
        side_effect=[
            container_status("IN_PROGRESS", "c-v"),
            container_status("ERROR", "c-v", "INVALID_FRAME_RATE"),
        ]
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(THREADS, "clip", media=(video,)))
    assert caught.value.code == "media_rejected"
    assert caught.value.retryable is False
    assert "INVALID_FRAME_RATE" in caught.value.message


async def test_carousel_items_are_made_and_ready_before_the_carousel(
    network: respx.MockRouter, adapter: ThreadsAdapter, shelf: MediaShelf
) -> None:
    image = shelf.add("image", "image/jpeg", b"\xff\xd8jpeg")
    video = shelf.add("video", "video/quicktime", b"\x00mov")
    mock_limit(network)
    create = network.post(f"{API}/{USER_ID}/threads").mock(
        side_effect=[answer({"id": "item-1"}), answer({"id": "item-2"}), answer({"id": "car"})]
    )
    waits = [
        mock_ready(network, "item-1"),
        mock_ready(network, "item-2"),
        mock_ready(network, "car"),
    ]
    publish = network.post(f"{API}/{USER_ID}/threads_publish").mock(
        return_value=answer({"id": POST_ID})
    )
    mock_permalink(network)

    request = publish_request(
        THREADS, "Two views", media=(image, video), options={"altTexts": [None, "A clip"]}
    )
    await adapter.publish(dataclasses.replace(request, content_kind="carousel"))

    assert [form(call.request) for call in create.calls] == [
        {
            "media_type": "IMAGE",
            "image_url": await signed_url(image),
            "is_carousel_item": "true",
            "access_token": TOKEN,
        },
        {
            "media_type": "VIDEO",
            "video_url": await signed_url(video),
            "alt_text": "A clip",
            "is_carousel_item": "true",
            "access_token": TOKEN,
        },
        {
            "media_type": "CAROUSEL",
            "children": "item-1,item-2",
            "text": "Two views",
            "access_token": TOKEN,
        },
    ]
    assert all(wait.call_count == 1 for wait in waits)
    assert form(publish.calls[0].request)["creation_id"] == "car"


async def test_thread_is_a_chain_of_replies_and_the_first_comment_answers_the_post(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    limit = network.get(f"{API}/{USER_ID}/threads_publishing_limit").mock(
        return_value=publishing_limit(reply_used=10)
    )
    create = network.post(f"{API}/{USER_ID}/threads").mock(
        side_effect=[answer({"id": f"c-{n}"}) for n in range(4)]
    )
    for n in range(4):
        mock_ready(network, f"c-{n}")
    network.post(f"{API}/{USER_ID}/threads_publish").mock(
        side_effect=[answer({"id": f"m-{n}"}) for n in range(4)]
    )
    mock_permalink(network, "m-0")

    result = await adapter.publish(
        publish_request(
            THREADS,
            "1/3 the post",
            options={
                "thread": ["2/3 more", "3/3 end"],
                "firstComment": "Links in the comments: https://example.com",
                "replyControl": "followers_only",
            },
        )
    )

    assert query(limit.calls[0].request)["fields"] == (
        "quota_usage,config,reply_quota_usage,reply_config"
    )
    sent = [form(call.request) for call in create.calls]
    assert [(s["text"], s.get("reply_to_id"), s.get("reply_control")) for s in sent] == [
        ("1/3 the post", None, "followers_only"),
        ("2/3 more", "m-0", "followers_only"),
        ("3/3 end", "m-1", "followers_only"),
        ("Links in the comments: https://example.com", "m-0", None),
    ]
    assert result.provider_post_id == "m-0"


async def test_a_first_comment_over_the_emoji_byte_count_is_refused_before_anything_is_sent(
    adapter: ThreadsAdapter,
) -> None:
    # 21 family emoji of 25 UTF-8 bytes each: 21 graphemes, 525 as Threads counts them.
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(THREADS, "hi", options={"firstComment": family * 21}))
    assert caught.value.code == "text_rejected"
    assert "525" in caught.value.message


async def test_an_unknown_reply_control_is_refused_before_anything_is_sent(
    adapter: ThreadsAdapter,
) -> None:
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(THREADS, "hi", options={"replyControl": "nobody"}))
    assert caught.value.code == "invalid_request"


async def test_media_without_public_links_is_a_permanent_invalid_request(
    network: respx.MockRouter, shelf: MediaShelf
) -> None:
    mock_limit(network)
    adapter = ThreadsAdapter(media_url=None, clock=fixed_clock)
    image = shelf.add("image", "image/png", png_bytes(4, 4))
    try:
        with pytest.raises(ProviderError) as caught:
            await adapter.publish(publish_request(THREADS, "x", media=(image,)))
    finally:
        await adapter.aclose()
    assert (caught.value.code, caught.value.retryable) == ("invalid_request", False)
    assert "public media links are unavailable" in caught.value.message


async def test_an_exhausted_quota_waits_for_the_window_without_posting(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    mock_limit(network, used=250)
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(THREADS, "one too many"))
    assert (caught.value.code, caught.value.retryable) == ("rate_limited", True)
    assert caught.value.retry_after == DAY
    assert "250 of the 250 posts" in caught.value.message


async def test_a_reply_quota_too_short_for_the_thread_stops_it_before_its_first_post(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    network.get(f"{API}/{USER_ID}/threads_publishing_limit").mock(
        return_value=publishing_limit(reply_used=999)
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(THREADS, "a", options={"thread": ["b", "c"]}))
    assert caught.value.code == "rate_limited"
    assert "replies" in caught.value.message


async def test_publish_limit_error_from_threads_is_rate_limited_at_the_usage_header(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    mock_limit(network)
    network.post(f"{API}/{USER_ID}/threads").mock(return_value=answer({"id": "c-1"}))
    mock_ready(network, "c-1")
    usage = json.dumps(
        {USER_ID: [{"type": "threads", "call_count": 100, "estimated_time_to_regain_access": 12}]}
    )
    network.post(f"{API}/{USER_ID}/threads_publish").mock(
        return_value=graph_error(
            17,
            "User request limit reached",
            status=403,
            headers={"X-Business-Use-Case-Usage": usage},
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(THREADS, "hi"))
    assert caught.value.code == "rate_limited"
    assert caught.value.retry_after == 720
    assert "User request limit reached" in caught.value.message


async def test_text_threads_refuses_is_text_rejected_in_its_own_words(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    mock_limit(network)
    network.post(f"{API}/{USER_ID}/threads").mock(
        return_value=graph_error(
            100,
            "Invalid parameter",
            user_msg="The post text is too long. Keep it under 500 characters.",
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(THREADS, "long"))
    assert (caught.value.code, caught.value.retryable) == ("text_rejected", False)
    assert "Keep it under 500 characters" in caught.value.message


async def test_a_missing_permalink_does_not_fail_a_published_post(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    mock_limit(network)
    network.post(f"{API}/{USER_ID}/threads").mock(return_value=answer({"id": "c-1"}))
    mock_ready(network, "c-1")
    network.post(f"{API}/{USER_ID}/threads_publish").mock(return_value=answer({"id": POST_ID}))
    network.get(f"{API}/{POST_ID}").mock(return_value=httpx.Response(500))
    result = await adapter.publish(publish_request(THREADS, "hi"))
    assert (result.provider_post_id, result.url) == (POST_ID, None)
