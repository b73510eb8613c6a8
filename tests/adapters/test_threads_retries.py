"""A retried Threads publish never posts twice where Threads lets it be avoided: it resumes the
containers and posts this process made, and after a crash it finds what the earlier attempt
published (shapes: threads_support.py; replies: retrieve-and-manage-replies)."""

from __future__ import annotations

import dataclasses

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.threads import ThreadsAdapter

from .support import MediaShelf
from .support import channel
from .support import publish_request
from .threads_support import API
from .threads_support import CREDENTIALS
from .threads_support import DAY
from .threads_support import NOW
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
from .threads_support import sleep_fixture  # noqa: F401

THREADS = channel("threads", CREDENTIALS, handle="@pressroom")


def mock_common(network: respx.MockRouter, **usage: int) -> None:
    network.get(f"{API}/{USER_ID}/threads_publishing_limit").mock(
        return_value=publishing_limit(**usage)
    )
    network.get(f"{API}/{POST_ID}").mock(return_value=answer({"permalink": PERMALINK}))


def recent_posts(*posts: dict[str, str]) -> httpx.Response:
    return answer({"data": list(posts), "paging": {"cursors": {"before": "b", "after": "a"}}})


async def test_a_container_still_processing_is_resumed_by_the_retry_not_made_again(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    mock_common(network)
    create = network.post(f"{API}/{USER_ID}/threads").mock(return_value=answer({"id": "c-v"}))
    status = network.get(f"{API}/c-v").mock(
        side_effect=[container_status("IN_PROGRESS", "c-v")] * 3
        + [container_status("FINISHED", "c-v")]
    )
    publish = network.post(f"{API}/{USER_ID}/threads_publish").mock(
        return_value=answer({"id": POST_ID})
    )

    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(THREADS, "clip", attempt=1))
    assert (caught.value.code, caught.value.retryable) == ("provider_unavailable", True)
    assert "still processing the post after 10 s" in caught.value.message
    assert publish.call_count == 0

    result = await adapter.publish(publish_request(THREADS, "clip", attempt=2))
    assert create.call_count == 1
    assert status.call_count == 4
    assert form(publish.calls[0].request)["creation_id"] == "c-v"
    assert result.provider_post_id == POST_ID


async def test_a_carousel_retry_reuses_the_items_already_made(
    network: respx.MockRouter, adapter: ThreadsAdapter, shelf: MediaShelf
) -> None:
    media = (shelf.add("video", "video/mp4", b"\x00a"), shelf.add("video", "video/mp4", b"\x00b"))
    mock_common(network)
    create = network.post(f"{API}/{USER_ID}/threads").mock(
        side_effect=[answer({"id": "item-1"}), answer({"id": "item-2"}), answer({"id": "car"})]
    )
    network.get(f"{API}/item-1").mock(return_value=container_status("FINISHED", "item-1"))
    network.get(f"{API}/item-2").mock(
        side_effect=[container_status("IN_PROGRESS", "item-2")] * 3
        + [container_status("FINISHED", "item-2")]
    )
    network.get(f"{API}/car").mock(return_value=container_status("FINISHED", "car"))
    network.post(f"{API}/{USER_ID}/threads_publish").mock(return_value=answer({"id": POST_ID}))
    request = dataclasses.replace(
        publish_request(THREADS, "two clips", media=media), content_kind="carousel"
    )

    with pytest.raises(ProviderError) as caught:
        await adapter.publish(request)
    assert "still processing item 2 of the post" in caught.value.message
    await adapter.publish(dataclasses.replace(request, attempt=2))

    assert create.call_count == 3
    assert form(create.calls[2].request)["children"] == "item-1,item-2"


