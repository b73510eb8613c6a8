"""HTTP plumbing shared by the real provider adapters.

One client shape (timeouts sized for media uploads, no redirects followed, a plain user agent)
and the adapter base that owns it, one way to send a request to a provider, one way to read a
provider's rate-limit headers, one translation of transport failures and of HTTP statuses into
`ProviderError`, a scrubber that keeps tokens out of error messages, the budget that bounds a
publish's polling, and a streaming multipart body so that a 100 MB video is never held in
memory to be uploaded.
"""

from __future__ import annotations

import email.utils
import math
import re
import secrets
import time
import uuid
from collections.abc import AsyncIterable
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import TypedDict

import httpx

from pressroom.kit.logs import scrub
from pressroom.kit.outbound.api import DEFAULT_TIMEOUT
from pressroom.kit.outbound.api import USER_AGENT
from pressroom.kit.outbound.api import tls_context
from pressroom.kit.outbound.transport import RefusedDestination
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError

__all__ = [
    "DEFAULT_TIMEOUT",
    "USER_AGENT",
    "RefusedDestination",
    "tls_context",
]

# Media bytes come from the media domain, through a callable the caller injects (the adapter
# never knows where files are stored): `read_media(item)` yields the stored file's bytes.
MediaReader = Callable[[MediaItem], AsyncIterator[bytes]]
# The channel's organization's media item of an id, or None when it names none: for media an
# option names besides the target's own (YouTube's custom thumbnail), `await find_media(id)`.
MediaLookup = Callable[[uuid.UUID], Awaitable[MediaItem | None]]
# A signed, expiring public URL of a stored asset, for networks that fetch media from a URL
# (Instagram, Threads, Facebook video, Pinterest, TikTok's pull-from-URL): `await media_url(item)`.
PublicMediaUrl = Callable[[MediaItem], Awaitable[str]]
# Waiting between polls of a provider's media processing. Injected so tests never sleep.
Sleep = Callable[[float], Awaitable[None]]


class FormFields(TypedDict, total=False):
    """What a request to an API of query and form fields sends besides its method and URL:
    `params` (the query) and `data` (the form)."""

    params: Mapping[str, str] | None
    data: Mapping[str, str] | None


@dataclass(frozen=True)
class Polling:
    """How a publish waits for a network to process its media: `sleep` `interval` seconds
    between polls, `budget` seconds in all (each network says what happens past it)."""

    sleep: Sleep
    interval: float
    budget: float


@dataclass
class PollBudget:
    """The waiting one publish may still do under its `polling` (every poll of the publish
    shares it)."""

    polling: Polling
    spent: float = field(default=0.0)

    async def wait(self) -> bool:
        """Sleep one interval if the budget allows it; False when it is spent."""
        interval = self.polling.interval
        if self.spent + interval > self.polling.budget:
            return False
        await self.polling.sleep(interval)
        self.spent += interval
        return True


# Provider error text quoted in our messages is cut here: enough to act on, never a dump.
MAX_DETAIL_LENGTH = 300
# Numeric reset headers above this are Unix times (2001-09-09 onwards), below it are delays.
_EPOCH_THRESHOLD = 1_000_000_000


def build_client(
    *,
    timeout: httpx.Timeout = DEFAULT_TIMEOUT,
    transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    """The client every adapter uses unless it is given one (pass a shared client to keep
    connections alive between calls).

    Redirects are not followed: an API that redirects a write is misconfigured, and following
    it would resend the bearer token to wherever it points."""
    return httpx.AsyncClient(
        timeout=timeout,
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT},
        transport=transport,
        verify=tls_context(),
    )


@asynccontextmanager
async def given_or_own_client(http: httpx.AsyncClient | None) -> AsyncIterator[httpx.AsyncClient]:
    """For one call made outside an adapter: `http` if given (left open for its owner), else a
    client built for the call and closed after it."""
    if http is not None:
        yield http
        return
    client = build_client()
    try:
        yield client
    finally:
        await client.aclose()


class HttpAdapter:
    """The base of an adapter that talks HTTP to its network: it uses the client it is given
    (shared, closed by its owner) or builds one of its own, which `aclose` closes."""

    def __init__(self, http: httpx.AsyncClient | None) -> None:
        self._owns_http = http is None
        self._http = http or build_client()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()


async def provider_request(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    provider: str,
    action: str,
    bearer: str | None = None,
    headers: Mapping[str, str] | None = None,
    **options: Any,
) -> httpx.Response:
    """`http.request(method, url, **options)`, authorised by the `bearer` token when one is
    given. The answer is returned whatever its status; no answer at all is raised as
    `transport_failure` while `action`."""
    sent = {"Authorization": f"Bearer {bearer}"} if bearer is not None else {}
    sent.update(headers or {})
    try:
        return await http.request(method, url, headers=sent, **options)
    except httpx.HTTPError as exc:
        raise transport_failure(exc, provider, action) from None


