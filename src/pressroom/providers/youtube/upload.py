"""The resumable upload of a video (https://developers.google.com/youtube/v3/guides/using_resumable_upload_protocol).

1. Start: `POST https://www.googleapis.com/upload/youtube/v3/videos?uploadType=resumable
   &part=snippet,status` with the video resource as JSON (`Content-Type: application/json;
   charset=UTF-8`) and `X-Upload-Content-Length` / `X-Upload-Content-Type` for the file -> 200
   with the upload session URI in `Location`.
2. Send: `PUT {session URI}` with the bytes, in chunks whose size is a multiple of 256 KiB (all
   but the last), each with `Content-Range: bytes FIRST-LAST/TOTAL`. A chunk taken in answers
   `308 Resume Incomplete` with `Range: bytes=0-LAST` (what the server holds); the last chunk
   answers 200 or 201 with the video resource.
3. Resume: after a broken connection or a 5xx, `PUT {session URI}` with an empty body and
   `Content-Range: bytes */TOTAL` asks what the server holds (308 with `Range`, or no `Range`
   for nothing; 200/201 when it has the whole file), and the upload goes on from there, not from
   the start. A session the server no longer knows (404) is started again.

Idempotency. YouTube has no idempotency key for videos.insert. The session URI is the handle on
one upload: it is kept, per channel and publish idempotency key, in `UploadSessions` (this
process's memory), so a publish retried in the same process asks the same session what it holds
and either resumes it or, if the upload had completed, gets the finished video back without
uploading it twice. A crash loses the map: the retry starts a new session (see recovery.py for
how a retry then looks for the video an earlier attempt finished).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import MediaReader
from pressroom.providers.http import fixed_chunks
from pressroom.providers.http import response_json
from pressroom.providers.youtube.session import YouTubeSession

UPLOAD_URL = "https://www.googleapis.com/upload/youtube/v3/videos"
# Chunks must be multiples of 256 KiB (the protocol guide); 8 MiB keeps a chunk in memory small
# and the number of requests of a large file reasonable.
CHUNK_UNIT = 256 * 1024
DEFAULT_CHUNK_BYTES = 32 * CHUNK_UNIT
# How many times one attempt asks the session's status and goes on after a failed chunk.
MAX_RESUMES = 3
# Session URIs remembered by this process (a session lives about a week at Google).
MAX_SESSIONS = 1000


class UploadSessions:
    """Upload session URIs by (channel id, publish idempotency key), newest kept."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self._uris: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._limit = limit

    def get(self, key: tuple[str, str]) -> str | None:
        return self._uris.get(key)

    def remember(self, key: tuple[str, str], uri: str) -> None:
        self._uris[key] = uri
        self._uris.move_to_end(key)
        while len(self._uris) > self._limit:
            self._uris.popitem(last=False)

    def forget(self, key: tuple[str, str]) -> None:
        self._uris.pop(key, None)


PROCESS_UPLOADS = UploadSessions()


@dataclass(frozen=True)
class _Held:
    """What the server holds of an upload: `offset` bytes, or the finished `video`."""

    offset: int = 0
    video: dict[str, Any] | None = None


class _SessionGone(Exception):
    """The server no longer knows the upload session."""


@dataclass(frozen=True)
class ResumableUpload:
    session: YouTubeSession
    read_media: MediaReader
    sessions: UploadSessions
    chunk_bytes: int = DEFAULT_CHUNK_BYTES

    async def upload(
        self, item: MediaItem, resource: dict[str, Any], key: tuple[str, str]
    ) -> dict[str, Any]:
        """Upload `item` as a new video described by `resource`; return the video resource."""
        held = _Held()
        uri = self.sessions.get(key)
        if uri is not None:
            try:
                held = await self._status(uri, item.size_bytes)
            except _SessionGone:
                self.sessions.forget(key)
                uri = None
        if uri is None:
            uri = await self._start(item, resource)
            self.sessions.remember(key, uri)
        for resumes in range(MAX_RESUMES + 1):
            if held.video is not None:
                return held.video
            try:
                held = await self._send(uri, item, held.offset)
            except ProviderError as error:
                if not error.retryable or resumes == MAX_RESUMES:
                    raise
                try:
                    held = await self._status(uri, item.size_bytes)
                except _SessionGone:
                    self.sessions.forget(key)
                    raise error from None
        if held.video is not None:
            return held.video
        raise ProviderError(
            "provider_unavailable",
            f"YouTube kept only {held.offset} of {item.size_bytes} bytes of the video after "
            f"{MAX_RESUMES} resumes; the upload will be resumed.",
        )

    async def _start(self, item: MediaItem, resource: dict[str, Any]) -> str:
        action = "starting the video upload"
        response = await self.session.request(
            "POST",
            UPLOAD_URL,
            action,
            params={"uploadType": "resumable", "part": "snippet,status"},
            headers={
                "Content-Type": "application/json; charset=UTF-8",
                "X-Upload-Content-Length": str(item.size_bytes),
                "X-Upload-Content-Type": item.mime_type,
            },
            json=resource,
        )
        if not response.is_success:
            raise self.session.classify(response, action)
        uri = str(response.headers.get("location") or "")
        # The bearer token goes with every chunk: only to Google's upload host.
        if not uri.startswith(UPLOAD_URL + "?"):
            raise ProviderError(
                "provider_unavailable",
                "YouTube started the upload without a session URI on its upload host.",
            )
        return uri

    async def _send(self, uri: str, item: MediaItem, offset: int) -> _Held:
        """Send the file from `offset` on, chunk by chunk, until the server holds it all or
        holds less than was sent (then the caller goes on from what it holds)."""
        total = item.size_bytes
        position = offset
        async for chunk in fixed_chunks(self.read_media(item), self.chunk_bytes, skip=offset):
            last = position + len(chunk) - 1
            action = f"sending bytes {position}-{last} of the video"
            response = await self.session.request(
                "PUT",
                uri,
                action,
                headers={"Content-Range": f"bytes {position}-{last}/{total}"},
                body=_constant(chunk),
            )
            held = self._held(response, action)
            if held.video is not None:
                return held
            position += len(chunk)
            if held.offset != position:
                return held
        if position == total:
            raise ProviderError(
                "provider_unavailable",
                "YouTube took every byte of the video without finishing the upload; it will be "
                "asked again.",
            )
        raise ProviderError(
            "invalid_request",
            f"The stored video file has {position} bytes, not its recorded {total}; upload it "
            "again.",
        )

    async def _status(self, uri: str, total: int) -> _Held:
        action = "asking YouTube how much of the video it holds"
        response = await self.session.request(
            "PUT", uri, action, headers={"Content-Range": f"bytes */{total}"}, body=lambda: b""
        )
        if response.status_code in (404, 410):
            raise _SessionGone
        return self._held(response, action)

    def _held(self, response: httpx.Response, action: str) -> _Held:
        if response.status_code == 308:
            return _Held(offset=_received(response.headers.get("range")))
        if response.is_success:
            video = response_json(response)
            if not isinstance(video.get("id"), str):
                raise ProviderError(
                    "provider_unavailable", "YouTube finished the upload without a video id."
                )
            return _Held(video=video)
        raise self.session.classify(response, action)


def _constant(data: bytes) -> Callable[[], bytes]:
    return lambda: data


def _received(range_header: str | None) -> int:
    """Bytes held according to a 308's `Range: bytes=0-LAST` (none without the header)."""
    if not range_header or "-" not in range_header:
        return 0
    last = range_header.rsplit("-", 1)[1].strip()
    return int(last) + 1 if last.isdigit() else 0
