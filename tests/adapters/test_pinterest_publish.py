"""Pinterest pins: the requests each content kind sends (POST /v5/pins with an image URL, a
carousel of image URLs, an uploaded video), the default board, and a retry that finds the pin
of an earlier attempt by its note instead of pinning twice.

Shapes: https://developers.pinterest.com/docs/api/v5/pins-create, .../media-create,
.../media-get and .../boards-list_pins."""

from __future__ import annotations

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError

from .pinterest_support import ACCESS_TOKEN
from .pinterest_support import API
from .pinterest_support import BOARD_ID
from .pinterest_support import NOTE
from .pinterest_support import PIN_ID
from .pinterest_support import pin_channel
from .pinterest_support import pin_request
from .pinterest_support import pinterest_adapter
from .pinterest_support import sent_json
from .pinterest_support import signed_url
from .support import FIXED_NOW
from .support import MediaShelf
from .support import RecordedSleep
from .support import multipart_parts
from .support import png_bytes

UPLOAD_URL = "https://pinterest-media-upload.s3-accelerate.amazonaws.com/"


def created(network: respx.MockRouter) -> respx.Route:
    return network.post(f"{API}/pins").mock(
        return_value=httpx.Response(201, json={"id": PIN_ID, "board_id": BOARD_ID})
    )


