"""Shared adapter plumbing: rate-limit headers, error text hygiene, streamed multipart bodies
and the per-process cache of rotated credentials."""

from __future__ import annotations

import asyncio
import email.utils
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
import respx

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.http import FilePart
from pressroom.providers.http import multipart_body
from pressroom.providers.http import retry_after_seconds
from pressroom.providers.http import safe_detail
from pressroom.providers.http import transport_failure
from pressroom.providers.options import alt_texts
from pressroom.providers.options import thread_texts
from pressroom.providers.x import XAdapter
from pressroom.providers.x import XApp

from .support import MediaShelf
from .support import channel
from .support import fixed_clock
from .support import multipart_parts
from .support import publish_request

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "120"}, 120.0),
        ({"Retry-After": email.utils.formatdate(NOW + 90, usegmt=True)}, 90.0),
        ({"x-rate-limit-reset": str(int(NOW) + 900)}, 900.0),  # X: Unix time
        ({"ratelimit-reset": str(int(NOW) + 45)}, 45.0),  # Bluesky: Unix time
        ({"RateLimit-Reset": "30"}, 30.0),  # IETF draft: seconds
        ({"X-RateLimit-Reset": "2027-01-15T08:00:10.000Z"}, 10.0),  # Mastodon: ISO 8601
        ({"x-rate-limit-reset": str(int(NOW) - 5)}, 0.0),  # already past
        ({"Retry-After": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_reads_each_providers_reset_header(
    headers: dict[str, str], expected: float | None
) -> None:
    # NOW is 2027-01-15T08:00:00Z.
    assert retry_after_seconds(httpx.Headers(headers), now=NOW) == expected


def test_retry_after_header_wins_over_the_reset_header() -> None:
    headers = httpx.Headers({"Retry-After": "5", "x-rate-limit-reset": str(int(NOW) + 900)})
    assert retry_after_seconds(headers, now=NOW) == 5.0


def test_safe_detail_redacts_known_secrets_and_bearer_tokens_and_bounds_length() -> None:
    detail = safe_detail(
        "token s3cr3t-token rejected\n(Authorization: Bearer abc.def.ghi) " + "x" * 400,
        ("s3cr3t-token", None),
    )
    assert "s3cr3t-token" not in detail
    assert "abc.def.ghi" not in detail
    assert "\n" not in detail
    assert len(detail) <= 300


def test_transport_failure_quotes_no_url() -> None:
    request = httpx.Request("GET", "https://api.example/?access_token=leaky")
    error = transport_failure(
        httpx.ConnectError("boom https://api.example/?access_token=leaky", request=request),
        "X",
        "posting",
    )
    assert error.code == "provider_unavailable" and error.retryable
    assert "leaky" not in str(error)


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(data), 3):
        yield data[start : start + 3]


async def _collect(stream: AsyncIterator[bytes]) -> bytes:
    return b"".join([chunk async for chunk in stream])


async def test_multipart_body_has_an_exact_length_and_parses_back() -> None:
    data = b"\x00\x01binary\r\n--not-a-boundary\xff" * 5
    body = multipart_body(
        [("description", "Ünïcode alt")],
        FilePart("file", "a.png", "image/png", len(data), lambda: _chunks(data)),
    )
    content = await _collect(body.open())
    assert int(body.headers["Content-Length"]) == len(content)
    request = httpx.Request("POST", "https://x.invalid/", headers=body.headers, content=content)
    parts = multipart_parts(request)
    assert parts["description"].data == "Ünïcode alt".encode()
    assert (parts["file"].filename, parts["file"].content_type) == ("a.png", "image/png")
    assert parts["file"].data == data


async def test_multipart_body_refuses_a_file_shorter_than_announced() -> None:
    body = multipart_body([], FilePart("file", "a", "image/png", 10, lambda: _chunks(b"12345")))
    with pytest.raises(ProviderError) as caught:
        await _collect(body.open())
    assert caught.value.code == "invalid_request"


def test_cache_hands_out_rotated_credentials_until_the_caller_catches_up() -> None:
    cache = CredentialCache()
    stale = channel("x", {"accessToken": "a1", "refreshToken": "r1"})
    cache.remember(stale, "r1", {"accessToken": "a2", "refreshToken": "r2"})
    cache.remember(stale, "r2", {"accessToken": "a3", "refreshToken": "r3"})
    assert cache.current(stale, "refreshToken")["accessToken"] == "a3"
    assert (
        cache.current(channel("x", {"accessToken": "a2", "refreshToken": "r2"}), "refreshToken")[
            "accessToken"
        ]
        == "a3"
    )
    caught_up = channel("x", {"accessToken": "a3", "refreshToken": "r3"})
    assert cache.current(caught_up, "refreshToken")["accessToken"] == "a3"
    # Once the caller holds the newest copy the cache forgets the channel.
    assert cache.current(stale, "refreshToken")["accessToken"] == "a1"


async def test_concurrent_calls_with_an_expired_token_refresh_once(
    network: respx.MockRouter,
) -> None:
    async def slow_refresh(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0)  # let the other calls reach the refresh meanwhile
        return httpx.Response(
            200,
            json={
                "token_type": "bearer",
                "expires_in": 7200,
                "access_token": "a2",
                "refresh_token": "r2",
            },
        )

    refresh = network.post("https://api.x.com/2/oauth2/token").mock(side_effect=slow_refresh)
    network.post("https://api.x.com/2/tweets").mock(
        return_value=httpx.Response(201, json={"data": {"id": "1", "text": "t"}})
    )
    shelf = MediaShelf()
    adapter = XAdapter(
        app=XApp(client_id="c"),
        read_media=shelf.read,
        credential_cache=CredentialCache(),
        clock=fixed_clock,
    )
    expired = channel("x", {"accessToken": "a1", "refreshToken": "r1", "expiresAt": 0})
    await asyncio.gather(
        *(
            adapter.publish(publish_request(expired, f"post {n}", idempotency_key=str(n)))
            for n in range(5)
        )
    )
    await adapter.aclose()
    assert refresh.call_count == 1


def _item(n: int) -> MediaItem:
    return MediaItem(uuid.UUID(int=n), "image", "image/png", 1, f"k{n}")


def test_alt_texts_by_position_or_by_media_id() -> None:
    media = [_item(1), _item(2)]
    assert alt_texts({"altTexts": ["one"]}, media) == ["one", None]
    assert alt_texts({"altTexts": {str(media[1].id): "two"}}, media) == [None, "two"]
    assert alt_texts({}, media) == [None, None]
    with pytest.raises(ProviderError):
        alt_texts({"altTexts": ["a", "b", "c"]}, media)


def test_thread_texts_must_be_non_empty_strings() -> None:
    assert thread_texts({"thread": ["a", "b"]}) == ["a", "b"]
    with pytest.raises(ProviderError):
        thread_texts({"thread": ["a", ""]})
