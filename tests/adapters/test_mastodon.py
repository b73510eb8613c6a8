"""The Mastodon adapter against recorded REST exchanges.

Recorded shapes follow docs.joinmastodon.org: methods/media (POST /api/v2/media 200 or 202 with
`url: null`, GET /api/v1/media/:id 206 while processing, 422 on a refused file), methods/statuses
(POST /api/v1/statuses with Idempotency-Key, GET and DELETE /api/v1/statuses/:id; entities/Status
favourites_count, reblogs_count, replies_count), methods/instance (GET /api/v2/instance
configuration.statuses and media_attachments; /api/v1/instance on older servers),
methods/accounts (verify_credentials), api/rate-limits (429, X-RateLimit-Reset ISO 8601) and
entities/Error (`{"error": "..."}`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.mastodon.adapter import InstanceLimits
from pressroom.providers.mastodon.adapter import MastodonAdapter
from pressroom.providers.mastodon.adapter import credentials_from_cli_options
from pressroom.providers.mastodon.adapter import verify_credentials

from .support import IDEMPOTENCY_KEY
from .support import MediaShelf
from .support import RecordedSleep
from .support import channel
from .support import fixed_clock
from .support import multipart_parts
from .support import png_bytes
from .support import publish_request

BASE = "https://fosstodon.example"
TOKEN = "ZA-Yj3aBD8U8Cm7lKUp-lm9O9BmDgdhHzDeqsY8tlL0"
CREDENTIALS = {"baseUrl": BASE, "accessToken": TOKEN}
STATUS_ID = "113549875521473519"


def status(status_id: str = STATUS_ID, **extra: Any) -> dict[str, Any]:
    return {
        "id": status_id,
        "created_at": "2026-11-22T09:30:01.456Z",
        "in_reply_to_id": None,
        "sensitive": False,
        "spoiler_text": "",
        "visibility": "public",
        "language": "en",
        "uri": f"{BASE}/users/alice/statuses/{status_id}",
        "url": f"{BASE}/@alice/{status_id}",
        "replies_count": 0,
        "reblogs_count": 0,
        "favourites_count": 0,
        "content": "<p>hello</p>",
        "media_attachments": [],
        **extra,
    }


def attachment(media_id: str, url: str | None, kind: str = "image") -> dict[str, Any]:
    return {
        "id": media_id,
        "type": kind,
        "url": url,
        "preview_url": f"{BASE}/system/media_attachments/files/small/{media_id}.jpg",
        "remote_url": None,
        "text_url": None,
        "meta": {"original": {"width": 4, "height": 3, "size": "4x3", "aspect": 1.33}},
        "description": None,
        "blurhash": "UFBWY:8_0Jxv4mx]t8t64.%M-:IUWGWAt6M}",
    }


@pytest.fixture
def shelf() -> MediaShelf:
    return MediaShelf()


@pytest.fixture
def sleep() -> RecordedSleep:
    return RecordedSleep()


@pytest.fixture
async def adapter(shelf: MediaShelf, sleep: RecordedSleep) -> AsyncIterator[MastodonAdapter]:
    adapter = MastodonAdapter(read_media=shelf.read, sleep=sleep, clock=fixed_clock)
    yield adapter
    await adapter.aclose()


def sent_json(route: respx.Route, call: int = 0) -> Any:
    return json.loads(route.calls[call].request.content)


async def test_status_is_posted_with_the_idempotency_key_header(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    post = network.post(f"{BASE}/api/v1/statuses").mock(
        return_value=httpx.Response(200, json=status())
    )
    result = await adapter.publish(
        publish_request(
            channel("mastodon", CREDENTIALS),
            "Hello, fediverse",
            options={"visibility": "unlisted", "sensitive": False},
        )
    )
    request = post.calls[0].request
    assert request.headers["Idempotency-Key"] == IDEMPOTENCY_KEY
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert sent_json(post) == {
        "status": "Hello, fediverse",
        "visibility": "unlisted",
        "sensitive": False,
    }
    assert result.provider_post_id == STATUS_ID
    assert result.url == f"{BASE}/@alice/{STATUS_ID}"
    assert result.published_at == datetime(2026, 11, 22, 9, 30, 1, 456000, tzinfo=UTC)


async def test_image_processed_at_once_is_attached_without_polling(
    network: respx.MockRouter, adapter: MastodonAdapter, shelf: MediaShelf, sleep: RecordedSleep
) -> None:
    image_bytes = png_bytes(4, 3)
    upload = network.post(f"{BASE}/api/v2/media").mock(
        return_value=httpx.Response(
            200, json=attachment("22348641", f"{BASE}/files/original/22348641.png")
        )
    )
    post = network.post(f"{BASE}/api/v1/statuses").mock(
        return_value=httpx.Response(200, json=status())
    )
    image = shelf.add("image", "image/png", image_bytes)
    await adapter.publish(
        publish_request(
            channel("mastodon", CREDENTIALS),
            "a picture",
            media=(image,),
            options={"altTexts": ["A red rectangle"]},
        )
    )
    request = upload.calls[0].request
    assert request.headers["Content-Length"] == str(len(request.content))
    parts = multipart_parts(request)
    assert parts["description"].data == b"A red rectangle"
    assert parts["file"].data == image_bytes
    assert parts["file"].content_type == "image/png"
    assert parts["file"].filename == f"{image.id}.png"
    assert sent_json(post) == {"status": "a picture", "media_ids": ["22348641"]}
    assert sleep.delays == []


async def test_video_still_processing_is_polled_until_it_has_a_url(
    network: respx.MockRouter, adapter: MastodonAdapter, shelf: MediaShelf, sleep: RecordedSleep
) -> None:
    network.post(f"{BASE}/api/v2/media").mock(
        return_value=httpx.Response(202, json=attachment("777", None, "video"))
    )
    poll = network.get(f"{BASE}/api/v1/media/777").mock(
        side_effect=[
            httpx.Response(206, json=attachment("777", None, "video")),
            httpx.Response(206, json=attachment("777", None, "video")),
            httpx.Response(200, json=attachment("777", f"{BASE}/files/777.mp4", "video")),
        ]
    )
    post = network.post(f"{BASE}/api/v1/statuses").mock(
        return_value=httpx.Response(200, json=status())
    )
    video = shelf.add("video", "video/mp4", b"\x00\x00\x00\x18ftypmp42" * 20)
    await adapter.publish(publish_request(channel("mastodon", CREDENTIALS), "clip", media=(video,)))
    assert poll.call_count == 3
    assert sleep.delays == [1.0, 2.0, 3.0]
    assert sent_json(post)["media_ids"] == ["777"]


async def test_media_processing_is_given_up_after_the_bounded_wait_and_retried(
    network: respx.MockRouter, shelf: MediaShelf, sleep: RecordedSleep
) -> None:
    network.post(f"{BASE}/api/v2/media").mock(
        return_value=httpx.Response(202, json=attachment("778", None, "video"))
    )
    network.get(f"{BASE}/api/v1/media/778").mock(
        return_value=httpx.Response(206, json=attachment("778", None, "video"))
    )
    adapter = MastodonAdapter(read_media=shelf.read, sleep=sleep, media_poll_timeout=10.0)
    video = shelf.add("video", "video/mp4", b"\x00" * 64)
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(
            publish_request(channel("mastodon", CREDENTIALS), "clip", media=(video,))
        )
    await adapter.aclose()
    assert (caught.value.code, caught.value.retryable) == ("provider_unavailable", True)
    assert sleep.delays == [1.0, 2.0, 3.0]  # the next pause (5 s) would pass the 10 s bound
    assert sum(sleep.delays) <= 10.0


async def test_refused_file_is_media_rejected_with_the_instance_reason(
    network: respx.MockRouter, adapter: MastodonAdapter, shelf: MediaShelf
) -> None:
    network.post(f"{BASE}/api/v2/media").mock(
        return_value=httpx.Response(
            422, json={"error": "Validation failed: File content type is invalid, File is invalid"}
        )
    )
    image = shelf.add("image", "image/webp", b"RIFF\x00\x00\x00\x00WEBP")
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(
            publish_request(channel("mastodon", CREDENTIALS), "x", media=(image,))
        )
    assert (caught.value.code, caught.value.retryable) == ("media_rejected", False)
    assert "File content type is invalid" in caught.value.message


async def test_processing_failure_is_media_rejected(
    network: respx.MockRouter, adapter: MastodonAdapter, shelf: MediaShelf
) -> None:
    network.post(f"{BASE}/api/v2/media").mock(
        return_value=httpx.Response(202, json=attachment("779", None, "video"))
    )
    network.get(f"{BASE}/api/v1/media/779").mock(
        return_value=httpx.Response(
            422, json={"error": "Validation failed: File could not be processed"}
        )
    )
    video = shelf.add("video", "video/mp4", b"\x00" * 64)
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(
            publish_request(channel("mastodon", CREDENTIALS), "x", media=(video,))
        )
    assert (caught.value.code, caught.value.retryable) == ("media_rejected", False)
    assert "could not be processed" in caught.value.message


async def test_text_over_the_instance_limit_is_text_rejected(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    network.post(f"{BASE}/api/v1/statuses").mock(
        return_value=httpx.Response(
            422, json={"error": "Validation failed: Text character limit of 500 exceeded"}
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("mastodon", CREDENTIALS), "x" * 501))
    assert (caught.value.code, caught.value.retryable) == ("text_rejected", False)
    assert "character limit of 500" in caught.value.message


async def test_revoked_token_is_auth_expired_and_never_quoted(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    network.post(f"{BASE}/api/v1/statuses").mock(
        return_value=httpx.Response(401, json={"error": f"The access token {TOKEN} is invalid"})
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("mastodon", CREDENTIALS), "x"))
    assert (caught.value.code, caught.value.retryable) == ("auth_expired", False)
    assert TOKEN not in str(caught.value)
    assert "reconnect" in caught.value.message


async def test_rate_limit_waits_until_the_iso_reset_time(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    reset = (datetime.now(UTC) + timedelta(seconds=300)).isoformat(timespec="milliseconds")
    network.post(f"{BASE}/api/v1/statuses").mock(
        return_value=httpx.Response(
            429,
            headers={
                "X-RateLimit-Limit": "300",
                "X-RateLimit-Remaining": "0",
                "X-RateLimit-Reset": reset.replace("+00:00", "Z"),
            },
            json={"error": "Too many requests"},
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("mastodon", CREDENTIALS), "x"))
    assert (caught.value.code, caught.value.retryable) == ("rate_limited", True)
    assert caught.value.retry_after is not None
    assert 295 <= caught.value.retry_after <= 300


async def test_server_error_is_retryable(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    network.post(f"{BASE}/api/v1/statuses").mock(return_value=httpx.Response(503, text="<html>"))
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("mastodon", CREDENTIALS), "x"))
    assert (caught.value.code, caught.value.retryable) == ("provider_unavailable", True)


async def test_first_comment_replies_to_the_post_after_its_thread_with_its_own_key(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    post = network.post(f"{BASE}/api/v1/statuses").mock(
        side_effect=[httpx.Response(200, json=status(str(n))) for n in (100, 101, 102)]
    )
    options = {
        "thread": ["2/2"],
        "firstComment": "Sources: https://example.org/report",
        "visibility": "unlisted",
        "spoilerText": "launch",
        "language": "en",
    }
    result = await adapter.publish(
        publish_request(channel("mastodon", CREDENTIALS), "1/2", options=options)
    )
    common = {"visibility": "unlisted", "spoiler_text": "launch", "language": "en"}
    assert [sent_json(post, n) for n in range(3)] == [
        {"status": "1/2", **common},
        {"status": "2/2", **common, "in_reply_to_id": "100"},
        # A reply to the post itself, not to the thread's last reply.
        {"status": "Sources: https://example.org/report", **common, "in_reply_to_id": "100"},
    ]
    assert [call.request.headers["Idempotency-Key"] for call in post.calls] == [
        IDEMPOTENCY_KEY,
        f"{IDEMPOTENCY_KEY}:thread:1",
        f"{IDEMPOTENCY_KEY}:comment",
    ]
    assert (result.provider_post_id, result.comment_error) == ("100", None)


async def test_a_refused_first_comment_leaves_the_post_published_and_says_why(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    network.post(f"{BASE}/api/v1/statuses").mock(
        side_effect=[
            httpx.Response(200, json=status()),
            httpx.Response(
                422, json={"error": "Validation failed: Text character limit of 500 exceeded"}
            ),
        ]
    )
    result = await adapter.publish(
        publish_request(
            channel("mastodon", CREDENTIALS), "Hello", options={"firstComment": "a" * 501}
        )
    )
    assert result.provider_post_id == STATUS_ID
    error = result.comment_error
    assert error is not None
    assert (error.code, error.retryable) == ("text_rejected", False)
    assert error.message.startswith("The post was published but its first comment was not:")
    assert "character limit of 500" in error.message


async def test_a_malformed_first_comment_fails_before_anything_is_posted(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(
            publish_request(channel("mastodon", CREDENTIALS), "Hello", options={"firstComment": 5})
        )
    assert caught.value.code == "invalid_request"
    assert not network.calls


async def test_thread_replies_chain_with_their_own_idempotency_keys(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    post = network.post(f"{BASE}/api/v1/statuses").mock(
        side_effect=[httpx.Response(200, json=status(str(n))) for n in (100, 101, 102)]
    )
    result = await adapter.publish(
        publish_request(channel("mastodon", CREDENTIALS), "1/3", options={"thread": ["2/3", "3/3"]})
    )
    assert [sent_json(post, n) for n in range(3)] == [
        {"status": "1/3"},
        {"status": "2/3", "in_reply_to_id": "100"},
        {"status": "3/3", "in_reply_to_id": "101"},
    ]
    assert [call.request.headers["Idempotency-Key"] for call in post.calls] == [
        IDEMPOTENCY_KEY,
        f"{IDEMPOTENCY_KEY}:thread:1",
        f"{IDEMPOTENCY_KEY}:thread:2",
    ]
    assert result.provider_post_id == "100"


def instance_v2(max_characters: int = 1000) -> dict[str, Any]:
    """GET /api/v2/instance of an instance whose statuses may be `max_characters` long."""
    return {
        "domain": "fosstodon.example",
        "title": "Fosstodon",
        "version": "4.3.2",
        "configuration": {
            "urls": {"streaming": "wss://fosstodon.example"},
            "accounts": {"max_featured_tags": 10},
            "statuses": {
                "max_characters": max_characters,
                "max_media_attachments": 4,
                "characters_reserved_per_url": 23,
            },
            "media_attachments": {
                "supported_mime_types": ["image/jpeg", "image/png", "video/mp4"],
                "image_size_limit": 16777216,
                "image_matrix_limit": 33177600,
                "video_size_limit": 103809024,
                "video_frame_rate_limit": 120,
                "video_matrix_limit": 8294400,
            },
        },
    }


async def test_instance_limits_come_from_its_v2_configuration(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    network.get(f"{BASE}/api/v2/instance").mock(
        return_value=httpx.Response(200, json=instance_v2())
    )
    limits = await adapter.instance_limits(channel("mastodon", CREDENTIALS))
    assert limits == InstanceLimits(
        max_characters=1000,
        characters_reserved_per_url=23,
        max_media_attachments=4,
        supported_mime_types=("image/jpeg", "image/png", "video/mp4"),
        image_size_limit=16777216,
        video_size_limit=103809024,
    )


async def test_instance_limits_fall_back_to_v1_on_servers_before_4_0(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    network.get(f"{BASE}/api/v2/instance").mock(
        return_value=httpx.Response(404, json={"error": "Record not found"})
    )
    network.get(f"{BASE}/api/v1/instance").mock(
        return_value=httpx.Response(
            200, json={"uri": "fosstodon.example", "version": "3.3.0", "max_toot_chars": 5000}
        )
    )
    limits = await adapter.instance_limits(channel("mastodon", CREDENTIALS))
    assert (limits.max_characters, limits.characters_reserved_per_url) == (5000, 23)


async def test_delete_removes_the_status(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    delete = network.delete(f"{BASE}/api/v1/statuses/{STATUS_ID}").mock(
        return_value=httpx.Response(200, json={**status(), "text": "hello"})
    )
    await adapter.delete(channel("mastodon", CREDENTIALS), STATUS_ID)
    assert delete.called


async def test_deleting_a_status_already_gone_succeeds(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    network.delete(f"{BASE}/api/v1/statuses/{STATUS_ID}").mock(
        return_value=httpx.Response(404, json={"error": "Record not found"})
    )
    await adapter.delete(channel("mastodon", CREDENTIALS), STATUS_ID)


async def test_metrics_map_favourites_reblogs_and_replies(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    network.get(f"{BASE}/api/v1/statuses/{STATUS_ID}").mock(
        return_value=httpx.Response(
            200, json=status(favourites_count=112, reblogs_count=98, replies_count=7)
        )
    )
    metrics = await adapter.fetch_metrics(
        channel("mastodon", CREDENTIALS), STATUS_ID, fixed_clock()
    )
    assert metrics == {"likes": 112, "shares": 98, "comments": 7}


async def test_health_is_healthy_when_the_token_verifies(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    network.get(f"{BASE}/api/v1/accounts/verify_credentials").mock(
        return_value=httpx.Response(200, json={"id": "14715", "username": "alice", "acct": "alice"})
    )
    health = await adapter.check_health(channel("mastodon", CREDENTIALS))
    assert health.state == "healthy"


async def test_health_requires_reconnect_when_the_token_is_revoked(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    network.get(f"{BASE}/api/v1/accounts/verify_credentials").mock(
        return_value=httpx.Response(401, json={"error": "The access token is invalid"})
    )
    health = await adapter.check_health(channel("mastodon", CREDENTIALS))
    assert health.state == "reconnect_required"


async def test_connect_verifies_the_token_and_names_the_account(network: respx.MockRouter) -> None:
    network.get(f"{BASE}/api/v1/accounts/verify_credentials").mock(
        return_value=httpx.Response(200, json={"id": "14715", "username": "alice", "acct": "alice"})
    )
    credentials, handle = await verify_credentials(f"{BASE}/", TOKEN)
    assert credentials == {**CREDENTIALS, "accountId": "14715", "username": "alice"}
    assert handle == "@alice@fosstodon.example"


def test_cli_credentials_require_an_https_instance() -> None:
    assert credentials_from_cli_options("https://Mastodon.Social/", " tok ") == {
        "baseUrl": "https://mastodon.social",
        "accessToken": "tok",
    }
    with pytest.raises(ValueError):
        credentials_from_cli_options("http://mastodon.social", "tok")


async def test_the_limits_a_channel_keeps_are_the_instances_own(
    network: respx.MockRouter, adapter: MastodonAdapter
) -> None:
    network.get(f"{BASE}/api/v2/instance").mock(
        return_value=httpx.Response(200, json=instance_v2(max_characters=5000))
    )
    assert await adapter.read_limits(channel("mastodon", CREDENTIALS)) == {
        "maxCharacters": 5000,
        "charactersReservedPerUrl": 23,
        "maxMediaAttachments": 4,
        "imageSizeLimit": 16777216,
        "videoSizeLimit": 103809024,
    }
