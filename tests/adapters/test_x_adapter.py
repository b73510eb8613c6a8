"""The X adapter against recorded X API v2 exchanges.

Recorded shapes follow docs.x.com: x-api/posts/create-post (POST /2/tweets -> 201
`{"data": {"id", "text"}}`), x-api/posts/delete-post, x-api/posts/get-post-by-id with
`tweet.fields=public_metrics`, x-api/users/get-posts (GET /2/users/:id/tweets),
x-api/media/upload-media (simple), x-api/media/quickstart/media-upload-chunked and the
initialize / append / finalize / get-media-upload-status references (INIT, APPEND with
segment_index, FINALIZE and STATUS with processing_info), x-api/media/create-media-metadata
(alt text), fundamentals/rate-limits (429, x-rate-limit-reset Unix seconds,
x-user-limit-24hour-*), response-codes-and-errors (problem JSON; 403 duplicate content), and
the OAuth 2.0 refresh-token flow (POST /2/oauth2/token, grant_type=refresh_token, rotating)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from datetime import UTC
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.x import XAdapter
from pressroom.providers.x import XApp
from pressroom.providers.x import credentials_from_cli_options
from pressroom.providers.x.adapter import normalized_text

from .support import CredentialsLog
from .support import MediaShelf
from .support import RecordedSleep
from .support import channel
from .support import fixed_clock
from .support import multipart_parts
from .support import png_bytes
from .support import publish_request

API = "https://api.x.com"
APP = XApp(client_id="client-id-1", client_secret="client-secret-1")
NOW = fixed_clock().timestamp()
CREDENTIALS = {
    "accessToken": "access-1",
    "refreshToken": "refresh-1",
    "expiresAt": int(NOW) + 3600,
    "scope": "tweet.read tweet.write users.read media.write offline.access",
    "userId": "2244994945",
    "username": "pressroom",
}
POST_ID = "1445880548472328192"


def created(post_id: str = POST_ID, text: str = "Hello") -> httpx.Response:
    return httpx.Response(
        201, json={"data": {"id": post_id, "text": text, "edit_history_tweet_ids": [post_id]}}
    )


def tokens(access: str, refresh: str) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "token_type": "bearer",
            "expires_in": 7200,
            "access_token": access,
            "scope": CREDENTIALS["scope"],
            "refresh_token": refresh,
        },
    )


DUPLICATE = httpx.Response(
    403,
    json={
        "detail": "You are not allowed to create a Tweet with duplicate content.",
        "type": "about:blank",
        "title": "Forbidden",
        "status": 403,
    },
)


def sent_json(route: respx.Route, call: int = 0) -> Any:
    return json.loads(route.calls[call].request.content)


@pytest.fixture
def shelf() -> MediaShelf:
    return MediaShelf()


@pytest.fixture
def log() -> CredentialsLog:
    return CredentialsLog()


@pytest.fixture
def sleep() -> RecordedSleep:
    return RecordedSleep()


@pytest.fixture
async def adapter(
    shelf: MediaShelf, log: CredentialsLog, sleep: RecordedSleep
) -> AsyncIterator[XAdapter]:
    adapter = XAdapter(
        app=APP,
        read_media=shelf.read,
        on_credentials_changed=log,
        credential_cache=CredentialCache(),
        sleep=sleep,
        clock=fixed_clock,
        segment_bytes=10,
    )
    yield adapter
    await adapter.aclose()


async def test_post_is_created_and_its_url_names_the_account(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    post = network.post(f"{API}/2/tweets").mock(return_value=created())
    result = await adapter.publish(
        publish_request(
            channel("x", CREDENTIALS),
            "Hello from Pressroom",
            options={"replySettings": "following"},
        )
    )
    assert post.calls[0].request.headers["Authorization"] == "Bearer access-1"
    assert sent_json(post) == {"text": "Hello from Pressroom", "reply_settings": "following"}
    assert result.provider_post_id == POST_ID
    assert result.url == f"https://x.com/pressroom/status/{POST_ID}"


async def test_token_about_to_expire_is_refreshed_first_and_the_rotated_pair_reported(
    network: respx.MockRouter, adapter: XAdapter, log: CredentialsLog
) -> None:
    refresh = network.post(f"{API}/2/oauth2/token").mock(
        return_value=tokens("access-2", "refresh-2")
    )
    post = network.post(f"{API}/2/tweets").mock(return_value=created())
    expiring = {**CREDENTIALS, "expiresAt": int(NOW) + 30}
    await adapter.publish(publish_request(channel("x", expiring), "hi"))

    form = {k: v[0] for k, v in parse_qs(refresh.calls[0].request.content.decode()).items()}
    assert form == {
        "grant_type": "refresh_token",
        "refresh_token": "refresh-1",
        "client_id": "client-id-1",
    }
    assert post.calls[0].request.headers["Authorization"] == "Bearer access-2"
    assert log.reports == [
        {
            **CREDENTIALS,
            "accessToken": "access-2",
            "refreshToken": "refresh-2",
            "expiresAt": int(NOW) + 7200,
        }
    ]


async def test_unauthorized_call_refreshes_once_and_is_sent_again(
    network: respx.MockRouter, adapter: XAdapter, log: CredentialsLog
) -> None:
    network.post(f"{API}/2/oauth2/token").mock(return_value=tokens("access-2", "refresh-2"))
    post = network.post(f"{API}/2/tweets").mock(
        side_effect=[
            httpx.Response(
                401,
                json={
                    "title": "Unauthorized",
                    "type": "about:blank",
                    "status": 401,
                    "detail": "Unauthorized",
                },
            ),
            created(),
        ]
    )
    await adapter.publish(publish_request(channel("x", CREDENTIALS), "hi"))
    assert [c.request.headers["Authorization"] for c in post.calls] == [
        "Bearer access-1",
        "Bearer access-2",
    ]
    assert log.reports[0]["refreshToken"] == "refresh-2"


async def test_a_stale_copy_does_not_spend_the_rotated_refresh_token_again(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    refresh = network.post(f"{API}/2/oauth2/token").mock(
        return_value=tokens("access-2", "refresh-2")
    )
    post = network.post(f"{API}/2/tweets").mock(side_effect=[created("1"), created("2")])
    stale = channel("x", {**CREDENTIALS, "expiresAt": int(NOW) - 10})
    await adapter.publish(publish_request(stale, "one"))
    await adapter.publish(publish_request(stale, "two", idempotency_key="other"))
    assert refresh.call_count == 1
    assert post.calls[1].request.headers["Authorization"] == "Bearer access-2"


async def test_revoked_refresh_token_is_auth_expired(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    network.post(f"{API}/2/oauth2/token").mock(
        return_value=httpx.Response(
            400,
            json={
                "error": "invalid_request",
                "error_description": "Value passed for the token was invalid.",
            },
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(
            publish_request(channel("x", {**CREDENTIALS, "expiresAt": int(NOW) - 10}), "hi")
        )
    assert (caught.value.code, caught.value.retryable) == ("auth_expired", False)
    assert "refresh-1" not in str(caught.value)


async def test_rate_limit_is_retryable_after_x_rate_limit_reset(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    reset = int(time.time()) + 900
    network.post(f"{API}/2/tweets").mock(
        return_value=httpx.Response(
            429,
            headers={
                "x-rate-limit-limit": "100",
                "x-rate-limit-remaining": "0",
                "x-rate-limit-reset": str(reset),
            },
            json={
                "title": "Too Many Requests",
                "detail": "Too Many Requests",
                "type": "about:blank",
                "status": 429,
            },
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("x", CREDENTIALS), "hi"))
    assert (caught.value.code, caught.value.retryable) == ("rate_limited", True)
    assert caught.value.retry_after is not None
    assert 895 <= caught.value.retry_after <= 900


async def test_the_accounts_daily_post_limit_waits_for_its_own_reset(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    now = int(time.time())
    network.post(f"{API}/2/tweets").mock(
        return_value=httpx.Response(
            429,
            headers={
                "x-rate-limit-reset": str(now + 60),
                "x-user-limit-24hour-limit": "17",
                "x-user-limit-24hour-remaining": "0",
                "x-user-limit-24hour-reset": str(now + 40_000),
            },
            json={
                "title": "Too Many Requests",
                "detail": "Too Many Requests",
                "type": "about:blank",
                "status": 429,
            },
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("x", CREDENTIALS), "hi"))
    assert caught.value.retry_after is not None and caught.value.retry_after > 39_000
    assert "24-hour" in caught.value.message


async def test_image_is_uploaded_in_one_request_with_its_alt_text(
    network: respx.MockRouter, adapter: XAdapter, shelf: MediaShelf
) -> None:
    image_bytes = png_bytes(4, 3)
    upload = network.post(f"{API}/2/media/upload").mock(
        return_value=httpx.Response(
            200,
            json={
                "data": {
                    "id": "1880028106020515840",
                    "media_key": "3_1880028106020515840",
                    "size": len(image_bytes),
                    "expires_after_secs": 86400,
                }
            },
        )
    )
    metadata = network.post(f"{API}/2/media/metadata").mock(
        return_value=httpx.Response(
            200,
            json={
                "data": {
                    "id": "1880028106020515840",
                    "associated_metadata": {"alt_text": {"text": "A red rectangle"}},
                }
            },
        )
    )
    post = network.post(f"{API}/2/tweets").mock(return_value=created())
    image = shelf.add("image", "image/png", image_bytes)
    await adapter.publish(
        publish_request(
            channel("x", CREDENTIALS),
            "look",
            media=(image,),
            options={"altTexts": ["A red rectangle"]},
        )
    )
    parts = multipart_parts(upload.calls[0].request)
    assert parts["media_category"].data == b"tweet_image"
    assert parts["media_type"].data == b"image/png"
    assert parts["media"].data == image_bytes
    assert sent_json(metadata) == {
        "id": "1880028106020515840",
        "metadata": {"alt_text": {"text": "A red rectangle"}},
    }
    assert sent_json(post) == {"text": "look", "media": {"media_ids": ["1880028106020515840"]}}


async def test_video_goes_through_init_append_finalize_and_status_in_order(
    network: respx.MockRouter, adapter: XAdapter, shelf: MediaShelf, sleep: RecordedSleep
) -> None:
    media_id = "1146654567674912769"
    video_bytes = bytes(range(25))  # three segments of 10, 10 and 5 bytes
    init = network.post(f"{API}/2/media/upload/initialize").mock(
        return_value=httpx.Response(
            200,
            json={
                "data": {"id": media_id, "media_key": f"7_{media_id}", "expires_after_secs": 86400}
            },
        )
    )
    append = network.post(f"{API}/2/media/upload/{media_id}/append").mock(
        return_value=httpx.Response(200, json={"data": {"expires_at": 1_800_000_000}})
    )
    network.post(f"{API}/2/media/upload/{media_id}/finalize").mock(
        return_value=httpx.Response(
            200,
            json={
                "data": {
                    "id": media_id,
                    "media_key": f"7_{media_id}",
                    "size": 25,
                    "expires_after_secs": 86400,
                    "processing_info": {"state": "pending", "check_after_secs": 1},
                }
            },
        )
    )
    status = network.get(f"{API}/2/media/upload").mock(
        side_effect=[
            httpx.Response(
                200,
                json={
                    "data": {
                        "id": media_id,
                        "processing_info": {
                            "state": "in_progress",
                            "check_after_secs": 3,
                            "progress_percent": 40,
                        },
                    }
                },
            ),
            httpx.Response(
                200,
                json={
                    "data": {
                        "id": media_id,
                        "processing_info": {"state": "succeeded", "progress_percent": 100},
                    }
                },
            ),
        ]
    )
    post = network.post(f"{API}/2/tweets").mock(return_value=created())
    video = shelf.add("video", "video/mp4", video_bytes)
    await adapter.publish(publish_request(channel("x", CREDENTIALS), "clip", media=(video,)))

    assert sent_json(init) == {
        "media_type": "video/mp4",
        "total_bytes": 25,
        "media_category": "tweet_video",
    }
    segments = [multipart_parts(call.request) for call in append.calls]
    assert [p["segment_index"].data for p in segments] == [b"0", b"1", b"2"]
    assert [p["media"].data for p in segments] == [
        video_bytes[:10],
        video_bytes[10:20],
        video_bytes[20:],
    ]
    assert [dict(call.request.url.params) for call in status.calls] == [
        {"command": "STATUS", "media_id": media_id}
    ] * 2
    assert sleep.delays == [1.0, 3.0]
    sequence = [(call.request.method, call.request.url.path) for call in network.calls]
    assert sequence == [
        ("POST", "/2/media/upload/initialize"),
        ("POST", f"/2/media/upload/{media_id}/append"),
        ("POST", f"/2/media/upload/{media_id}/append"),
        ("POST", f"/2/media/upload/{media_id}/append"),
        ("POST", f"/2/media/upload/{media_id}/finalize"),
        ("GET", "/2/media/upload"),
        ("GET", "/2/media/upload"),
        ("POST", "/2/tweets"),
    ]
    assert sent_json(post)["media"] == {"media_ids": [media_id]}


async def test_gif_is_a_chunked_upload_in_the_gif_category(
    network: respx.MockRouter, adapter: XAdapter, shelf: MediaShelf
) -> None:
    init = network.post(f"{API}/2/media/upload/initialize").mock(
        return_value=httpx.Response(200, json={"data": {"id": "55"}})
    )
    network.post(f"{API}/2/media/upload/55/append").mock(
        return_value=httpx.Response(200, json={"data": {"expires_at": 1}})
    )
    network.post(f"{API}/2/media/upload/55/finalize").mock(
        return_value=httpx.Response(
            200, json={"data": {"id": "55", "processing_info": {"state": "succeeded"}}}
        )
    )
    network.post(f"{API}/2/tweets").mock(return_value=created())
    gif = shelf.add("gif", "image/gif", b"GIF89a" + b"\x00" * 4)
    await adapter.publish(publish_request(channel("x", CREDENTIALS), "loop", media=(gif,)))
    assert sent_json(init)["media_category"] == "tweet_gif"


async def test_video_x_cannot_process_is_media_rejected_with_its_reason(
    network: respx.MockRouter, adapter: XAdapter, shelf: MediaShelf
) -> None:
    network.post(f"{API}/2/media/upload/initialize").mock(
        return_value=httpx.Response(200, json={"data": {"id": "77"}})
    )
    network.post(f"{API}/2/media/upload/77/append").mock(
        return_value=httpx.Response(200, json={"data": {"expires_at": 1}})
    )
    network.post(f"{API}/2/media/upload/77/finalize").mock(
        return_value=httpx.Response(
            200,
            json={
                "data": {
                    "id": "77",
                    "processing_info": {
                        "state": "failed",
                        "progress_percent": 0,
                        "error": {
                            "code": 1,
                            "name": "InvalidMedia",
                            "message": "Unsupported video format",
                        },
                    },
                }
            },
        )
    )
    video = shelf.add("video", "video/mp4", b"\x00" * 8)
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("x", CREDENTIALS), "x", media=(video,)))
    assert (caught.value.code, caught.value.retryable) == ("media_rejected", False)
    assert "Unsupported video format" in caught.value.message


async def test_upload_refused_at_init_is_media_rejected(
    network: respx.MockRouter, adapter: XAdapter, shelf: MediaShelf
) -> None:
    network.post(f"{API}/2/media/upload/initialize").mock(
        return_value=httpx.Response(
            400,
            json={
                "errors": [{"message": "total_bytes exceeds the limit for tweet_video"}],
                "title": "Invalid Request",
                "detail": "One or more parameters to your request was invalid.",
                "type": "https://api.x.com/2/problems/invalid-request",
            },
        )
    )
    video = shelf.add("video", "video/mp4", b"\x00" * 8)
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("x", CREDENTIALS), "x", media=(video,)))
    assert (caught.value.code, caught.value.retryable) == ("media_rejected", False)
    assert "exceeds the limit" in caught.value.message


async def test_text_too_long_is_text_rejected(network: respx.MockRouter, adapter: XAdapter) -> None:
    network.post(f"{API}/2/tweets").mock(
        return_value=httpx.Response(
            400,
            json={
                "errors": [
                    {
                        "message": "Your Tweet text is too long. For more information on "
                        "how Twitter determines text length see "
                        "https://github.com/twitter/twitter-text."
                    }
                ],
                "title": "Invalid Request",
                "detail": "One or more parameters to your request was invalid.",
                "type": "https://api.x.com/2/problems/invalid-request",
            },
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("x", CREDENTIALS), "x" * 300))
    assert (caught.value.code, caught.value.retryable) == ("text_rejected", False)


async def test_thread_is_a_chain_of_replies(network: respx.MockRouter, adapter: XAdapter) -> None:
    post = network.post(f"{API}/2/tweets").mock(
        side_effect=[created("10"), created("11"), created("12")]
    )
    result = await adapter.publish(
        publish_request(channel("x", CREDENTIALS), "1/3", options={"thread": ["2/3", "3/3"]})
    )
    assert [sent_json(post, n) for n in range(3)] == [
        {"text": "1/3"},
        {"text": "2/3", "reply": {"in_reply_to_tweet_id": "10"}},
        {"text": "3/3", "reply": {"in_reply_to_tweet_id": "11"}},
    ]
    assert result.provider_post_id == "10"


async def test_first_comment_replies_to_the_post_after_its_thread(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    post = network.post(f"{API}/2/tweets").mock(
        side_effect=[created("10"), created("11"), created("12")]
    )
    options = {"thread": ["2/2"], "firstComment": "Sources below", "replySettings": "following"}
    result = await adapter.publish(
        publish_request(channel("x", CREDENTIALS), "1/2", options=options)
    )
    assert [sent_json(post, n) for n in range(3)] == [
        {"text": "1/2", "reply_settings": "following"},
        {"text": "2/2", "reply_settings": "following", "reply": {"in_reply_to_tweet_id": "10"}},
        # A reply to the post itself, not to the thread's last reply.
        {
            "text": "Sources below",
            "reply_settings": "following",
            "reply": {"in_reply_to_tweet_id": "10"},
        },
    ]
    assert all(call.request.headers["Authorization"] == "Bearer access-1" for call in post.calls)
    assert (result.provider_post_id, result.comment_error) == ("10", None)


async def test_a_refused_first_comment_leaves_the_post_published_and_says_why(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    network.post(f"{API}/2/tweets").mock(
        side_effect=[
            created(),
            httpx.Response(
                403,
                json={
                    "detail": "You are not permitted to perform this action.",
                    "type": "about:blank",
                    "title": "Forbidden",
                    "status": 403,
                },
            ),
        ]
    )
    result = await adapter.publish(
        publish_request(channel("x", CREDENTIALS), "Hello", options={"firstComment": "More"})
    )
    assert result.provider_post_id == POST_ID
    assert result.url == f"https://x.com/pressroom/status/{POST_ID}"
    error = result.comment_error
    assert error is not None
    assert error.message.startswith("The post was published but its first comment was not:")
    assert "not permitted" in error.message


async def test_a_retried_publish_finds_the_first_comment_an_earlier_attempt_made(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    # The earlier attempt posted both, then its outcome was lost: both are duplicates now.
    post = network.post(f"{API}/2/tweets").mock(return_value=DUPLICATE)
    network.get(f"{API}/2/users/2244994945/tweets").mock(
        return_value=httpx.Response(
            200,
            json={
                "data": [
                    {
                        "id": "21",
                        "text": "More",
                        "referenced_tweets": [{"type": "replied_to", "id": "20"}],
                    },
                    {"id": "20", "text": "Hello"},
                ],
                "meta": {"result_count": 2},
            },
        )
    )
    result = await adapter.publish(
        publish_request(
            channel("x", CREDENTIALS), "Hello", options={"firstComment": "More"}, attempt=2
        )
    )
    assert (result.provider_post_id, result.comment_error) == ("20", None)
    assert sent_json(post, 1) == {"text": "More", "reply": {"in_reply_to_tweet_id": "20"}}
    assert len(post.calls) == 2


async def test_duplicate_on_a_first_attempt_is_permanent_duplicate_content(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    network.post(f"{API}/2/tweets").mock(return_value=DUPLICATE)
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("x", CREDENTIALS), "same again"))
    assert (caught.value.code, caught.value.retryable) == ("duplicate_content", False)


async def test_duplicate_on_a_retry_returns_the_post_the_earlier_attempt_made(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    network.post(f"{API}/2/tweets").mock(return_value=DUPLICATE)
    timeline = network.get(f"{API}/2/users/2244994945/tweets").mock(
        return_value=httpx.Response(
            200,
            json={
                "data": [
                    {
                        "id": "999",
                        "text": "Unrelated",
                        "created_at": "2026-11-22T09:00:00.000Z",
                        "edit_history_tweet_ids": ["999"],
                    },
                    {
                        "id": POST_ID,
                        "text": "Launch &amp; learn: https://t.co/AbCdEf https://t.co/media1",
                        "created_at": "2026-11-22T09:29:58.000Z",
                        "edit_history_tweet_ids": [POST_ID],
                    },
                ],
                "meta": {"result_count": 2, "newest_id": "999", "oldest_id": POST_ID},
            },
        )
    )
    result = await adapter.publish(
        publish_request(
            channel("x", CREDENTIALS), "Launch & learn: https://example.com/launch", attempt=2
        )
    )
    assert result.provider_post_id == POST_ID
    assert timeline.calls[0].request.url.params["exclude"] == "retweets"


async def test_duplicate_on_a_retry_with_no_matching_post_stays_duplicate_content(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    network.post(f"{API}/2/tweets").mock(return_value=DUPLICATE)
    network.get(f"{API}/2/users/2244994945/tweets").mock(
        return_value=httpx.Response(200, json={"meta": {"result_count": 0}})
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("x", CREDENTIALS), "text", attempt=3))
    assert caught.value.code == "duplicate_content"


def test_duplicate_matching_ignores_entities_links_and_spacing() -> None:
    assert normalized_text("A &amp; B https://t.co/x\n") == normalized_text("A & B   http://a.b/c")


async def test_delete_removes_the_post(network: respx.MockRouter, adapter: XAdapter) -> None:
    delete = network.delete(f"{API}/2/tweets/{POST_ID}").mock(
        return_value=httpx.Response(200, json={"data": {"deleted": True}})
    )
    await adapter.delete(channel("x", CREDENTIALS), POST_ID)
    assert delete.called


async def test_public_metrics_are_mapped_to_canonical_keys(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    lookup = network.get(f"{API}/2/tweets/{POST_ID}").mock(
        return_value=httpx.Response(
            200,
            json={
                "data": {
                    "id": POST_ID,
                    "text": "Hello",
                    "edit_history_tweet_ids": [POST_ID],
                    "public_metrics": {
                        "retweet_count": 4,
                        "reply_count": 3,
                        "like_count": 25,
                        "quote_count": 1,
                        "bookmark_count": 2,
                        "impression_count": 1200,
                    },
                }
            },
        )
    )
    metrics = await adapter.fetch_metrics(
        channel("x", CREDENTIALS), POST_ID, datetime(2026, 11, 22, tzinfo=UTC)
    )
    assert metrics == {"impressions": 1200, "likes": 25, "comments": 3, "shares": 5, "saves": 2}
    assert lookup.calls[0].request.url.params["tweet.fields"] == "public_metrics"


async def test_metrics_of_a_deleted_post_are_not_found(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    network.get(f"{API}/2/tweets/{POST_ID}").mock(
        return_value=httpx.Response(
            200,
            json={
                "errors": [
                    {
                        "value": POST_ID,
                        "detail": f"Could not find tweet with id: [{POST_ID}].",
                        "parameter": "id",
                        "resource_type": "tweet",
                        "title": "Not Found Error",
                        "type": "https://api.twitter.com/2/problems/resource-not-found",
                    }
                ]
            },
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.fetch_metrics(channel("x", CREDENTIALS), POST_ID, fixed_clock())
    assert caught.value.code == "not_found"


async def test_health_is_healthy_when_the_account_can_be_read(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    network.get(f"{API}/2/users/me").mock(
        return_value=httpx.Response(
            200, json={"data": {"id": "2244994945", "username": "pressroom"}}
        )
    )
    assert (await adapter.check_health(channel("x", CREDENTIALS))).state == "healthy"


async def test_health_requires_reconnect_when_the_grant_is_revoked(
    network: respx.MockRouter, adapter: XAdapter
) -> None:
    network.get(f"{API}/2/users/me").mock(
        return_value=httpx.Response(401, json={"title": "Unauthorized", "status": 401})
    )
    network.post(f"{API}/2/oauth2/token").mock(
        return_value=httpx.Response(400, json={"error": "invalid_request"})
    )
    health = await adapter.check_health(channel("x", CREDENTIALS))
    assert health.state == "reconnect_required"


def test_cli_credentials_hold_the_tokens_and_their_expiry() -> None:
    assert credentials_from_cli_options(
        "access", "refresh", expires_in=7200, user_id="1", username="@acct", clock=lambda: 100.0
    ) == {
        "accessToken": "access",
        "refreshToken": "refresh",
        "expiresAt": 7300,
        "userId": "1",
        "username": "acct",
    }
