"""A video's custom thumbnail (https://developers.google.com/youtube/v3/docs/thumbnails/set).

`POST https://www.googleapis.com/upload/youtube/v3/thumbnails/set?videoId=ID&uploadType=media`
with the image as the whole body (`Content-Type` image/jpeg or image/png, at most 2 MB) answers
`{"kind": "youtube#thumbnailSetResponse", "items": [...]}`. It is sent once the video is up, so
a refusal (`invalid_image`, `mediaBodyRequired`, or 403 `forbidden`: the channel may not use
custom thumbnails) never fails the publish nor uploads the video again: it is returned as the
target's warning. The image is read by id through `find_media`, the organization's library as
the caller hands it (it is an option of the target, not one of its media).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.http import MediaLookup
from pressroom.providers.http import MediaReader
from pressroom.providers.http import sized_stream
from pressroom.providers.youtube.session import YouTubeSession

logger = logging.getLogger(__name__)

OPTION = "thumbnailMediaId"
THUMBNAIL_URL = "https://www.googleapis.com/upload/youtube/v3/thumbnails/set"


def thumbnail_id(options: dict[str, Any]) -> uuid.UUID | None:
    """`options.thumbnailMediaId` as an id, or None when it is absent."""
    value = options.get(OPTION)
    if value is None or value == "":
        return None
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise ProviderError(
            "invalid_request", f"options.{OPTION} must be the id of a media item."
        ) from None


async def set_thumbnail(
    session: YouTubeSession,
    request: PublishRequest,
    video_id: str,
    *,
    find_media: MediaLookup | None,
    read_media: MediaReader,
) -> ProviderError | None:
    """Set the target's custom thumbnail on the uploaded video, if it names one; why it could
    not be set, or None. Never raises a ProviderError: the video is already published."""
    try:
        media_id = thumbnail_id(request.options)
        if media_id is None:
            return None
        await _upload(session, media_id, video_id, find_media, read_media)
    except ProviderError as error:
        logger.warning(
            "YouTube thumbnail not set; the video stands",
            extra={"targetId": str(request.target_id), "code": error.code},
        )
        return ProviderError(
            error.code,
            f"The video was published but its custom thumbnail was not set: {error.message}",
            retryable=error.retryable,
        )
    return None


async def _upload(
    session: YouTubeSession,
    media_id: uuid.UUID,
    video_id: str,
    find_media: MediaLookup | None,
    read_media: MediaReader,
) -> None:
    item = await find_media(media_id) if find_media is not None else None
    if item is None:
        raise ProviderError(
            "not_found", f"options.{OPTION} names no media of this organization (any longer)."
        )
    await session.call(
        "POST",
        THUMBNAIL_URL,
        "setting the custom thumbnail",
        params={"videoId": video_id, "uploadType": "media"},
        headers={"Content-Type": item.mime_type, "Content-Length": str(item.size_bytes)},
        body=lambda: sized_stream(read_media(item), item.size_bytes),
    )