async def test_an_image_pin_is_created_from_the_signed_url_on_the_default_board(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    image = shelf.add("image", "image/png", png_bytes(4, 4))
    route = created(network)
    async with pinterest_adapter(shelf=shelf) as adapter:
        result = await adapter.publish(
            pin_request(
                "pin",
                "Autumn soup, in four steps",
                (image,),
                options={"title": "Autumn soup", "link": "https://example.com/soup",
                         "altText": "A bowl of orange soup"},
            )
        )  # fmt: skip
    assert result.provider_post_id == PIN_ID
    assert result.url == f"https://www.pinterest.com/pin/{PIN_ID}/"
    assert result.published_at == FIXED_NOW
    request = route.calls[0].request
    assert request.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert sent_json(route) == {
        "board_id": BOARD_ID,
        "media_source": {"source_type": "image_url", "url": await signed_url(image)},
        "description": "Autumn soup, in four steps",
        "title": "Autumn soup",
        "link": "https://example.com/soup",
        "alt_text": "A bowl of orange soup",
        "note": NOTE,
    }
    assert shelf.reads == 0


async def test_a_target_board_overrides_the_channels_default(network: respx.MockRouter) -> None:
    image = MediaShelf().add("image", "image/jpeg", b"jpeg")
    route = created(network)
    async with pinterest_adapter() as adapter:
        await adapter.publish(pin_request("pin", "", (image,), options={"boardId": "777"}))
    assert sent_json(route)["board_id"] == "777"
    assert "description" not in sent_json(route)


async def test_without_any_board_the_pin_fails_permanently_saying_how_to_fix_it() -> None:
    image = MediaShelf().add("image", "image/jpeg", b"jpeg")
    async with pinterest_adapter() as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(
                pin_request("pin", "t", (image,), channel=pin_channel(defaultBoardId=None))
            )
    assert raised.value.code == "invalid_request"
    assert "options.boardId" in raised.value.message


async def test_a_carousel_sends_every_image_url_in_order(network: respx.MockRouter) -> None:
    shelf = MediaShelf()
    images = tuple(shelf.add("image", "image/png", png_bytes(3, 3)) for _ in range(3))
    route = created(network)
    async with pinterest_adapter(shelf=shelf) as adapter:
        await adapter.publish(pin_request("carousel", "Three looks", images))
    assert sent_json(route)["media_source"] == {
        "source_type": "multiple_image_urls",
        "items": [{"url": await signed_url(item)} for item in images],
    }


async def test_without_public_media_links_an_image_pin_fails_permanently() -> None:
    image = MediaShelf().add("image", "image/jpeg", b"jpeg")
    async with pinterest_adapter(media=False) as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(pin_request("pin", "t", (image,)))
    assert raised.value.code == "invalid_request"
    assert not raised.value.retryable


async def test_a_video_is_registered_uploaded_polled_then_pinned(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", b"\x00\x00\x00\x18ftypmp42" * 10)
    register = network.post(f"{API}/media").mock(
        return_value=httpx.Response(
            201,
            json={
                "media_id": "12345",
                "media_type": "video",
                "upload_url": UPLOAD_URL,
                "upload_parameters": {
                    "key": "uploads/12345", "policy": "e30=", "x-amz-signature": "sig"
                },
            },
        )
    )  # fmt: skip
    upload = network.post(UPLOAD_URL).mock(return_value=httpx.Response(204))
    status = network.get(f"{API}/media/12345").mock(
        side_effect=[
            httpx.Response(200, json={"media_id": "12345", "status": "registered"}),
            httpx.Response(200, json={"media_id": "12345", "status": "processing"}),
            httpx.Response(200, json={"media_id": "12345", "status": "succeeded"}),
        ]
    )
    route = created(network)
    sleep = RecordedSleep()
    async with pinterest_adapter(shelf=shelf, sleep=sleep) as adapter:
        await adapter.publish(pin_request("pin", "Watch", (video,)))
    assert sent_json(register) == {"media_type": "video"}
    sent = upload.calls[0].request
    assert "authorization" not in sent.headers
    parts = multipart_parts(sent)
    assert list(parts) == ["key", "policy", "x-amz-signature", "file"]
    assert parts["key"].data == b"uploads/12345"
    assert parts["file"].data == shelf.files[video.id]
    assert parts["file"].content_type == "video/mp4"
    assert status.call_count == 3
    assert sleep.delays == [2.0, 2.0]
    assert sent_json(route)["media_source"] == {
        "source_type": "video_id",
        "media_id": "12345",
        "cover_image_key_frame_time": 0,
    }


def video_registered(network: respx.MockRouter) -> None:
    network.post(f"{API}/media").mock(
        return_value=httpx.Response(
            201, json={"media_id": "9", "upload_url": UPLOAD_URL, "upload_parameters": {}}
        )
    )
    network.post(UPLOAD_URL).mock(return_value=httpx.Response(204))


async def test_a_video_pinterest_fails_to_process_is_media_rejected_in_its_words(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", b"video")
    video_registered(network)
    network.get(f"{API}/media/9").mock(
        return_value=httpx.Response(200, json={"status": "failed", "failure_reason": "too short"})
    )
    async with pinterest_adapter(shelf=shelf) as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(pin_request("pin", "t", (video,)))
    assert raised.value.code == "media_rejected"
    assert "too short" in raised.value.message


async def test_a_video_still_processing_after_the_budget_is_a_retryable_timeout(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    video = shelf.add("video", "video/mp4", b"video")
    video_registered(network)
    status = network.get(f"{API}/media/9").mock(
        return_value=httpx.Response(200, json={"status": "processing"})
    )
    sleep = RecordedSleep()
    async with pinterest_adapter(shelf=shelf, sleep=sleep) as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(pin_request("pin", "t", (video,)))
    assert raised.value.code == "timeout" and raised.value.retryable
    assert sleep.delays == [2.0, 2.0, 2.0]
    assert status.call_count == 4


async def test_a_retry_returns_the_pin_an_earlier_attempt_made(network: respx.MockRouter) -> None:
    image = MediaShelf().add("image", "image/jpeg", b"jpeg")
    listing = network.get(f"{API}/boards/{BOARD_ID}/pins").mock(
        return_value=httpx.Response(
            200,
            json={"items": [{"id": "1", "note": None}, {"id": PIN_ID, "note": NOTE}],
                  "bookmark": None},
        )
    )  # fmt: skip
    async with pinterest_adapter() as adapter:
        result = await adapter.publish(pin_request("pin", "t", (image,), attempt=2))
    assert result.provider_post_id == PIN_ID
    assert dict(listing.calls[0].request.url.params) == {"page_size": "50"}


async def test_a_retry_that_finds_no_earlier_pin_creates_it(network: respx.MockRouter) -> None:
    image = MediaShelf().add("image", "image/jpeg", b"jpeg")
    network.get(f"{API}/boards/{BOARD_ID}/pins").mock(
        return_value=httpx.Response(200, json={"items": [{"id": "1", "note": "other"}]})
    )
    route = created(network)
    async with pinterest_adapter() as adapter:
        result = await adapter.publish(pin_request("pin", "t", (image,), attempt=2))
    assert result.provider_post_id == PIN_ID
    assert route.call_count == 1
