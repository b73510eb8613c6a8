"""The TikTok adapter posting: a video sent in chunks or pulled from a signed link, photos,
the creator info checks made before anything is sent, and the publishing status polled until
TikTok publishes or refuses the post."""

from __future__ import annotations

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.tiktok import TikTokAdapter
from pressroom.providers.tiktok.upload import ChunkPlan

from .support import FIXED_NOW
from .support import CredentialsLog
from .support import MediaShelf
from .support import RecordedSleep
from .support import publish_request
from .tiktok_support import CHANNEL
from .tiktok_support import CONTENT_INIT_URL
from .tiktok_support import CREATOR_URL
from .tiktok_support import PUBLISH_ID
from .tiktok_support import STATUS_URL
from .tiktok_support import TOKEN
from .tiktok_support import UPLOAD_URL
from .tiktok_support import VIDEO_ID
from .tiktok_support import VIDEO_INIT_URL
from .tiktok_support import adapter_fixture  # noqa: F401
from .tiktok_support import body
from .tiktok_support import build_adapter
from .tiktok_support import creator_info
from .tiktok_support import failed
from .tiktok_support import log_fixture  # noqa: F401
from .tiktok_support import ok
from .tiktok_support import shelf_fixture  # noqa: F401
from .tiktok_support import signed_url
from .tiktok_support import sleep_fixture  # noqa: F401
from .tiktok_support import status

VIDEO = bytes(range(25))


def mock_video_post(network: respx.MockRouter) -> tuple[respx.Route, respx.Route, respx.Route]:
    creator = network.post(CREATOR_URL).mock(return_value=creator_info())
    init = network.post(VIDEO_INIT_URL).mock(
        return_value=ok({"publish_id": PUBLISH_ID, "upload_url": UPLOAD_URL})
    )
    upload = network.put(UPLOAD_URL).mock(side_effect=[httpx.Response(206), httpx.Response(201)])
    return creator, init, upload


async def test_a_video_is_uploaded_in_chunks_and_polled_until_published(
    network: respx.MockRouter, adapter: TikTokAdapter, shelf: MediaShelf, sleep: RecordedSleep
) -> None:
    creator, init, upload = mock_video_post(network)
    poll = network.post(STATUS_URL).mock(
        side_effect=[
            status("PROCESSING_UPLOAD"),
            status("PUBLISH_COMPLETE", post_ids=[int(VIDEO_ID)]),
        ]
    )
    video = shelf.add("video", "video/mp4", VIDEO)

    result = await adapter.publish(publish_request(CHANNEL, "Launch day #news", media=(video,)))

    assert creator.calls[0].request.headers["authorization"] == f"Bearer {TOKEN}"
    assert body(init.calls[0].request) == {
        "post_info": {
            "title": "Launch day #news",
            "privacy_level": "SELF_ONLY",
            "disable_comment": False,
            "disable_duet": False,
            "disable_stitch": False,
        },
        "source_info": {
            "source": "FILE_UPLOAD",
            "video_size": 25,
            "chunk_size": 10,
            "total_chunk_count": 2,
        },
    }
    # 25 bytes in chunks of 10: two chunks, the trailing 5 bytes go with the last one.
    first, last = (call.request for call in upload.calls)
    assert "authorization" not in first.headers
    assert first.headers["content-range"] == "bytes 0-9/25"
    assert first.headers["content-type"] == "video/mp4"
    assert first.headers["content-length"] == "10"
    assert first.content == VIDEO[:10]
    assert last.headers["content-range"] == "bytes 10-24/25"
    assert last.content == VIDEO[10:]
    assert [body(call.request) for call in poll.calls] == [{"publish_id": PUBLISH_ID}] * 2
    assert sleep.delays == [5.0]
    assert result.provider_post_id == VIDEO_ID
    assert result.url == f"https://www.tiktok.com/@pressroom.news/video/{VIDEO_ID}"
    assert result.published_at == FIXED_NOW


async def test_a_small_video_goes_in_one_chunk_of_its_own_size(
    network: respx.MockRouter, shelf: MediaShelf, log: CredentialsLog, sleep: RecordedSleep
) -> None:
    adapter = build_adapter(shelf, log, sleep, chunk_bytes=10_000_000)
    network.post(CREATOR_URL).mock(return_value=creator_info())
    init = network.post(VIDEO_INIT_URL).mock(
        return_value=ok({"publish_id": PUBLISH_ID, "upload_url": UPLOAD_URL})
    )
    upload = network.put(UPLOAD_URL).mock(return_value=httpx.Response(201))
    network.post(STATUS_URL).mock(return_value=status("PUBLISH_COMPLETE"))
    video = shelf.add("video", "video/mp4", VIDEO)

    result = await adapter.publish(publish_request(CHANNEL, "Short", media=(video,)))

    assert body(init.calls[0].request)["source_info"]["chunk_size"] == 25
    assert body(init.calls[0].request)["source_info"]["total_chunk_count"] == 1
    assert upload.calls[0].request.headers["content-range"] == "bytes 0-24/25"
    # A private post gets no public id: its publish id stands for it, and it has no page.
    assert result.provider_post_id == PUBLISH_ID
    assert result.url is None


