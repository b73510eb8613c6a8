"""LinkedIn publishing: the exact requests of each content kind (text, link, one image, several
images, a video with its parts and polling), the first comment, and a retried publish."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.linkedin.commentary import little_text
from pressroom.providers.linkedin.errors import RETIRED_VERSIONS

from .linkedin_support import API
from .linkedin_support import ORGANIZATION
from .linkedin_support import PERSON
from .linkedin_support import SHARE
from .linkedin_support import TOKEN
from .linkedin_support import VERSION
from .linkedin_support import created
from .linkedin_support import linkedin_adapter
from .linkedin_support import linkedin_error
from .linkedin_support import member_channel
from .linkedin_support import page_channel
from .linkedin_support import sent_headers
from .linkedin_support import sent_json
from .support import MediaShelf
from .support import RecordedSleep
from .support import png_bytes
from .support import publish_request

FEED = {"feedDistribution": "MAIN_FEED", "targetEntities": [], "thirdPartyDistributionChannels": []}


@pytest.fixture(autouse=True)
def no_retired_versions() -> Iterator[None]:
    RETIRED_VERSIONS.clear()
    yield
    RETIRED_VERSIONS.clear()


def post(author: str, commentary: str, **extra: object) -> dict[str, object]:
    return {
        "author": author,
        "commentary": commentary,
        "visibility": "PUBLIC",
        "distribution": FEED,
        "lifecycleState": "PUBLISHED",
        "isReshareDisabledByAuthor": False,
        **extra,
    }


def test_little_text_escapes_reserved_characters_but_keeps_links_and_hashtags() -> None:
    text = "Q3 (draft) [v2] @team *bold* _x_ ~y~ <a|b> {c} \\ # #launch https://ex.com/a_(b)"
    assert little_text(text) == (
        "Q3 \\(draft\\) \\[v2\\] \\@team \\*bold\\* \\_x\\_ \\~y\\~ \\<a\\|b\\> \\{c\\} \\\\ \\# "
        "#launch https://ex.com/a_(b)"
    )


async def test_text_post_sends_the_versioned_posts_request(network: respx.MockRouter) -> None:
    route = network.post(f"{API}/rest/posts").mock(return_value=created())
    async with linkedin_adapter() as adapter:
        result = await adapter.publish(publish_request(member_channel(), "Hello (world)"))
    assert result.provider_post_id == SHARE
    assert result.url == f"https://www.linkedin.com/feed/update/{SHARE}/"
    assert sent_json(route) == post(PERSON, "Hello \\(world\\)")
    headers = sent_headers(route)
    assert headers["LinkedIn-Version"] == VERSION
    assert headers["X-Restli-Protocol-Version"] == "2.0.0"
    assert headers["Authorization"] == f"Bearer {TOKEN}"


async def test_link_post_is_an_article(network: respx.MockRouter) -> None:
    route = network.post(f"{API}/rest/posts").mock(return_value=created())
    options = {
        "link": "https://pressroom.example/blog",
        "linkTitle": "Launch",
        "visibility": "PUBLIC",
    }
    async with linkedin_adapter() as adapter:
        await adapter.publish(publish_request(page_channel(), "Read", options=options))
    article = {"source": "https://pressroom.example/blog", "title": "Launch"}
    assert sent_json(route) == post(ORGANIZATION, "Read", content={"article": article})


async def test_a_page_cannot_post_to_connections_only(network: respx.MockRouter) -> None:
    async with linkedin_adapter() as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(
                publish_request(page_channel(), "x", options={"visibility": "CONNECTIONS"})
            )
    assert raised.value.code == "invalid_request"


def image_routes(network: respx.MockRouter, count: int) -> tuple[respx.Route, list[respx.Route]]:
    answers = [
        httpx.Response(
            200,
            json={
                "value": {
                    "uploadUrl": f"https://www.linkedin.com/dms-uploads/img{n}",
                    "image": f"urn:li:image:C{n}",
                }
            },
        )
        for n in range(count)
    ]
    init = network.post(f"{API}/rest/images", params={"action": "initializeUpload"}).mock(
        side_effect=answers
    )
    puts = [
        network.put(f"https://www.linkedin.com/dms-uploads/img{n}").mock(
            return_value=httpx.Response(201)
        )
        for n in range(count)
    ]
    return init, puts


async def test_one_image_is_uploaded_then_posted_with_its_alt_text(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    data = png_bytes(20, 10)
    image = shelf.add("image", "image/png", data)
    init, puts = image_routes(network, 1)
    route = network.post(f"{API}/rest/posts").mock(return_value=created())
    async with linkedin_adapter(shelf) as adapter:
        await adapter.publish(
            publish_request(
                member_channel(), "Pic", media=(image,), options={"altTexts": ["A cat"]}
            )
        )
    assert sent_json(init) == {"initializeUploadRequest": {"owner": PERSON}}
    assert sent_headers(init)["LinkedIn-Version"] == VERSION
    assert puts[0].calls[0].request.content == data
    assert sent_headers(puts[0])["Authorization"] == f"Bearer {TOKEN}"
    media = {"media": {"id": "urn:li:image:C0", "altText": "A cat"}}
    assert sent_json(route) == post(PERSON, "Pic", content=media)


async def test_several_images_make_a_multi_image_post(network: respx.MockRouter) -> None:
    shelf = MediaShelf()
    items = tuple(shelf.add("image", "image/png", png_bytes(5 + n, 5)) for n in range(3))
    _, puts = image_routes(network, 3)
    route = network.post(f"{API}/rest/posts").mock(return_value=created())
    async with linkedin_adapter(shelf) as adapter:
        await adapter.publish(
            publish_request(page_channel(), "Album", media=items, options={"altTexts": [None, "b"]})
        )
    images = [
        {"id": "urn:li:image:C0"},
        {"id": "urn:li:image:C1", "altText": "b"},
        {"id": "urn:li:image:C2"},
    ]
    assert sent_json(route) == post(
        ORGANIZATION, "Album", content={"multiImage": {"images": images}}
    )
    assert [p.calls[0].request.content for p in puts] == [shelf.files[i.id] for i in items]


def video_routes(network: respx.MockRouter, statuses: list[str]) -> dict[str, respx.Route]:
    instructions = [
        {
            "uploadUrl": "https://www.linkedin.com/dms-uploads/v/part1",
            "firstByte": 0,
            "lastByte": 9,
        },
        {
            "uploadUrl": "https://www.linkedin.com/dms-uploads/v/part2",
            "firstByte": 10,
            "lastByte": 14,
        },
    ]
    value = {"video": "urn:li:video:D1", "uploadToken": "tok", "uploadInstructions": instructions}
    video_url = f"{API}/rest/videos/{quote('urn:li:video:D1', safe='')}"
    return {
        "init": network.post(f"{API}/rest/videos", params={"action": "initializeUpload"}).mock(
            return_value=httpx.Response(200, json={"value": value})
        ),
        "part1": network.put(instructions[0]["uploadUrl"]).mock(
            return_value=httpx.Response(200, headers={"ETag": "etag-1"})
        ),
        "part2": network.put(instructions[1]["uploadUrl"]).mock(
            return_value=httpx.Response(200, headers={"ETag": "etag-2"})
        ),
        "finalize": network.post(f"{API}/rest/videos", params={"action": "finalizeUpload"}).mock(
            return_value=httpx.Response(200)
        ),
        "status": network.get(video_url).mock(
            side_effect=[
                httpx.Response(200, json={"status": s, "processingFailureReason": "Bad codec"})
                for s in statuses
            ]
        ),
    }


async def test_video_is_uploaded_in_parts_finalized_and_polled_until_available(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", b"0123456789ABCDE")
    routes = video_routes(network, ["PROCESSING", "AVAILABLE"])
    post_route = network.post(f"{API}/rest/posts").mock(return_value=created())
    sleep = RecordedSleep()
    async with linkedin_adapter(shelf, sleep=sleep) as adapter:
        await adapter.publish(
            publish_request(member_channel(), "Clip", media=(video,), options={"videoTitle": "T"})
        )
    assert sent_json(routes["init"]) == {
        "initializeUploadRequest": {
            "owner": PERSON,
            "fileSizeBytes": 15,
            "uploadCaptions": False,
            "uploadThumbnail": False,
        }
    }
    assert routes["part1"].calls[0].request.content == b"0123456789"
    assert routes["part2"].calls[0].request.content == b"ABCDE"
    assert sent_json(routes["finalize"]) == {
        "finalizeUploadRequest": {
            "video": "urn:li:video:D1",
            "uploadToken": "tok",
            "uploadedPartIds": ["etag-1", "etag-2"],
        }
    }
    assert sleep.delays == [2.0]
    content = {"media": {"id": "urn:li:video:D1", "title": "T"}}
    assert sent_json(post_route) == post(PERSON, "Clip", content=content)


async def test_video_processing_failure_is_media_rejected_in_linkedins_words(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", b"0123456789ABCDE")
    video_routes(network, ["PROCESSING_FAILED"])
    async with linkedin_adapter(shelf) as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(publish_request(member_channel(), "Clip", media=(video,)))
    assert raised.value.code == "media_rejected"
    assert "Bad codec" in raised.value.message


async def test_video_still_processing_past_the_budget_is_a_retryable_timeout(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", b"0123456789ABCDE")
    video_routes(network, ["PROCESSING"] * 4)
    sleep = RecordedSleep()
    async with linkedin_adapter(shelf, sleep=sleep) as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(publish_request(member_channel(), "Clip", media=(video,)))
    assert raised.value.code == "timeout" and raised.value.retryable
    assert sleep.delays == [2.0, 2.0, 2.0]


async def test_first_comment_is_posted_under_the_new_post(network: respx.MockRouter) -> None:
    network.post(f"{API}/rest/posts").mock(return_value=created())
    comments = network.post(f"{API}/rest/socialActions/{quote(SHARE, safe='')}/comments").mock(
        return_value=httpx.Response(201)
    )
    async with linkedin_adapter() as adapter:
        await adapter.publish(
            publish_request(page_channel(), "Hi", options={"firstComment": "More: https://x.y"})
        )
    assert sent_json(comments) == {
        "actor": ORGANIZATION,
        "object": SHARE,
        "message": {"text": "More: https://x.y"},
    }


async def test_a_failed_first_comment_leaves_the_post_published(network: respx.MockRouter) -> None:
    network.post(f"{API}/rest/posts").mock(return_value=created())
    network.post(f"{API}/rest/socialActions/{quote(SHARE, safe='')}/comments").mock(
        return_value=linkedin_error(403, "ACCESS_DENIED", "Not enough permissions")
    )
    async with linkedin_adapter() as adapter:
        result = await adapter.publish(
            publish_request(page_channel(), "Hi", options={"firstComment": "c"})
        )
    assert result.provider_post_id == SHARE


async def test_a_retried_publish_returns_the_post_linkedin_calls_a_duplicate(
    network: respx.MockRouter,
) -> None:
    network.post(f"{API}/rest/posts").mock(
        return_value=linkedin_error(422, "DUPLICATE_POST", f"Content is a duplicate of {SHARE}")
    )
    async with linkedin_adapter() as adapter:
        result = await adapter.publish(publish_request(member_channel(), "Hi", attempt=2))
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(publish_request(member_channel(), "Hi", attempt=1))
    assert result.provider_post_id == SHARE
    assert raised.value.code == "duplicate_content"
