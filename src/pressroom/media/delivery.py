"""Answering with a stored asset's bytes: the ETag, conditional requests, single byte ranges
(RFC 9110 sections 8.8.3, 13.1.2 and 14) and the streamed body. Shared by the API's
download (`getMediaContent`) and the signed public links networks fetch media from.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import NamedTuple

from starlette.responses import Response
from starlette.responses import StreamingResponse

from pressroom.kit.errors import PressroomError
from pressroom.media import service
from pressroom.media.models import MediaAsset
from pressroom.runtime import Runtime

log = logging.getLogger(__name__)
_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.IGNORECASE)


class ByteRange(NamedTuple):
    """Bytes `start` to `end` of an asset, both included (as `Content-Range` writes them)."""

    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start + 1


def etag_of(asset: MediaAsset) -> str:
    """The quoted SHA-256 of the bytes: an asset's bytes never change, so it is a strong tag."""
    return f'"{asset.sha256}"'


def etag_matches(if_none_match: str, etag: str) -> bool:
    """RFC 9110 weak comparison, as If-None-Match uses."""
    candidates = [tag.strip() for tag in if_none_match.split(",")]
    return any(tag == "*" or tag.removeprefix("W/") == etag for tag in candidates)


def requested_range(
    range_header: str | None, if_range: str | None, etag: str, size: int
) -> ByteRange | None:
    """The single range a `Range` header asks for, or None to send the whole asset: no header,
    one this server ignores (another unit, several ranges, bad syntax: RFC 9110 lets a server
    ignore them and answer 200), or an `If-Range` that names other bytes. A range wholly past
    the end is 416 `range_not_satisfiable` with `Content-Range: bytes */<size>`."""
    if range_header is None or (if_range is not None and if_range.strip() != etag):
        return None
    match = _RANGE.match(range_header)
    if match is None:
        return None
    first, last = match.groups()
    if not first and not last:
        return None
    if not first:
        # `bytes=-N`: the last N bytes.
        suffix = int(last)
        if suffix == 0:
            raise _unsatisfiable(size)
        return ByteRange(max(size - suffix, 0), size - 1)
    start = int(first)
    if last and int(last) < start:
        return None  # invalid syntax: ignored
    if start >= size:
        raise _unsatisfiable(size)
    return ByteRange(start, size - 1 if not last else min(int(last), size - 1))


def _unsatisfiable(size: int) -> PressroomError:
    return PressroomError(
        "range_not_satisfiable",
        detail=f"The requested range starts past the end of the {size}-byte file.",
        headers={"Content-Range": f"bytes */{size}"},
    )


async def asset_response(
    runtime: Runtime,
    asset: MediaAsset,
    headers: dict[str, str],
    *,
    byte_range: ByteRange | None = None,
    head: bool = False,
) -> Response:
    """The asset's bytes (or `byte_range` of them, 206) with `headers` plus Content-Type,
    Content-Length and, for a range, Content-Range; for `head`, the same headers and no body
    (the file is not opened)."""
    headers = dict(headers)
    status = 200
    start, length = 0, asset.size_bytes
    if byte_range is not None:
        status = 206
        start, length = byte_range.start, byte_range.length
        headers["Content-Range"] = f"bytes {byte_range.start}-{byte_range.end}/{asset.size_bytes}"
    headers["Content-Length"] = str(length)
    if head:
        return Response(status_code=status, headers=headers, media_type=asset.mime_type)
    chunks = service.open_media(
        runtime, asset, start=start, length=None if byte_range is None else length
    )
    try:
        # Read the first piece now: a missing object must be a clean 500, not a response cut
        # off after its headers.
        first = await anext(chunks)
    except (FileNotFoundError, StopAsyncIteration):
        await chunks.aclose()
        log.error(
            "stored media file is missing",
            extra={"mediaId": str(asset.id), "storageKey": asset.storage_key},
        )
        raise PressroomError("internal_error") from None
    return StreamingResponse(
        _rest(first, chunks), status_code=status, media_type=asset.mime_type, headers=headers
    )


async def _rest(first: bytes, chunks: AsyncGenerator[bytes, None]) -> AsyncGenerator[bytes, None]:
    async with aclosing(chunks):
        yield first
        async for chunk in chunks:
            yield chunk