async def test_a_thread_stopped_halfway_resumes_after_its_published_posts(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    mock_common(network, reply_used=0)
    create = network.post(f"{API}/{USER_ID}/threads").mock(
        side_effect=[answer({"id": "c-0"}), answer({"id": "c-1"})]
    )
    network.get(f"{API}/c-0").mock(return_value=container_status("FINISHED", "c-0"))
    network.get(f"{API}/c-1").mock(return_value=container_status("FINISHED", "c-1"))
    publish = network.post(f"{API}/{USER_ID}/threads_publish").mock(
        side_effect=[
            answer({"id": POST_ID}),
            graph_error(2, "Service temporarily unavailable", status=503),
            answer({"id": "m-1"}),
        ]
    )
    request = publish_request(THREADS, "first", options={"thread": ["second"]})

    with pytest.raises(ProviderError) as caught:
        await adapter.publish(request)
    assert caught.value.code == "provider_unavailable"
    result = await adapter.publish(
        publish_request(THREADS, "first", options={"thread": ["second"]}, attempt=2)
    )

    assert create.call_count == 2  # the post once, the follow-up once
    assert [form(c.request)["creation_id"] for c in publish.calls] == ["c-0", "c-1", "c-1"]
    assert result.provider_post_id == POST_ID


async def test_media_not_found_at_publish_is_retried_with_the_same_container(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    mock_common(network)
    create = network.post(f"{API}/{USER_ID}/threads").mock(return_value=answer({"id": "c-1"}))
    network.get(f"{API}/c-1").mock(return_value=container_status("FINISHED", "c-1"))
    network.post(f"{API}/{USER_ID}/threads_publish").mock(
        side_effect=[
            graph_error(
                24,
                "The requested resource does not exist",
                subcode=4279009,
                user_msg="The media with id c-1 cannot be found.",
            ),
            answer({"id": POST_ID}),
        ]
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(THREADS, "hi"))
    assert (caught.value.code, caught.value.retryable) == ("provider_unavailable", True)
    await adapter.publish(publish_request(THREADS, "hi", attempt=2))
    assert create.call_count == 1


async def test_after_a_crash_the_retry_returns_the_post_the_earlier_attempt_made(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    network.get(f"{API}/{POST_ID}").mock(return_value=answer({"permalink": PERMALINK}))
    lookup = network.get(f"{API}/{USER_ID}/threads").mock(
        return_value=recent_posts(
            {"id": "999", "text": "Launch day", "media_type": "IMAGE", "timestamp": "t"},
            {"id": POST_ID, "text": "Launch  day\n", "media_type": "TEXT_POST", "timestamp": "t"},
        )
    )
    result = await adapter.publish(publish_request(THREADS, "Launch day", attempt=2))

    assert query(lookup.calls[0].request) == {
        "fields": "id,text,media_type,timestamp",
        "since": str(NOW - DAY),
        "limit": "25",
        "access_token": TOKEN,
    }
    assert (result.provider_post_id, result.url) == (POST_ID, PERMALINK)


async def test_after_a_crash_a_thread_posts_only_the_replies_not_found_under_its_post(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    network.get(f"{API}/{POST_ID}").mock(return_value=answer({"permalink": PERMALINK}))
    network.get(f"{API}/{USER_ID}/threads").mock(
        return_value=recent_posts({"id": POST_ID, "text": "one", "media_type": "TEXT_POST"})
    )
    replies = network.get(f"{API}/{POST_ID}/replies").mock(
        return_value=answer(
            {
                "data": [
                    {"id": "r-other", "text": "two", "is_reply_owned_by_me": False},
                    {"id": "r-2", "text": "two", "is_reply_owned_by_me": True},
                ]
            }
        )
    )
    network.get(f"{API}/r-2/replies").mock(return_value=answer({"data": []}))
    limit = network.get(f"{API}/{USER_ID}/threads_publishing_limit").mock(
        return_value=publishing_limit(reply_used=3)
    )
    create = network.post(f"{API}/{USER_ID}/threads").mock(return_value=answer({"id": "c-3"}))
    network.get(f"{API}/c-3").mock(return_value=container_status("FINISHED", "c-3"))
    network.post(f"{API}/{USER_ID}/threads_publish").mock(return_value=answer({"id": "r-3"}))

    await adapter.publish(
        publish_request(THREADS, "one", options={"thread": ["two", "three"]}, attempt=3)
    )

    assert query(replies.calls[0].request)["fields"] == "id,text,is_reply_owned_by_me"
    assert query(limit.calls[0].request)["fields"] == "reply_quota_usage,reply_config"
    assert form(create.calls[0].request) == {
        "media_type": "TEXT",
        "text": "three",
        "reply_to_id": "r-2",
        "access_token": TOKEN,
    }


async def test_a_container_published_by_an_attempt_that_lost_its_answer_is_found(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    mock_common(network)
    network.post(f"{API}/{USER_ID}/threads").mock(return_value=answer({"id": "c-1"}))
    network.get(f"{API}/c-1").mock(
        side_effect=[container_status("FINISHED", "c-1"), container_status("PUBLISHED", "c-1")]
    )
    publish = network.post(f"{API}/{USER_ID}/threads_publish").mock(
        side_effect=httpx.ReadTimeout("no answer")
    )
    network.get(f"{API}/{USER_ID}/threads").mock(
        return_value=recent_posts({"id": POST_ID, "text": "hi", "media_type": "TEXT_POST"})
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(THREADS, "hi"))
    assert caught.value.code == "timeout"

    result = await adapter.publish(publish_request(THREADS, "hi", attempt=2))
    assert publish.call_count == 1
    assert result.provider_post_id == POST_ID


async def test_a_retry_that_finds_nothing_publishes(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    mock_common(network)
    network.get(f"{API}/{USER_ID}/threads").mock(return_value=recent_posts())
    create = network.post(f"{API}/{USER_ID}/threads").mock(return_value=answer({"id": "c-1"}))
    network.get(f"{API}/c-1").mock(return_value=container_status("FINISHED", "c-1"))
    network.post(f"{API}/{USER_ID}/threads_publish").mock(return_value=answer({"id": POST_ID}))
    await adapter.publish(publish_request(THREADS, "hi", attempt=2))
    assert create.call_count == 1


async def test_a_lookup_threads_refuses_fails_the_retry_rather_than_post_twice(
    network: respx.MockRouter, adapter: ThreadsAdapter
) -> None:
    network.get(f"{API}/{USER_ID}/threads").mock(
        return_value=graph_error(1, "An unknown error occurred", status=500)
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(THREADS, "hi", attempt=2))
    assert (caught.value.code, caught.value.retryable) == ("provider_unavailable", True)