async def test_a_video_is_pulled_from_its_signed_link_when_the_domain_is_verified(
    network: respx.MockRouter, shelf: MediaShelf, log: CredentialsLog, sleep: RecordedSleep
) -> None:
    adapter = build_adapter(shelf, log, sleep, pull_from_url=True, audited=True)
    network.post(CREATOR_URL).mock(return_value=creator_info())
    init = network.post(VIDEO_INIT_URL).mock(return_value=ok({"publish_id": PUBLISH_ID}))
    network.post(STATUS_URL).mock(return_value=status("PUBLISH_COMPLETE", post_ids=[int(VIDEO_ID)]))
    video = shelf.add("video", "video/mp4", VIDEO)

    await adapter.publish(publish_request(CHANNEL, "Pulled", media=(video,)))

    sent = body(init.calls[0].request)
    assert sent["source_info"] == {"source": "PULL_FROM_URL", "video_url": await signed_url(video)}
    # Audited, without options.privacyLevel: the most public level the account allows.
    assert sent["post_info"]["privacy_level"] == "PUBLIC_TO_EVERYONE"
    assert shelf.reads == 0


async def test_photos_are_posted_from_signed_links_with_title_and_description(
    network: respx.MockRouter, adapter: TikTokAdapter, shelf: MediaShelf
) -> None:
    network.post(CREATOR_URL).mock(return_value=creator_info(comment_disabled=True))
    init = network.post(CONTENT_INIT_URL).mock(
        return_value=ok({"publish_id": "p_pub_url~v2.123456789"})
    )
    network.post(STATUS_URL).mock(return_value=status("PUBLISH_COMPLETE", post_ids=[int(VIDEO_ID)]))
    first = shelf.add("image", "image/jpeg", b"jpeg-1")
    second = shelf.add("image", "image/webp", b"webp-2")
    request = publish_request(
        CHANNEL, "Behind the scenes", media=(first, second), options={"title": "Backstage"}
    )

    result = await adapter.publish(request)

    assert body(init.calls[0].request) == {
        "post_info": {
            "title": "Backstage",
            "description": "Behind the scenes",
            "privacy_level": "SELF_ONLY",
            # The account turned comments off: the post keeps them off.
            "disable_comment": True,
        },
        "source_info": {
            "source": "PULL_FROM_URL",
            "photo_cover_index": 0,
            "photo_images": [await signed_url(first), await signed_url(second)],
        },
        "post_mode": "DIRECT_POST",
        "media_type": "PHOTO",
    }
    assert result.url == f"https://www.tiktok.com/@pressroom.news/photo/{VIDEO_ID}"


@pytest.mark.parametrize(
    ("options", "audited", "message"),
    [
        (
            {"privacyLevel": "PUBLIC_TO_EVERYONE"},
            False,
            "options.privacyLevel: this deployment's TikTok app is not audited",
        ),
        (
            {"privacyLevel": "FOLLOWER_OF_CREATOR"},
            True,
            "options.privacyLevel: the account allows only PUBLIC_TO_EVERYONE, "
            "MUTUAL_FOLLOW_FRIENDS, SELF_ONLY, not FOLLOWER_OF_CREATOR.",
        ),
        ({"disableDuet": False}, False, "options.disableDuet: the account has duets turned off"),
    ],
)
async def test_an_option_the_account_cannot_use_is_refused_before_anything_is_sent(
    network: respx.MockRouter,
    shelf: MediaShelf,
    log: CredentialsLog,
    sleep: RecordedSleep,
    options: dict[str, object],
    audited: bool,
    message: str,
) -> None:
    adapter = build_adapter(shelf, log, sleep, audited=audited)
    network.post(CREATOR_URL).mock(return_value=creator_info(duet_disabled=True))
    video = shelf.add("video", "video/mp4", VIDEO)

    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(CHANNEL, "No", media=(video,), options=options))

    assert caught.value.code == "invalid_request"
    assert not caught.value.retryable
    assert caught.value.message.startswith(message)
    assert shelf.reads == 0


async def test_a_post_tiktok_fails_surfaces_its_fail_reason(
    network: respx.MockRouter, adapter: TikTokAdapter, shelf: MediaShelf
) -> None:
    mock_video_post(network)
    network.post(STATUS_URL).mock(return_value=status("FAILED", reason="frame_rate_check_failed"))
    video = shelf.add("video", "video/mp4", VIDEO)

    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(CHANNEL, "Broken", media=(video,)))

    assert caught.value.code == "media_rejected"
    assert "frame_rate_check_failed" in caught.value.message


