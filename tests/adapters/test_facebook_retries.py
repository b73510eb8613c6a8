"""A retried Facebook publish finds what an earlier attempt published instead of posting twice.

Shapes follow developers.facebook.com graph-api/reference/page/published_posts, .../page/videos
and .../page/video_reels (GET with `fields`, `limit` -> `{"data": [{"id", "message" or
"description", "created_time"}]}`, times like 2026-11-22T09:30:00+0000) and
graph-api/reference/object/comments (GET with `fields=from,message`, `filter=stream`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta

import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.facebook import FacebookAdapter

from .facebook_support import GRAPH
from .facebook_support import NOW
from .facebook_support import PAGE_ID
from .facebook_support import POST_ID
from .facebook_support import PROOF
from .facebook_support import RECENT
from .facebook_support import facebook_adapter
from .facebook_support import form
from .facebook_support import graph_error
from .facebook_support import page_channel
from .facebook_support import query
from .support import MediaShelf
from .support import RecordedSleep
from .support import publish_request

OLD = (NOW - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%S+0000")


@pytest.fixture
async def adapter() -> AsyncIterator[FacebookAdapter]:
    async with facebook_adapter(RecordedSleep()) as adapter:
        yield adapter


def posts(*items: dict[str, str]) -> dict[str, object]:
    return {"data": list(items), "paging": {"cursors": {"before": "b", "after": "a"}}}


async def test_first_attempt_never_looks_for_an_earlier_post(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    feed = network.post(f"{GRAPH}/{PAGE_ID}/feed").respond(200, json={"id": POST_ID})
    await adapter.publish(publish_request(page_channel(), "Hello"))
    assert feed.call_count == 1


async def test_retry_returns_the_post_an_earlier_attempt_made(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    published = network.get(f"{GRAPH}/{PAGE_ID}/published_posts").respond(
        200,
        json=posts(
            {"id": f"{PAGE_ID}_1", "message": "Other", "created_time": RECENT},
            {"id": POST_ID, "message": "Hello  world\n", "created_time": RECENT},
        ),
    )
    result = await adapter.publish(publish_request(page_channel(), "Hello world", attempt=2))
    assert query(published) == {
        "fields": "id,message,created_time",
        "limit": "25",
        "appsecret_proof": PROOF,
    }
    assert result.provider_post_id == POST_ID


async def test_retry_ignores_the_same_text_posted_days_ago(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.get(f"{GRAPH}/{PAGE_ID}/published_posts").respond(
        200, json=posts({"id": f"{PAGE_ID}_1", "message": "Hello", "created_time": OLD})
    )
    feed = network.post(f"{GRAPH}/{PAGE_ID}/feed").respond(200, json={"id": POST_ID})
    result = await adapter.publish(publish_request(page_channel(), "Hello", attempt=2))
    assert feed.call_count == 1
    assert result.provider_post_id == POST_ID


async def test_retry_of_a_reel_looks_among_the_pages_reels(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    shelf = MediaShelf()
    reels = network.get(f"{GRAPH}/{PAGE_ID}/video_reels").respond(
        200, json=posts({"id": "1200000000000042", "description": "Reel", "created_time": RECENT})
    )
    item = shelf.add("video", "video/mp4", b"mp4")
    request = replace(
        publish_request(page_channel(), "Reel", media=(item,), attempt=3), content_kind="reel"
    )
    result = await adapter.publish(request)
    assert query(reels)["fields"] == "id,description,created_time"
    assert result.url == "https://www.facebook.com/reel/1200000000000042"


async def test_retry_that_cannot_look_for_now_is_retried_rather_than_risk_a_double(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.get(f"{GRAPH}/{PAGE_ID}/published_posts").mock(
        return_value=graph_error(2, "Service temporarily unavailable", status=503)
    )
    with pytest.raises(ProviderError) as failed:
        await adapter.publish(publish_request(page_channel(), "Hello", attempt=2))
    assert failed.value.retryable is True


async def test_retry_that_may_never_look_publishes(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.get(f"{GRAPH}/{PAGE_ID}/published_posts").mock(
        return_value=graph_error(10, "(#10) This endpoint requires pages_read_engagement")
    )
    feed = network.post(f"{GRAPH}/{PAGE_ID}/feed").respond(200, json={"id": POST_ID})
    await adapter.publish(publish_request(page_channel(), "Hello", attempt=2))
    assert feed.call_count == 1


async def test_recovered_post_gets_its_first_comment_only_if_missing(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.get(f"{GRAPH}/{PAGE_ID}/published_posts").respond(
        200, json=posts({"id": POST_ID, "message": "Hello", "created_time": RECENT})
    )
    read = network.get(f"{GRAPH}/{POST_ID}/comments").respond(
        200, json={"data": [{"id": "c9", "from": {"id": "42", "name": "A fan"}, "message": "Hi"}]}
    )
    comment = network.post(f"{GRAPH}/{POST_ID}/comments").respond(200, json={"id": "c1"})
    request = publish_request(page_channel(), "Hello", options={"firstComment": "Hi"}, attempt=2)
    await adapter.publish(request)
    assert query(read) == {
        "fields": "from,message",
        "filter": "stream",
        "limit": "50",
        "appsecret_proof": PROOF,
    }
    assert form(comment) == {"message": "Hi"}


async def test_recovered_post_already_commented_by_the_page_is_not_commented_again(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.get(f"{GRAPH}/{PAGE_ID}/published_posts").respond(
        200, json=posts({"id": POST_ID, "message": "Hello", "created_time": RECENT})
    )
    network.get(f"{GRAPH}/{POST_ID}/comments").respond(
        200, json={"data": [{"id": "c1", "from": {"id": PAGE_ID, "name": "Page"}, "message": "Hi"}]}
    )
    request = publish_request(page_channel(), "Hello", options={"firstComment": "Hi"}, attempt=2)
    result = await adapter.publish(request)
    assert result.provider_post_id == POST_ID


async def test_duplicate_refusal_is_permanent_in_facebooks_words(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.post(f"{GRAPH}/{PAGE_ID}/feed").mock(
        return_value=graph_error(506, "Duplicate status message")
    )
    with pytest.raises(ProviderError) as refused:
        await adapter.publish(publish_request(page_channel(), "Hello"))
    assert (refused.value.code, refused.value.retryable) == ("duplicate_content", False)
    assert "Duplicate status message" in refused.value.message
