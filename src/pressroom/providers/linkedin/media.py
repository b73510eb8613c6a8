"""Media uploaded to LinkedIn before a post names it.

Images (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/
images-api): `POST /rest/images?action=initializeUpload` with `{"initializeUploadRequest":
{"owner": author}}` answers `{"value": {"uploadUrl", "image": "urn:li:image:…"}}`; the bytes go
in one `PUT` to `uploadUrl`.

Videos (.../shares/videos-api): `POST /rest/videos?action=initializeUpload` with the owner and
`fileSizeBytes` answers the `video` URN, an `uploadToken` and `uploadInstructions`, one
`{"uploadUrl", "firstByte", "lastByte"}` per 4 MB part; each part is `PUT` in order and its
`ETag` kept; `POST /rest/videos?action=finalizeUpload` with the video, the token and the ETags
in order (`uploadedPartIds`); then `GET /rest/videos/{urn}` until `status` is `AVAILABLE`
(`PROCESSING_FAILED` names its `processingFailureReason`), within a bounded budget.

Documents (.../shares/documents-api): `POST /rest/documents?action=initializeUpload` with the
owner answers `{"value": {"uploadUrl", "uploadUrlExpiresAt", "document": "urn:li:document:…"}}`;
the PDF goes in one `PUT` to `uploadUrl`; then `GET /rest/documents/{urn}` until `status` is
`AVAILABLE` (`PROCESSING`, `WAITING_UPLOAD` wait; `PROCESSING_FAILED` fails), as for videos.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from typing import Any

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import MediaReader
from pressroom.providers.http import Polling
from pressroom.providers.http import sized_stream
from pressroom.providers.linkedin.session import LinkedInSession
from pressroom.providers.linkedin.session import encoded

DEFAULT_POLL_INTERVAL = 5.0
# LinkedIn processes a 500 MB video in minutes; past this the publish is retried later.
DEFAULT_POLL_BUDGET = 600.0


def _value(body: dict[str, Any], key: str, action: str) -> Any:
    value = body.get("value")
    found = value.get(key) if isinstance(value, dict) else None
    if found is None:
        raise ProviderError("provider_unavailable", f"LinkedIn answered {action} without {key}.")
    return found


async def _initialize(
    session: LinkedInSession, resource: str, action: str, **request: object
) -> dict[str, Any]:
    """`POST /rest/{resource}?action=initializeUpload` for the channel's account."""
    return await session.call(
        "POST",
        f"/rest/{resource}",
        action,
        params={"action": "initializeUpload"},
        json={"initializeUploadRequest": {"owner": session.author, **request}},
    )


async def upload_image(session: LinkedInSession, read_media: MediaReader, item: MediaItem) -> str:
    """The `urn:li:image:…` of `item`, uploaded."""
    action = "starting an image upload"
    body = await _initialize(session, "images", action)
    upload_url, image = str(_value(body, "uploadUrl", action)), str(_value(body, "image", action))
    await _put_file(session, read_media, item, upload_url, "uploading an image")
    return image


async def _put_file(
    session: LinkedInSession, read_media: MediaReader, item: MediaItem, url: str, action: str
) -> None:
    """The stored file, streamed in one `PUT` to the upload URL LinkedIn gave."""
    await session.call(
        "PUT",
        url,
        action,
        headers={"Content-Type": item.mime_type, "Content-Length": str(item.size_bytes)},
        body=lambda: sized_stream(read_media(item), item.size_bytes),
    )


async def upload_video(
    session: LinkedInSession, read_media: MediaReader, item: MediaItem, polling: Polling
) -> str:
    """The `urn:li:video:…` of `item`, uploaded in parts and processed."""
    action = "starting a video upload"
    body = await _initialize(
        session,
        "videos",
        action,
        fileSizeBytes=item.size_bytes,
        uploadCaptions=False,
        uploadThumbnail=False,
    )
    video = str(_value(body, "video", action))
    instructions = _value(body, "uploadInstructions", action)
    token = body["value"].get("uploadToken") or ""
    etags = await _put_parts(session, read_media(item), instructions, item.size_bytes)
    await session.call(
        "POST",
        "/rest/videos",
        "finishing the video upload",
        params={"action": "finalizeUpload"},
        json={
            "finalizeUploadRequest": {
                "video": video,
                "uploadToken": token,
                "uploadedPartIds": etags,
            }
        },
    )
    await _until_available(session, "videos", video, polling)
    return video


async def upload_document(
    session: LinkedInSession, read_media: MediaReader, item: MediaItem, polling: Polling
) -> str:
    """The `urn:li:document:…` of `item` (a PDF), uploaded and processed."""
    action = "starting a document upload"
    body = await _initialize(session, "documents", action)
    upload_url = str(_value(body, "uploadUrl", action))
    document = str(_value(body, "document", action))
    await _put_file(session, read_media, item, upload_url, "uploading the document")
    await _until_available(session, "documents", document, polling)
    return document


async def _put_parts(
    session: LinkedInSession, chunks: AsyncIterator[bytes], instructions: object, size: int
) -> list[str]:
    """Each part's bytes, cut from one pass over the stored file, in LinkedIn's order."""
    if not isinstance(instructions, list) or not instructions:
        raise ProviderError("provider_unavailable", "LinkedIn gave no video upload instructions.")
    stream = sized_stream(chunks, size).__aiter__()
    pending = b""
    etags: list[str] = []
    for number, part in enumerate(instructions, start=1):
        length = int(part["lastByte"]) - int(part["firstByte"]) + 1
        while len(pending) < length:
            try:
                pending += await stream.__anext__()
            except StopAsyncIteration:
                break
        data, pending = pending[:length], pending[length:]
        response = await session.request(
            "PUT",
            str(part["uploadUrl"]),
            f"uploading video part {number} of {len(instructions)}",
            headers={"Content-Type": "application/octet-stream"},
            body=_constant(data),
        )
        if not response.is_success:
            raise session.classify(response, f"uploading video part {number}")
        etags.append(response.headers.get("etag", ""))
    return etags


def _constant(data: bytes) -> Callable[[], bytes]:
    return lambda: data


async def _until_available(
    session: LinkedInSession, resource: str, urn: str, polling: Polling
) -> None:
    """Poll `GET /rest/{resource}/{urn}` (videos, documents) until LinkedIn has processed it."""
    what = resource.removesuffix("s")
    waited = 0.0
    while True:
        body = await session.call("GET", f"/rest/{resource}/{encoded(urn)}", f"checking the {what}")
        status = body.get("status")
        if status == "AVAILABLE":
            return
        if status == "PROCESSING_FAILED":
            reason = body.get("processingFailureReason") or "no reason given"
            raise ProviderError(
                "media_rejected", f"LinkedIn could not process the {what}: {reason}"
            )
        if waited >= polling.budget:
            raise ProviderError(
                "timeout",
                f"LinkedIn was still processing the {what} ({status}) after {int(waited)} s; "
                "the publish will be retried.",
            )
        await polling.sleep(polling.interval)
        waited += polling.interval