def retry_after_seconds(headers: httpx.Headers, *, now: float | None = None) -> float | None:
    """Seconds to wait before retrying, from whichever header the provider sent.

    `Retry-After` (RFC 9110: seconds or an HTTP date) wins; then the reset headers: X's
    `x-rate-limit-reset` and Bluesky's `ratelimit-reset` are Unix times, the IETF draft's
    `RateLimit-Reset` is a delay in seconds, Mastodon's `X-RateLimit-Reset` is an ISO 8601
    time. None when the provider said nothing usable."""
    current = time.time() if now is None else now
    retry_after = headers.get("retry-after")
    if retry_after:
        seconds = _delay_or_time(retry_after.strip(), current)
        if seconds is not None:
            return seconds
    for name in ("x-rate-limit-reset", "ratelimit-reset", "x-ratelimit-reset"):
        value = headers.get(name)
        if value:
            seconds = _delay_or_time(value.strip(), current)
            if seconds is not None:
                return seconds
    return None


def _delay_or_time(value: str, now: float) -> float | None:
    try:
        number = float(value)
    except ValueError:
        number = None
    if number is not None:
        if not math.isfinite(number) or number < 0:
            return None
        if number >= _EPOCH_THRESHOLD:
            return max(0.0, round(number - now, 3))
        return number
    moment = _parse_time(value)
    if moment is None:
        return None
    return max(0.0, round(moment.timestamp() - now, 3))


