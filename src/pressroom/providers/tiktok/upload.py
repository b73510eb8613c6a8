"""Sending a video's bytes to the `upload_url` a FILE_UPLOAD init returned.

Chunk rules (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide):
- `total_chunk_count` = `video_size` / `chunk_size`, rounded down; the last chunk carries the
  trailing bytes, so it may be larger than `chunk_size` (up to 128 MB);
- each chunk is at least 5 MB and at most 64 MB, except the last;
- a video under 5 MB goes whole, `chunk_size` = its size; one over 64 MB in several chunks;
- 1 to 1000 chunks, sent in order, each `PUT {upload_url}` with `Content-Type` (the video's
  type), `Content-Length` and `Content-Range: bytes {first}-{last}/{total}`. TikTok answers 206
  while chunks are missing and 201 once the file is whole.

Pressroom sends 10,000,000-byte chunks (TikTok's own example size: above 5 MB read either way,
below 64 MB): a 4 GB video makes 400 chunks, and a video of up to 10 MB goes whole.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import MediaReader
from pressroom.providers.http import provider_request
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure
from pressroom.providers.tiktok.errors import PROVIDER

DEFAULT_CHUNK_BYTES = 10_000_000
MAX_CHUNKS = 1000
# The largest ordinary chunk, read in the smaller (decimal) unit so TikTok never finds it over.
MAX_CHUNK_BYTES = 64_000_000


@dataclass(frozen=True)
class ChunkPlan:
    video_size: int
    chunk_size: int
    total_chunk_count: int

    @classmethod
    def for_size(cls, size: int, preferred: int = DEFAULT_CHUNK_BYTES) -> ChunkPlan:
        if size <= 0:
            raise ProviderError("media_rejected", "The video file is empty.")
        chunk = min(max(preferred, math.ceil(size / MAX_CHUNKS)), MAX_CHUNK_BYTES)
        if size <= chunk:
            return cls(size, size, 1)
        return cls(size, chunk, size // chunk)

    def ranges(self) -> list[tuple[int, int]]:
        """(first byte, last byte) of each chunk; the last runs to the end of the file."""
        starts = [index * self.chunk_size for index in range(self.total_chunk_count)]
        ends = [start - 1 for start in starts[1:]] + [self.video_size - 1]
        return list(zip(starts, ends, strict=True))

    def source_info(self) -> dict[str, object]:
        return {
            "source": "FILE_UPLOAD",
            "video_size": self.video_size,
            "chunk_size": self.chunk_size,
            "total_chunk_count": self.total_chunk_count,
        }


async def _chunks(stream: AsyncIterator[bytes], plan: ChunkPlan) -> AsyncIterator[bytes]:
    """The stored file cut along the plan's ranges, holding one chunk in memory at a time."""
    pending = bytearray()
    for first, last in plan.ranges():
        wanted = last - first + 1
        while len(pending) < wanted:
            piece = await anext(stream, None)
            if piece is None:
                break
            pending += piece
        if len(pending) < wanted:
            raise _size_mismatch(plan, "fewer")
        yield bytes(pending[:wanted])
        del pending[:wanted]
    if pending or await anext(stream, None) is not None:
        raise _size_mismatch(plan, "more")


def _size_mismatch(plan: ChunkPlan, which: str) -> ProviderError:
    return ProviderError(
        "invalid_request",
        f"The stored video has {which} bytes than its recorded size ({plan.video_size}); "
        "upload it again.",
    )


async def send_chunks(
    http: httpx.AsyncClient,
    upload_url: str,
    item: MediaItem,
    plan: ChunkPlan,
    read_media: MediaReader,
) -> None:
    """PUT every chunk of `item` to `upload_url`, in order."""
    ranges = plan.ranges()
    index = 0
    async for chunk in _chunks(read_media(item), plan):
        first, last = ranges[index]
        index += 1
        action = f"uploading chunk {index} of {plan.total_chunk_count} of the video"
        response = await provider_request(
            http,
            "PUT",
            upload_url,
            provider=PROVIDER,
            action=action,
            headers={
                "Content-Type": item.mime_type,
                "Content-Length": str(len(chunk)),
                "Content-Range": f"bytes {first}-{last}/{plan.video_size}",
            },
            content=chunk,
        )
        if response.is_success:
            continue
        detail = safe_detail(response.text, (upload_url,))
        error = status_failure(response, PROVIDER, action, detail)
        if error.code == "invalid_request":
            raise ProviderError("media_rejected", f"TikTok refused the video: {error.message}")
        raise error
