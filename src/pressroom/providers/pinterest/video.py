"""A video pin's media: registered, uploaded and processed before the pin is created
(https://developers.pinterest.com/docs/api-features/creating-boards-and-pins/#creating-video-pins).

1. Register: `POST /v5/media` `{"media_type": "video"}` -> `{"media_id", "upload_url",
   "upload_parameters": {...}}`.
2. Upload: a multipart form `POST` to `upload_url` (Pinterest's storage, not the API: no bearer
   token goes there) with every `upload_parameters` field, then the file as `file`. The bytes
   are streamed from storage (`read_media`), never held whole in memory.
3. Wait: `GET /v5/media/{media_id}` -> `{"status": "registered" | "processing" | "succeeded" |
   "failed"}`, polled every `interval` seconds for at most `budget` seconds in all, so that a
   publish answers within the publisher's lease. Until the pin is created nothing is published:
   a video still processing when the budget runs out fails as a retryable `timeout`, and the
   retry uploads it again (Pinterest offers no way to find an earlier upload of the same file).
"""

from __future__ import annotations

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import FilePart
from pressroom.providers.http import MediaReader
from pressroom.providers.http import PollBudget
from pressroom.providers.http import Polling
from pressroom.providers.http import media_filename
from pressroom.providers.http import multipart_body
from pressroom.providers.http import provider_request
from pressroom.providers.http import safe_detail
from pressroom.providers.pinterest.api import PinterestSession
from pressroom.providers.pinterest.errors import PROVIDER
from pressroom.providers.pinterest.errors import classify

DEFAULT_POLL_INTERVAL = 3.0
DEFAULT_POLL_BUDGET = 30.0


async def upload_video(
    session: PinterestSession, item: MediaItem, read_media: MediaReader, polling: Polling
) -> str:
    """The media id of `item`, uploaded and processed by Pinterest."""
    registered = await session.call(
        "POST", "/media", "registering the video upload", json={"media_type": "video"}
    )
    media_id = registered.get("media_id")
    upload_url = registered.get("upload_url")
    parameters = registered.get("upload_parameters")
    if not isinstance(media_id, str) or not isinstance(upload_url, str):
        raise ProviderError(
            "provider_unavailable", "Pinterest registered the video upload without its upload URL."
        )
    fields = parameters if isinstance(parameters, dict) else {}
    await _send_file(upload_url, fields, item, read_media, session)
    await _wait_processed(session, media_id, polling)
    return media_id


async def _send_file(
    upload_url: str,
    fields: dict[str, object],
    item: MediaItem,
    read_media: MediaReader,
    session: PinterestSession,
) -> None:
    action = "uploading the video"
    if not upload_url.startswith("https://"):
        raise ProviderError(
            "provider_unavailable", "Pinterest gave a video upload URL that is not HTTPS."
        )
    body = multipart_body(
        [(str(name), str(value)) for name, value in fields.items()],
        FilePart(
            "file", media_filename(item), item.mime_type, item.size_bytes, lambda: read_media(item)
        ),
    )
    response = await provider_request(
        session.http,
        "POST",
        upload_url,
        provider=PROVIDER,
        action=action,
        headers=body.headers,
        content=body.open(),
    )
    if not response.is_success:
        # The storage answers XML, not Pinterest's JSON: its status is what can be read.
        raise classify(response, action, session.secrets())


async def _wait_processed(session: PinterestSession, media_id: str, polling: Polling) -> None:
    budget = PollBudget(polling)
    while True:
        body = await session.call("GET", f"/media/{media_id}", "checking the video's processing")
        status = body.get("status")
        if status == "succeeded":
            return
        if status == "failed":
            said = safe_detail(body.get("failure_reason") or "", session.secrets())
            reason = f": {said}" if said else ""
            raise ProviderError("media_rejected", f"Pinterest could not process the video{reason}.")
        if not await budget.wait():
            raise ProviderError(
                "timeout",
                f"Pinterest was still processing the video after {polling.budget:g} seconds; "
                "nothing was published, and it will be retried.",
            )