def _parse_time(value: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def safe_detail(text: object, secrets_: Iterable[str | None] = ()) -> str:
    """Provider text made fit for an error message: one line, bounded, and with every known
    secret (and anything that looks like a bearer token or API key) replaced."""
    detail = " ".join(str(text).split())
    for secret in secrets_:
        if secret and len(secret) >= 4:
            detail = detail.replace(secret, "[redacted]")
    detail = scrub(detail)
    if len(detail) > MAX_DETAIL_LENGTH:
        detail = detail[: MAX_DETAIL_LENGTH - 1] + "…"
    return detail


def transport_failure(exc: httpx.HTTPError, provider: str, action: str) -> ProviderError:
    """A request that got no HTTP answer. Only the exception's type is quoted: its text can
    carry the URL, and some providers take tokens in query strings. A refused destination is
    permanent and says why (its reason is ours: a host name and the kind of address)."""
    refused = exc.__cause__
    if isinstance(refused, RefusedDestination):
        return ProviderError(
            "invalid_request",
            f"{provider} was not contacted while {action}: {refused.reason}. Only public "
            "addresses are reached.",
        )
    if isinstance(exc, httpx.TimeoutException):
        return ProviderError(
            "timeout", f"{provider} did not answer in time while {action}; it will be retried."
        )
    return ProviderError(
        "provider_unavailable",
        f"Could not reach {provider} while {action} ({type(exc).__name__}); it will be retried.",
    )


def rate_limited(
    provider: str, action: str, headers: httpx.Headers, detail: str = ""
) -> ProviderError:
    """A 429 (or a provider's rate-limit error): retryable after the provider's reset."""
    wait = retry_after_seconds(headers)
    when = f"; retry in {math.ceil(wait)} s" if wait is not None else ""
    said = f": {detail}" if detail else ""
    message = f"{provider} rate limit reached while {action}{when}{said}"
    return ProviderError("rate_limited", message, retry_after=wait)


def token_rejected(
    provider: str, action: str, detail: str, *, unsaid: str = "unauthorized"
) -> ProviderError:
    """`auth_expired` for a token the network refused (`unsaid` stands for a reason it did not
    give): only reconnecting the channel helps."""
    return ProviderError(
        "auth_expired",
        f"{provider} rejected the channel's token while {action} ({detail or unsaid}). "
        "Reconnect the channel.",
    )


def status_failure(
    response: httpx.Response, provider: str, action: str, detail: str
) -> ProviderError:
    """The default reading of an HTTP error status, for what a provider-specific classifier
    did not recognise. `detail` must already be safe (see `safe_detail`)."""
    status = response.status_code
    said = f": {detail}" if detail else ""
    if status == 429:
        return rate_limited(provider, action, response.headers, detail)
    if status == 401:
        return ProviderError(
            "auth_expired",
            f"{provider} rejected the channel's credentials while {action}{said}. "
            "Reconnect the channel.",
        )
    if status == 403:
        return ProviderError(
            "permission_denied",
            f"{provider} refused {action} for this account{said}. Check the account's "
            "permissions and the app's access level.",
        )
    if status == 404:
        return ProviderError("not_found", f"{provider} found nothing while {action}{said}")
    if status == 413:
        return ProviderError("media_rejected", f"{provider} refused the upload as too large{said}")
    if status in (408, 425) or status >= 500:
        return ProviderError(
            "provider_unavailable",
            f"{provider} failed while {action} (HTTP {status}){said}; it will be retried.",
            retry_after=retry_after_seconds(response.headers),
        )
    return ProviderError(
        "invalid_request", f"{provider} rejected the request while {action} (HTTP {status}){said}"
    )


def response_json(response: httpx.Response) -> dict[str, object]:
    """The body as a JSON object, or {} (an empty body, HTML from a proxy, a JSON array)."""
    if not response.content:
        return {}
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


# --- multipart/form-data, streamed ------------------------------------------------------------

_UNSAFE_HEADER_CHARS = re.compile(r'["\\\r\n]')


@dataclass(frozen=True)
class FilePart:
    """The file of a multipart body: `open()` streams its `size` bytes (called once per send,
    so a body sent again re-reads the file)."""

    field: str
    filename: str
    mime_type: str
    size: int
    open: Callable[[], AsyncIterable[bytes]]


@dataclass(frozen=True)
class MultipartBody:
    """Headers fixed once (boundary, exact Content-Length); `open()` gives a fresh stream."""

    headers: dict[str, str]
    open: Callable[[], AsyncIterator[bytes]]


def multipart_body(fields: Iterable[tuple[str, str]], file: FilePart) -> MultipartBody:
    """A multipart/form-data body (RFC 7578) whose file part is streamed, with an exact
    Content-Length computed up front (some APIs refuse chunked uploads).

    The text fields come first, then the file. If the stream yields a different number of
    bytes than announced, the upload is aborted rather than sent corrupt."""
    boundary = "pressroom-" + secrets.token_hex(16)
    head = bytearray()
    for name, value in fields:
        head += f"--{boundary}\r\n".encode()
        head += f'Content-Disposition: form-data; name="{_header_value(name)}"\r\n\r\n'.encode()
        head += value.encode() + b"\r\n"
    head += f"--{boundary}\r\n".encode()
    head += (
        f'Content-Disposition: form-data; name="{_header_value(file.field)}"; '
        f'filename="{_header_value(file.filename)}"\r\n'
        f"Content-Type: {_header_value(file.mime_type)}\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    length = len(head) + file.size + len(tail)

    async def stream() -> AsyncIterator[bytes]:
        yield bytes(head)
        async for chunk in sized_stream(file.open(), file.size):
            yield chunk
        yield tail

    return MultipartBody(
        headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Content-Length": str(length),
        },
        open=stream,
    )


async def fixed_chunks(
    chunks: AsyncIterable[bytes], size: int, *, skip: int = 0
) -> AsyncIterator[bytes]:
    """`chunks` from byte `skip` on (the bytes before it are read and dropped: media is read
    as a stream), re-cut into chunks of exactly `size` bytes, the last one shorter."""
    skipped = 0
    buffer = bytearray()
    async for data in chunks:
        if skipped < skip:
            take = min(len(data), skip - skipped)
            skipped += take
            data = data[take:]
        buffer += data
        while len(buffer) >= size:
            yield bytes(buffer[:size])
            del buffer[:size]
    if buffer:
        yield bytes(buffer)


async def sized_stream(chunks: AsyncIterable[bytes], size: int) -> AsyncIterator[bytes]:
    """`chunks`, checked to total exactly `size` bytes: a body sent with a Content-Length must
    not come up short or run over, so a file that changed in storage aborts the upload."""
    sent = 0
    async for chunk in chunks:
        sent += len(chunk)
        if sent > size:
            break
        yield chunk
    if sent != size:
        raise ProviderError(
            "invalid_request",
            f"The stored media file has {'more' if sent > size else 'fewer'} bytes than its "
            f"recorded size ({size}); upload it again.",
        )


def _header_value(value: str) -> str:
    return _UNSAFE_HEADER_CHARS.sub("_", value)


async def single_chunk(data: bytes) -> AsyncIterator[bytes]:
    """Bytes already in memory, as the stream `FilePart` expects."""
    yield data


async def read_all(chunks: AsyncIterable[bytes], *, limit: int) -> bytes:
    """A whole (small) file in memory, refusing to hold more than `limit` bytes."""
    data = bytearray()
    async for chunk in chunks:
        data += chunk
        if len(data) > limit:
            raise ProviderError(
                "media_rejected", f"The media file is larger than {limit} bytes allowed here."
            )
    return bytes(data)


async def public_link(media_url: PublicMediaUrl | None, item: MediaItem, fetcher: str) -> str:
    """`item`'s signed public link, for a network that fetches media from one; `fetcher` says
    what it fetches ("Pinterest fetches images") when this process cannot make such links."""
    if media_url is None:
        raise ProviderError(
            "invalid_request",
            f"{fetcher} from a public link, and public media links are unavailable in this "
            "process (configure public media links to publish media).",
        )
    return await media_url(item)


def media_filename(item: MediaItem) -> str:
    """A neutral file name for an upload: the asset id and the extension of its real type."""
    extension = {
        "image/jpeg": "jpg",
        "image/png": "png",
        "image/webp": "webp",
        "image/gif": "gif",
        "video/mp4": "mp4",
        "video/quicktime": "mov",
        "video/webm": "webm",
    }.get(item.mime_type, "bin")
    return f"{item.id}.{extension}"
