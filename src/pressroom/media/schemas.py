"""Media as the API shows it (contract section 7)."""

from __future__ import annotations

import uuid
from typing import Annotated
from typing import Any
from typing import Literal

from pydantic import Field

from pressroom.kit.schema import APIModel
from pressroom.kit.schema import UTCDatetime

# Either side of a picture or video frame.
Pixels = Annotated[
    int | None,
    Field(description="Pixels (of the first frame for animations); null for documents."),
]


class Media(APIModel):
    """An uploaded asset, described by decoding its bytes (never by what the client declared)."""

    id: uuid.UUID
    kind: Literal["image", "gif", "video", "document"] = Field(
        description="`gif` for GIF files (animated or not); other still or animated images are "
        "`image`; PDF files are `document` (an addition to version 1, for LinkedIn document "
        "posts: clients should accept kinds they do not know)."
    )
    mime_type: str = Field(
        description="The type the bytes proved: image/jpeg, image/png, image/webp, image/gif, "
        "video/mp4, video/quicktime, video/webm or application/pdf.",
        examples=["image/png"],
    )
    filename: str = Field(
        description="The client's file name, reduced to its last path segment without control "
        "characters (at most 255 characters; `upload` when none was sent). Downloads are named "
        "after it with the extension of `mimeType`."
    )
    size_bytes: int = Field(description="Exact size of the stored bytes.")
    sha256: str = Field(
        description="Lowercase hex SHA-256 of the bytes; also the `ETag` of getMediaContent.",
        pattern="^[0-9a-f]{64}$",
    )
    width: Pixels
    height: Pixels
    duration_seconds: float | None = Field(
        description="Video duration, or the total frame time of an animated image; null for "
        "still images."
    )
    frame_rate: float | None = Field(description="Average frames per second; null for images.")
    video_codec: str | None = Field(
        description="FFmpeg's codec name (h264, hevc, vp8, vp9, av1, ...); null for images.",
        examples=["h264"],
    )
    audio_codec: str | None = Field(
        description="FFmpeg's codec name of the first audio stream (aac, opus, ...); null when "
        "there is none.",
        examples=["aac"],
    )
    page_count: int | None = Field(
        description="The pages of a `document`, read from its page tree; null for other kinds.",
    )
    created_at: UTCDatetime


class MediaBatch(APIModel):
    """The assets of one upload, in the order of the request's `files` parts."""

    items: list[Media]


def media_json(asset: Any) -> dict[str, Any]:
    """The getMedia form of an asset row, JSON-ready (event payloads use it)."""
    return Media.model_validate(asset).model_dump(mode="json", by_alias=True)