async def test_a_retry_after_the_polling_budget_resumes_the_same_post(
    network: respx.MockRouter, adapter: TikTokAdapter, shelf: MediaShelf, sleep: RecordedSleep
) -> None:
    creator, init, upload = mock_video_post(network)
    poll = network.post(STATUS_URL).mock(
        side_effect=[
            status("PROCESSING_UPLOAD"),
            status("PROCESSING_UPLOAD"),
            status("PROCESSING_UPLOAD"),
            status("PUBLISH_COMPLETE", post_ids=[int(VIDEO_ID)]),
        ]
    )
    video = shelf.add("video", "video/mp4", VIDEO)

    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(CHANNEL, "Slow", media=(video,)))
    assert caught.value.code == "provider_unavailable"
    assert caught.value.retryable
    assert sleep.delays == [5.0, 5.0]

    result = await adapter.publish(publish_request(CHANNEL, "Slow", media=(video,), attempt=2))

    assert result.provider_post_id == VIDEO_ID
    assert (creator.call_count, init.call_count, upload.call_count) == (1, 1, 2)
    assert poll.call_count == 4


@pytest.mark.parametrize(
    ("code", "ours", "retryable"),
    [
        ("spam_risk_too_many_posts", "rate_limited", True),
        ("spam_risk_text", "text_rejected", False),
        ("url_ownership_unverified", "invalid_request", False),
        ("privacy_level_option_mismatch", "invalid_request", False),
        ("spam_risk_user_banned_from_posting", "permission_denied", False),
    ],
)
async def test_an_init_tiktok_refuses_is_classified_in_its_own_words(
    network: respx.MockRouter,
    adapter: TikTokAdapter,
    shelf: MediaShelf,
    code: str,
    ours: str,
    retryable: bool,
) -> None:
    network.post(CREATOR_URL).mock(return_value=creator_info())
    network.post(VIDEO_INIT_URL).mock(
        return_value=failed(code, "The request was refused for its content.", status=403)
    )
    video = shelf.add("video", "video/mp4", VIDEO)

    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(CHANNEL, "Refused", media=(video,)))

    assert (caught.value.code, caught.value.retryable) == (ours, retryable)
    assert code in caught.value.message
    assert "The request was refused for its content." in caught.value.message


async def test_photos_need_signed_links(
    network: respx.MockRouter, shelf: MediaShelf, log: CredentialsLog, sleep: RecordedSleep
) -> None:
    adapter = build_adapter(shelf, log, sleep, media_url=None)
    network.post(CREATOR_URL).mock(return_value=creator_info())
    image = shelf.add("image", "image/jpeg", b"jpeg")

    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(CHANNEL, "Photo", media=(image,)))

    assert caught.value.code == "invalid_request"
    assert "public link" in caught.value.message


async def test_a_chunk_tiktok_refuses_is_a_media_rejection(
    network: respx.MockRouter, adapter: TikTokAdapter, shelf: MediaShelf
) -> None:
    network.post(CREATOR_URL).mock(return_value=creator_info())
    network.post(VIDEO_INIT_URL).mock(
        return_value=ok({"publish_id": PUBLISH_ID, "upload_url": UPLOAD_URL})
    )
    network.put(UPLOAD_URL).mock(return_value=httpx.Response(400, text="Content-Range invalid"))
    video = shelf.add("video", "video/mp4", VIDEO)

    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(CHANNEL, "Bad", media=(video,)))

    assert caught.value.code == "media_rejected"
    assert "Content-Range invalid" in caught.value.message


@pytest.mark.parametrize(
    ("size", "chunk_size", "count", "last"),
    [
        # TikTok's own example: 50,000,123 bytes in 10,000,000-byte chunks, the 123 trailing
        # bytes merged into the fifth chunk.
        (50_000_123, 10_000_000, 5, (40_000_000, 50_000_122)),
        (4_000_000, 4_000_000, 1, (0, 3_999_999)),
        (15_000_000, 10_000_000, 1, (0, 14_999_999)),
        (4_000_000_000, 10_000_000, 400, (3_990_000_000, 3_999_999_999)),
    ],
)
def test_chunk_plans_follow_the_media_transfer_rules(
    size: int, chunk_size: int, count: int, last: tuple[int, int]
) -> None:
    plan = ChunkPlan.for_size(size)
    assert (plan.chunk_size, plan.total_chunk_count) == (chunk_size, count)
    assert plan.ranges()[-1] == last
    assert len(plan.ranges()) == count
