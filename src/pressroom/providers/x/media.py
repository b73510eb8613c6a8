"""Media uploads to X (API v2, https://docs.x.com/x-api/media/introduction).

- Images (JPEG, PNG, WebP): one request, `POST /2/media/upload` (multipart: `media`,
  `media_category=tweet_image`, `media_type`) -> `{"data": {"id", "media_key", ...}}`
  (https://docs.x.com/x-api/media/upload-media).
- GIFs and videos: the chunked upload (https://docs.x.com/x-api/media/quickstart/media-upload-chunked):
  INIT `POST /2/media/upload/initialize` (JSON `media_type`, `total_bytes`, `media_category`
  `tweet_gif` or `tweet_video`) -> `data.id`; APPEND `POST /2/media/upload/{id}/append`
  (multipart: `segment_index` from 0, `media` = the segment, at most 5 MB: Pressroom sends 4 MiB
  segments) for each segment; FINALIZE `POST /2/media/upload/{id}/finalize` -> `data` with a
  `processing_info` when X still transcodes; STATUS `GET /2/media/upload?command=STATUS&media_id=`
  until `processing_info.state` is `succeeded` (waiting `check_after_secs` between checks, bounded
  in total) or `failed` (`media_rejected`, with X's `error.message`).
- Alt text: `POST /2/media/metadata` `{"id", "metadata": {"alt_text": {"text"}}}`, at most 1000
  characters, for images and GIFs (https://docs.x.com/x-api/media/create-media-metadata); a
  video's alt text is not sent.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY
from dataclasses import dataclass
from typing import Any

import httpx

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import FilePart
from pressroom.providers.http import MediaReader
from pressroom.providers.http import Sleep
from pressroom.providers.http import fixed_chunks
from pressroom.providers.http import media_filename
from pressroom.providers.http import multipart_body
from pressroom.providers.http import response_json
from pressroom.providers.http import single_chunk
from pressroom.providers.x.session import XSession

# APPEND segments must be at most 5 MB; 4 MiB leaves room for the multipart envelope.
DEFAULT_SEGMENT_BYTES = 4 * 1024 * 1024
# segment_index is 0..999 (append reference page).
MAX_SEGMENTS = 1000
MAX_ALT_TEXT = 1000
# Between STATUS checks: X's check_after_secs, kept within these bounds.
MIN_CHECK_AFTER = 1.0
MAX_CHECK_AFTER = 30.0
DEFAULT_PROCESSING_TIMEOUT = 300.0
_CATEGORIES = {"image": "tweet_image", "gif": "tweet_gif", "video": "tweet_video"}


@dataclass(frozen=True)
class MediaUploader:
    """Uploads media through one channel's session."""

    session: XSession
    read_media: MediaReader
    sleep: Sleep
    _: KW_ONLY
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    processing_timeout: float = DEFAULT_PROCESSING_TIMEOUT

    async def upload(self, item: MediaItem, alt: str | None, position: int) -> str:
        """Upload one media item (with its alt text) and return its media id."""
        label = f"media {position + 1} ({item.id})"
        if item.kind == "image":
            media_id, processing = await self._simple(item, label)
        else:
            media_id, processing = await self._chunked(item, label)
        if processing:
            await self._wait_processed(media_id, processing, label)
        # X takes alt text for images and GIFs only (media metadata reference).
        if alt and item.kind in ("image", "gif"):
            await self.session.call(
                "POST",
                "/2/media/metadata",
                f"setting the alt text of {label}",
                json={"id": media_id, "metadata": {"alt_text": {"text": alt[:MAX_ALT_TEXT]}}},
            )
        return media_id

    async def _simple(self, item: MediaItem, label: str) -> tuple[str, dict[str, Any] | None]:
        action = f"uploading {label}"
        upload = multipart_body(
            [("media_category", _CATEGORIES["image"]), ("media_type", item.mime_type)],
            FilePart(
                "media",
                media_filename(item),
                item.mime_type,
                item.size_bytes,
                lambda: self.read_media(item),
            ),
        )
        response = await self.session.request(
            "POST", "/2/media/upload", action, headers=upload.headers, body=upload.open
        )
        return self._media_answer(response, action, label)

    async def _chunked(self, item: MediaItem, label: str) -> tuple[str, dict[str, Any] | None]:
        segment_bytes = max(self.segment_bytes, math.ceil(item.size_bytes / MAX_SEGMENTS))
        init = await self.session.request(
            "POST",
            "/2/media/upload/initialize",
            f"starting the upload of {label}",
            json={
                "media_type": item.mime_type,
                "total_bytes": item.size_bytes,
                "media_category": _CATEGORIES.get(item.kind, "tweet_video"),
            },
        )
        media_id, _ = self._media_answer(init, f"starting the upload of {label}", label)
        index = 0
        sent = 0
        async for segment in fixed_chunks(self.read_media(item), segment_bytes):
            sent += len(segment)
            await self._append(media_id, index, segment, label)
            index += 1
        if sent != item.size_bytes:
            raise ProviderError(
                "invalid_request",
                f"The stored file of {label} has {sent} bytes, not its recorded "
                f"{item.size_bytes}; upload it again.",
            )
        finalize = await self.session.request(
            "POST", f"/2/media/upload/{media_id}/finalize", f"finishing the upload of {label}"
        )
        return self._media_answer(finalize, f"finishing the upload of {label}", label)

    async def _append(self, media_id: str, index: int, segment: bytes, label: str) -> None:
        action = f"sending segment {index} of {label}"
        upload = multipart_body(
            [("segment_index", str(index))],
            FilePart(
                "media",
                "segment",
                "application/octet-stream",
                len(segment),
                lambda: single_chunk(segment),
            ),
        )
        response = await self.session.request(
            "POST",
            f"/2/media/upload/{media_id}/append",
            action,
            headers=upload.headers,
            body=upload.open,
        )
        if not response.is_success:
            raise self._failure(response, action, label)

    async def _wait_processed(self, media_id: str, processing: dict[str, Any], label: str) -> None:
        action = f"checking the processing of {label}"
        waited = 0.0
        while True:
            state = processing.get("state")
            if state == "succeeded":
                return
            if state == "failed":
                error = processing.get("error")
                reason = error.get("message") if isinstance(error, dict) else None
                raise ProviderError(
                    "media_rejected", f"X could not process {label}: {reason or 'failed'}"
                )
            delay = processing.get("check_after_secs")
            delay = float(delay) if isinstance(delay, int | float) else 5.0
            delay = min(max(delay, MIN_CHECK_AFTER), MAX_CHECK_AFTER)
            if waited + delay > self.processing_timeout:
                raise ProviderError(
                    "provider_unavailable",
                    f"X was still processing {label} after {math.ceil(waited)} s; the publish "
                    "will be retried.",
                )
            await self.sleep(delay)
            waited += delay
            response = await self.session.request(
                "GET",
                "/2/media/upload",
                action,
                params={"command": "STATUS", "media_id": media_id},
            )
            if not response.is_success:
                raise self._failure(response, action, label)
            data = response_json(response).get("data")
            info = data.get("processing_info") if isinstance(data, dict) else None
            processing = info if isinstance(info, dict) else {"state": "succeeded"}

    def _media_answer(
        self, response: httpx.Response, action: str, label: str
    ) -> tuple[str, dict[str, Any] | None]:
        if not response.is_success:
            raise self._failure(response, action, label)
        data = response_json(response).get("data")
        media_id = data.get("id") if isinstance(data, dict) else None
        if not isinstance(media_id, str) or not media_id:
            raise ProviderError("provider_unavailable", f"X answered {action} without a media id.")
        assert isinstance(data, dict)
        info = data.get("processing_info")
        return media_id, info if isinstance(info, dict) else None

    def _failure(self, response: httpx.Response, action: str, label: str) -> ProviderError:
        error = self.session.classify(response, action)
        if error.code in ("invalid_request", "media_rejected") or response.status_code == 413:
            # The upload endpoints refuse only the file itself (type, size, duration, codec).
            return ProviderError("media_rejected", f"X refused {label}: {error.message}")
        return error
