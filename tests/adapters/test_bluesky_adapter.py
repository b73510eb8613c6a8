"""The Bluesky adapter against recorded XRPC exchanges.

Recorded shapes follow the Bluesky HTTP reference (https://docs.bsky.app/docs/category/http-reference):
com.atproto.server.createSession / refreshSession / getSession (accessJwt, refreshJwt, did,
handle, didDoc with the #atproto_pds service), com.atproto.repo.createRecord / getRecord /
deleteRecord / uploadBlob, com.atproto.identity.resolveHandle and app.bsky.feed.getPosts
(postView likeCount, repostCount, replyCount, quoteCount); XRPC errors are
`{"error", "message"}` (https://atproto.com/specs/xrpc), rate limits 429 with a Unix-time
`ratelimit-reset` (https://docs.bsky.app/docs/advanced-guides/rate-limits)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.bluesky import BlueskyAdapter
from pressroom.providers.bluesky import create_session_credentials
from pressroom.providers.bluesky.records import comment_record_key
from pressroom.providers.bluesky.records import record_key
from pressroom.providers.bluesky.records import thread_record_key
from pressroom.providers.credentials import CredentialCache

from .support import IDEMPOTENCY_KEY
from .support import CredentialsLog
from .support import MediaShelf
from .support import channel
from .support import fixed_clock
from .support import png_bytes
from .support import publish_request

SERVICE = "https://bsky.social"
PDS = "https://morel.us-east.host.bsky.network"
DID = "did:plc:z72i7hdynmk6r22z27h6tvur"
RKEY = record_key(IDEMPOTENCY_KEY)
POST_URI = f"at://{DID}/app.bsky.feed.post/{RKEY}"
CID = "bafyreig2fjxi3rptqdgylg7e5hmjl6mcke7rn2b6cugzlqq3i4zu6rq52q"


def session_body(access: str = "access-1", refresh: str = "refresh-1") -> dict[str, Any]:
    return {
        "did": DID,
        "handle": "alice.bsky.social",
        "email": "alice@example.com",
        "emailConfirmed": True,
        "accessJwt": access,
        "refreshJwt": refresh,
        "didDoc": {
            "@context": ["https://www.w3.org/ns/did/v1"],
            "id": DID,
            "alsoKnownAs": ["at://alice.bsky.social"],
            "service": [
                {
                    "id": "#atproto_pds",
                    "type": "AtprotoPersonalDataServer",
                    "serviceEndpoint": PDS,
                }
            ],
        },
        "active": True,
    }


def connected(**extra: str) -> dict[str, Any]:
    """Credentials of a channel that has logged in before."""
    return {
        "identifier": "alice.bsky.social",
        "appPassword": "abcd-efgh-ijkl-mnop",
        "service": SERVICE,
        "did": DID,
        "handle": "alice.bsky.social",
        "accessJwt": "access-1",
        "refreshJwt": "refresh-1",
        "pds": PDS,
        **extra,
    }


def created(uri: str = POST_URI, cid: str = CID) -> httpx.Response:
    return httpx.Response(
        200, json={"uri": uri, "cid": cid, "commit": {"cid": "bafycommit", "rev": "3l"}}
    )


def body_of(route: respx.Route, call: int = 0) -> Any:
    return json.loads(route.calls[call].request.content)


@pytest.fixture
def shelf() -> MediaShelf:
    return MediaShelf()


@pytest.fixture
def log() -> CredentialsLog:
    return CredentialsLog()


@pytest.fixture
async def adapter(shelf: MediaShelf, log: CredentialsLog) -> AsyncIterator[BlueskyAdapter]:
    adapter = BlueskyAdapter(
        read_media=shelf.read,
        on_credentials_changed=log,
        credential_cache=CredentialCache(),
        clock=fixed_clock,
    )
    yield adapter
    await adapter.aclose()


async def test_first_publish_logs_in_and_creates_the_post_under_the_derived_record_key(
    network: respx.MockRouter, adapter: BlueskyAdapter, log: CredentialsLog
) -> None:
    login = network.post(f"{SERVICE}/xrpc/com.atproto.server.createSession").mock(
        return_value=httpx.Response(200, json=session_body())
    )
    create = network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(return_value=created())
    fresh = {"identifier": "alice.bsky.social", "appPassword": "abcd-efgh-ijkl-mnop"}

    result = await adapter.publish(publish_request(channel("bluesky", fresh), "Hello, Bluesky"))

    assert body_of(login) == {"identifier": "alice.bsky.social", "password": "abcd-efgh-ijkl-mnop"}
    assert create.calls[0].request.headers["Authorization"] == "Bearer access-1"
    assert body_of(create) == {
        "repo": DID,
        "collection": "app.bsky.feed.post",
        "rkey": RKEY,
        "record": {
            "$type": "app.bsky.feed.post",
            "text": "Hello, Bluesky",
            "createdAt": "2026-11-22T09:30:00.123Z",
        },
    }
    assert result.provider_post_id == POST_URI
    assert result.url == f"https://bsky.app/profile/alice.bsky.social/post/{RKEY}"
    assert log.reports == [{**connected(), "identifier": "alice.bsky.social", "service": SERVICE}]


async def test_same_idempotency_key_sends_the_same_record_key_twice(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    create = network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(return_value=created())
    request = publish_request(channel("bluesky", connected()), "once")
    await adapter.publish(request)
    await adapter.publish(request)
    assert body_of(create, 0)["rkey"] == body_of(create, 1)["rkey"] == RKEY


async def test_record_already_existing_is_returned_as_published(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        return_value=httpx.Response(
            409, json={"error": "RecordAlreadyExists", "message": "Record already exists"}
        )
    )
    lookup = network.get(f"{PDS}/xrpc/com.atproto.repo.getRecord").mock(
        return_value=httpx.Response(
            200, json={"uri": POST_URI, "cid": CID, "value": {"text": "again"}}
        )
    )
    result = await adapter.publish(publish_request(channel("bluesky", connected()), "again"))
    assert result.provider_post_id == POST_URI
    assert dict(lookup.calls[0].request.url.params) == {
        "repo": DID,
        "collection": "app.bsky.feed.post",
        "rkey": RKEY,
    }


async def test_retry_finds_the_existing_post_and_uploads_nothing(
    network: respx.MockRouter, adapter: BlueskyAdapter, shelf: MediaShelf
) -> None:
    network.get(f"{PDS}/xrpc/com.atproto.repo.getRecord").mock(
        return_value=httpx.Response(200, json={"uri": POST_URI, "cid": CID, "value": {}})
    )
    image = shelf.add("image", "image/png", png_bytes(4, 3))
    request = publish_request(channel("bluesky", connected()), "retried", media=(image,), attempt=2)
    result = await adapter.publish(request)
    assert result.provider_post_id == POST_URI
    assert shelf.reads == 0


async def test_expired_access_token_is_refreshed_and_the_call_sent_again(
    network: respx.MockRouter, adapter: BlueskyAdapter, log: CredentialsLog
) -> None:
    create = network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        side_effect=[
            httpx.Response(400, json={"error": "ExpiredToken", "message": "Token has expired"}),
            created(),
        ]
    )
    refresh = network.post(f"{PDS}/xrpc/com.atproto.server.refreshSession").mock(
        return_value=httpx.Response(200, json=session_body("access-2", "refresh-2"))
    )
    await adapter.publish(publish_request(channel("bluesky", connected()), "hi"))

    assert refresh.calls[0].request.headers["Authorization"] == "Bearer refresh-1"
    assert create.calls[1].request.headers["Authorization"] == "Bearer access-2"
    assert [(r["accessJwt"], r["refreshJwt"]) for r in log.reports] == [("access-2", "refresh-2")]


async def test_a_stale_copy_of_rotated_credentials_uses_the_new_tokens(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    create = network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        side_effect=[
            httpx.Response(400, json={"error": "ExpiredToken", "message": "Token has expired"}),
            created(),
            created(),
        ]
    )
    network.post(f"{PDS}/xrpc/com.atproto.server.refreshSession").mock(
        return_value=httpx.Response(200, json=session_body("access-2", "refresh-2"))
    )
    stale = channel("bluesky", connected())
    await adapter.publish(publish_request(stale, "one"))
    # The caller has not stored the refreshed tokens yet and passes the old copy again.
    await adapter.publish(publish_request(stale, "two", idempotency_key="other"))
    assert create.calls[2].request.headers["Authorization"] == "Bearer access-2"


async def test_spent_refresh_token_falls_back_to_the_app_password(
    network: respx.MockRouter, adapter: BlueskyAdapter, log: CredentialsLog
) -> None:
    network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        side_effect=[
            httpx.Response(400, json={"error": "ExpiredToken", "message": "Token has expired"}),
            created(),
        ]
    )
    network.post(f"{PDS}/xrpc/com.atproto.server.refreshSession").mock(
        return_value=httpx.Response(
            400, json={"error": "ExpiredToken", "message": "Token has been revoked"}
        )
    )
    network.post(f"{SERVICE}/xrpc/com.atproto.server.createSession").mock(
        return_value=httpx.Response(200, json=session_body("access-3", "refresh-3"))
    )
    await adapter.publish(publish_request(channel("bluesky", connected()), "hi"))
    assert log.reports[-1]["accessJwt"] == "access-3"


async def test_revoked_app_password_is_auth_expired_without_the_password_in_the_message(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    network.post(f"{SERVICE}/xrpc/com.atproto.server.createSession").mock(
        return_value=httpx.Response(
            401,
            json={
                "error": "AuthenticationRequired",
                "message": "Invalid identifier or password abcd-efgh-ijkl-mnop",
            },
        )
    )
    fresh = {"identifier": "alice.bsky.social", "appPassword": "abcd-efgh-ijkl-mnop"}
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("bluesky", fresh), "hi"))
    assert caught.value.code == "auth_expired"
    assert caught.value.retryable is False
    assert "abcd-efgh-ijkl-mnop" not in str(caught.value)
    assert "Invalid identifier or password" in caught.value.message


async def test_rate_limit_is_retryable_after_the_reset_time(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    reset = int(time.time()) + 120
    network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        return_value=httpx.Response(
            429,
            headers={
                "ratelimit-limit": "5000",
                "ratelimit-remaining": "0",
                "ratelimit-reset": str(reset),
            },
            json={"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"},
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("bluesky", connected()), "hi"))
    assert caught.value.code == "rate_limited"
    assert caught.value.retryable is True
    assert caught.value.retry_after is not None
    assert 115 <= caught.value.retry_after <= 120


async def test_server_error_without_a_record_is_retryable(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        return_value=httpx.Response(
            500, json={"error": "InternalServerError", "message": "Internal Server Error"}
        )
    )
    network.get(f"{PDS}/xrpc/com.atproto.repo.getRecord").mock(
        return_value=httpx.Response(
            400, json={"error": "RecordNotFound", "message": "Could not locate record"}
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("bluesky", connected()), "hi"))
    assert (caught.value.code, caught.value.retryable) == ("provider_unavailable", True)


async def test_timeout_is_retryable(network: respx.MockRouter, adapter: BlueskyAdapter) -> None:
    network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        side_effect=httpx.ReadTimeout("read timed out")
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("bluesky", connected()), "hi"))
    assert (caught.value.code, caught.value.retryable) == ("timeout", True)


async def test_text_over_the_lexicon_limit_is_text_rejected(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        return_value=httpx.Response(
            400,
            json={
                "error": "InvalidRequest",
                "message": "Invalid app.bsky.feed.post record: Record/text must not be longer "
                "than 300 graphemes",
            },
        )
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(publish_request(channel("bluesky", connected()), "x" * 301))
    assert (caught.value.code, caught.value.retryable) == ("text_rejected", False)
    assert "300 graphemes" in caught.value.message


async def test_post_sends_mention_link_and_tag_facets_on_byte_offsets(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    resolve = network.get(f"{PDS}/xrpc/com.atproto.identity.resolveHandle").mock(
        return_value=httpx.Response(200, json={"did": "did:plc:bobbobbobbob"})
    )
    create = network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(return_value=created())
    text = "🚀 新機能 by @bob.example.com: https://example.com/launch #発表"
    await adapter.publish(publish_request(channel("bluesky", connected()), text))

    assert resolve.calls[0].request.url.params["handle"] == "bob.example.com"
    assert body_of(create)["record"]["facets"] == [
        {
            "index": {"byteStart": 18, "byteEnd": 34},
            "features": [
                {"$type": "app.bsky.richtext.facet#mention", "did": "did:plc:bobbobbobbob"}
            ],
        },
        {
            "index": {"byteStart": 36, "byteEnd": 62},
            "features": [
                {"$type": "app.bsky.richtext.facet#link", "uri": "https://example.com/launch"}
            ],
        },
        {
            "index": {"byteStart": 63, "byteEnd": 70},
            "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": "発表"}],
        },
    ]


async def test_images_are_uploaded_as_blobs_with_alt_text_and_aspect_ratio(
    network: respx.MockRouter, adapter: BlueskyAdapter, shelf: MediaShelf
) -> None:
    first, second = png_bytes(4, 3), png_bytes(2, 5)
    upload = network.post(f"{PDS}/xrpc/com.atproto.repo.uploadBlob").mock(
        side_effect=[
            httpx.Response(200, json={"blob": blob("bafkreiaaa", "image/png", len(first))}),
            httpx.Response(200, json={"blob": blob("bafkreibbb", "image/png", len(second))}),
        ]
    )
    create = network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(return_value=created())
    media = (shelf.add("image", "image/png", first), shelf.add("image", "image/png", second))
    request = publish_request(
        channel("bluesky", connected()),
        "two pictures",
        media=media,
        options={"altTexts": ["A red square", None]},
    )
    await adapter.publish(request)

    assert [call.request.content for call in upload.calls] == [first, second]
    assert upload.calls[0].request.headers["Content-Type"] == "image/png"
    assert body_of(create)["record"]["embed"] == {
        "$type": "app.bsky.embed.images",
        "images": [
            {
                "image": blob("bafkreiaaa", "image/png", len(first)),
                "alt": "A red square",
                "aspectRatio": {"width": 4, "height": 3},
            },
            {
                "image": blob("bafkreibbb", "image/png", len(second)),
                "alt": "",
                "aspectRatio": {"width": 2, "height": 5},
            },
        ],
    }


async def test_video_is_streamed_with_its_length_and_embedded_with_injected_dimensions(
    network: respx.MockRouter, shelf: MediaShelf
) -> None:
    video_bytes = b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 4
    upload = network.post(f"{PDS}/xrpc/com.atproto.repo.uploadBlob").mock(
        return_value=httpx.Response(
            200, json={"blob": blob("bafkreivid", "video/mp4", len(video_bytes))}
        )
    )
    create = network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(return_value=created())
    video = shelf.add("video", "video/mp4", video_bytes)

    async def dimensions(item: Any) -> tuple[int, int]:
        return (1080, 1920)

    adapter = BlueskyAdapter(
        read_media=shelf.read,
        media_dimensions=dimensions,
        credential_cache=CredentialCache(),
        clock=fixed_clock,
    )
    await adapter.publish(
        publish_request(
            channel("bluesky", connected()),
            "watch",
            media=(video,),
            options={"altTexts": {str(video.id): "A short clip"}},
        )
    )
    await adapter.aclose()

    sent = upload.calls[0].request
    assert sent.headers["Content-Length"] == str(len(video_bytes))
    assert sent.headers["Content-Type"] == "video/mp4"
    assert "Transfer-Encoding" not in sent.headers
    assert sent.content == video_bytes
    assert body_of(create)["record"]["embed"] == {
        "$type": "app.bsky.embed.video",
        "video": blob("bafkreivid", "video/mp4", len(video_bytes)),
        "alt": "A short clip",
        "aspectRatio": {"width": 1080, "height": 1920},
    }


async def test_image_over_the_lexicon_size_is_media_rejected_before_any_upload(
    network: respx.MockRouter, adapter: BlueskyAdapter, shelf: MediaShelf
) -> None:
    large = shelf.add("image", "image/jpeg", b"\xff\xd8" + bytes(1_000_000))
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(
            publish_request(channel("bluesky", connected()), "big", media=(large,))
        )
    assert (caught.value.code, caught.value.retryable) == ("media_rejected", False)
    assert "1,000,000 bytes" in caught.value.message


async def test_blob_refused_by_the_pds_is_media_rejected_with_its_reason(
    network: respx.MockRouter, adapter: BlueskyAdapter, shelf: MediaShelf
) -> None:
    network.post(f"{PDS}/xrpc/com.atproto.repo.uploadBlob").mock(
        return_value=httpx.Response(
            400, json={"error": "InvalidRequest", "message": "Unsupported image format"}
        )
    )
    image = shelf.add("image", "image/webp", b"RIFF\x00\x00\x00\x00WEBPVP8 ")
    with pytest.raises(ProviderError) as caught:
        await adapter.publish(
            publish_request(channel("bluesky", connected()), "pic", media=(image,))
        )
    assert (caught.value.code, caught.value.retryable) == ("media_rejected", False)
    assert "Unsupported image format" in caught.value.message


async def test_thread_is_a_reply_chain_with_root_and_parent_strong_refs(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    uris = [
        f"at://{DID}/app.bsky.feed.post/{thread_record_key(IDEMPOTENCY_KEY, n)}" for n in range(3)
    ]
    create = network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        side_effect=[created(uris[n], f"bafycid{n}") for n in range(3)]
    )
    result = await adapter.publish(
        publish_request(channel("bluesky", connected()), "1/3", options={"thread": ["2/3", "3/3"]})
    )
    bodies = [body_of(create, n) for n in range(3)]
    assert [b["rkey"] for b in bodies] == [thread_record_key(IDEMPOTENCY_KEY, n) for n in range(3)]
    assert "reply" not in bodies[0]["record"]
    root = {"uri": uris[0], "cid": "bafycid0"}
    assert bodies[1]["record"]["reply"] == {"root": root, "parent": root}
    assert bodies[2]["record"]["reply"] == {
        "root": root,
        "parent": {"uri": uris[1], "cid": "bafycid1"},
    }
    assert result.provider_post_id == uris[0]


async def test_first_comment_replies_to_the_post_after_its_thread_under_its_own_key(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    reply_uri = f"at://{DID}/app.bsky.feed.post/{thread_record_key(IDEMPOTENCY_KEY, 1)}"
    comment_uri = f"at://{DID}/app.bsky.feed.post/{comment_record_key(IDEMPOTENCY_KEY)}"
    create = network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        side_effect=[created(), created(reply_uri, "bafyreply"), created(comment_uri, "bafyc")]
    )
    options = {"thread": ["2/2"], "firstComment": "Sources below"}
    result = await adapter.publish(
        publish_request(channel("bluesky", connected()), "1/2", options=options)
    )
    comment = body_of(create, 2)
    post = {"uri": POST_URI, "cid": CID}
    assert comment == {
        "repo": DID,
        "collection": "app.bsky.feed.post",
        "rkey": comment_record_key(IDEMPOTENCY_KEY),
        "record": {
            "$type": "app.bsky.feed.post",
            "text": "Sources below",
            "createdAt": "2026-11-22T09:30:00.123Z",
            # Root and parent: the post itself, not the thread's last reply.
            "reply": {"root": post, "parent": post},
        },
    }
    assert len({body_of(create, n)["rkey"] for n in range(3)}) == 3
    assert (result.provider_post_id, result.comment_error) == (POST_URI, None)


async def test_a_retry_finds_the_first_comment_an_earlier_attempt_made(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    comment_uri = f"at://{DID}/app.bsky.feed.post/{comment_record_key(IDEMPOTENCY_KEY)}"
    lookup = network.get(f"{PDS}/xrpc/com.atproto.repo.getRecord").mock(
        side_effect=[
            httpx.Response(200, json={"uri": POST_URI, "cid": CID, "value": {}}),
            httpx.Response(200, json={"uri": comment_uri, "cid": "bafyc", "value": {}}),
        ]
    )
    request = publish_request(
        channel("bluesky", connected()), "Hello", options={"firstComment": "More"}, attempt=2
    )
    result = await adapter.publish(request)
    assert (result.provider_post_id, result.comment_error) == (POST_URI, None)
    assert [call.request.url.params["rkey"] for call in lookup.calls] == [
        RKEY,
        comment_record_key(IDEMPOTENCY_KEY),
    ]


async def test_a_refused_first_comment_leaves_the_post_published_and_says_why(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        side_effect=[
            created(),
            httpx.Response(
                400,
                json={
                    "error": "InvalidRequest",
                    "message": "Invalid app.bsky.feed.post record: Record/text must not be "
                    "longer than 300 graphemes",
                },
            ),
        ]
    )
    result = await adapter.publish(
        publish_request(channel("bluesky", connected()), "Hi", options={"firstComment": "a" * 301})
    )
    assert result.provider_post_id == POST_URI
    error = result.comment_error
    assert error is not None
    assert (error.code, error.retryable) == ("text_rejected", False)
    assert error.message.startswith("The post was published but its first comment was not:")


async def test_delete_removes_the_record(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    delete = network.post(f"{PDS}/xrpc/com.atproto.repo.deleteRecord").mock(
        return_value=httpx.Response(200, json={"commit": {"cid": "bafycommit", "rev": "3m"}})
    )
    await adapter.delete(channel("bluesky", connected()), POST_URI)
    assert body_of(delete) == {"repo": DID, "collection": "app.bsky.feed.post", "rkey": RKEY}


async def test_metrics_map_likes_replies_reposts_and_quotes(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    posts = network.get(f"{PDS}/xrpc/app.bsky.feed.getPosts").mock(
        return_value=httpx.Response(
            200,
            json={
                "posts": [
                    {
                        "uri": POST_URI,
                        "cid": CID,
                        "author": {"did": DID, "handle": "alice.bsky.social"},
                        "record": {"$type": "app.bsky.feed.post", "text": "hi"},
                        "replyCount": 3,
                        "repostCount": 5,
                        "likeCount": 42,
                        "quoteCount": 2,
                        "indexedAt": "2026-11-22T09:30:01.000Z",
                    }
                ]
            },
        )
    )
    metrics = await adapter.fetch_metrics(channel("bluesky", connected()), POST_URI, fixed_clock())
    assert metrics == {"likes": 42, "comments": 3, "shares": 7}
    assert posts.calls[0].request.url.params["uris"] == POST_URI


async def test_metrics_of_a_deleted_post_are_not_found(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    network.get(f"{PDS}/xrpc/app.bsky.feed.getPosts").mock(
        return_value=httpx.Response(200, json={"posts": []})
    )
    with pytest.raises(ProviderError) as caught:
        await adapter.fetch_metrics(channel("bluesky", connected()), POST_URI, fixed_clock())
    assert caught.value.code == "not_found"


async def test_health_is_healthy_with_a_live_session(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    network.get(f"{PDS}/xrpc/com.atproto.server.getSession").mock(
        return_value=httpx.Response(
            200, json={"handle": "alice.bsky.social", "did": DID, "active": True}
        )
    )
    health = await adapter.check_health(channel("bluesky", connected()))
    assert (health.state, health.reason) == ("healthy", None)


async def test_health_requires_reconnect_when_the_app_password_is_revoked(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    network.get(f"{PDS}/xrpc/com.atproto.server.getSession").mock(
        return_value=httpx.Response(
            401, json={"error": "InvalidToken", "message": "Token could not be verified"}
        )
    )
    network.post(f"{SERVICE}/xrpc/com.atproto.server.createSession").mock(
        return_value=httpx.Response(
            401,
            json={"error": "AuthenticationRequired", "message": "Invalid identifier or password"},
        )
    )
    health = await adapter.check_health(channel("bluesky", connected()))
    assert health.state == "reconnect_required"
    assert health.reason is not None and "app password" in health.reason


async def test_connect_logs_in_and_returns_complete_credentials(network: respx.MockRouter) -> None:
    network.post(f"{SERVICE}/xrpc/com.atproto.server.createSession").mock(
        return_value=httpx.Response(200, json=session_body())
    )
    credentials = await create_session_credentials("@alice.bsky.social", "abcd-efgh-ijkl-mnop")
    assert credentials == connected()


def blob(cid: str, mime_type: str, size: int) -> dict[str, Any]:
    return {"$type": "blob", "ref": {"$link": cid}, "mimeType": mime_type, "size": size}


async def test_concurrent_first_publishes_log_in_once(
    network: respx.MockRouter, adapter: BlueskyAdapter
) -> None:
    async def slow_login(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0)  # let the other publishes reach the login meanwhile
        return httpx.Response(200, json=session_body())

    login = network.post(f"{SERVICE}/xrpc/com.atproto.server.createSession").mock(
        side_effect=slow_login
    )
    network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(return_value=created())
    fresh = channel("bluesky", {"identifier": "alice.bsky.social", "appPassword": "pw-1234"})
    await asyncio.gather(
        *(adapter.publish(publish_request(fresh, f"{n}", idempotency_key=str(n))) for n in range(4))
    )
    # createSession is rate limited hard (30 per 5 minutes): one login serves every call.
    assert login.call_count == 1
