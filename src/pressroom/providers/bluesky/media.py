"""Images and video for a Bluesky post, uploaded as blobs.

`com.atproto.repo.uploadBlob` takes the raw bytes with their Content-Type and answers
`{"blob": {"$type": "blob", "ref": {"$link": cid}, "mimeType", "size"}}`; the post's embed
references that blob (https://docs.bsky.app/docs/api/com-atproto-repo-upload-blob).

Images: app.bsky.embed.images, up to 4, each at most 1,000,000 bytes (the lexicon's `maxSize`),
with `alt` text and an `aspectRatio` so that apps lay the post out before loading it.

Video: app.bsky.embed.video, one per post, at most 100,000,000 bytes. Of the two methods the
video tutorial describes (https://docs.bsky.app/docs/tutorials/video), Pressroom uses the simple
one: uploadBlob to the account's PDS, then the post. The recommended alternative pre-processes
through video.bsky.app with a service-auth token and a job to poll; it spares viewers a few
seconds of "processing" right after the post appears, but adds a second service, a token type
and a polling loop to every publish. Publishing runs in the background and nobody watches the
post appear, so the simpler path wins; the blob is streamed, never held in memory.

Dimensions: `media_dimensions(item)` when the caller injects it (the media domain knows every
asset's width and height), else, for images, read from the image header with Pillow. A video
without known dimensions is posted without `aspectRatio` (it is optional).
"""

from __future__ import annotations

import io
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from PIL import Image

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.bluesky.records import images_embed
from pressroom.providers.bluesky.records import video_embed
from pressroom.providers.bluesky.session import BlueskySession
from pressroom.providers.http import MediaReader
from pressroom.providers.http import read_all
from pressroom.providers.http import response_json
from pressroom.providers.http import sized_stream
from pressroom.providers.session import BodyFactory

MediaDimensions = Callable[[MediaItem], Awaitable[tuple[int, int] | None]]

# app.bsky.embed.images: images maxLength 4, image blob maxSize 1000000.
MAX_IMAGES = 4
MAX_IMAGE_BYTES = 1_000_000
# app.bsky.embed.video: video blob maxSize 100000000.
MAX_VIDEO_BYTES = 100_000_000


async def build_embed(
    session: BlueskySession,
    media: Sequence[MediaItem],
    alts: Sequence[str | None],
    read_media: MediaReader,
    media_dimensions: MediaDimensions | None,
) -> dict[str, Any] | None:
    """Upload the target's media and return the post's embed (None without media)."""
    if not media:
        return None
    if any(item.kind == "video" for item in media):
        if len(media) > 1:
            raise ProviderError(
                "invalid_request",
                "A Bluesky post embeds either up to 4 images or one video, not both.",
            )
        return await _video(session, media[0], alts[0], read_media, media_dimensions)
    if len(media) > MAX_IMAGES:
        raise ProviderError("invalid_request", f"A Bluesky post takes at most {MAX_IMAGES} images.")
    images = []
    for position, (item, alt) in enumerate(zip(media, alts, strict=True)):
        _check_size(item, MAX_IMAGE_BYTES, position)
        data = await read_all(read_media(item), limit=MAX_IMAGE_BYTES)
        blob = await upload_blob(session, item, _constant(data), len(data), position)
        dimensions = await media_dimensions(item) if media_dimensions is not None else None
        images.append((blob, alt, dimensions or image_dimensions(data)))
    return images_embed(images)


async def _video(
    session: BlueskySession,
    item: MediaItem,
    alt: str | None,
    read_media: MediaReader,
    media_dimensions: MediaDimensions | None,
) -> dict[str, Any]:
    _check_size(item, MAX_VIDEO_BYTES, 0)
    blob = await upload_blob(
        session, item, lambda: sized_stream(read_media(item), item.size_bytes), item.size_bytes, 0
    )
    dimensions = await media_dimensions(item) if media_dimensions is not None else None
    return video_embed(blob, alt, dimensions)


def _constant(data: bytes) -> BodyFactory:
    return lambda: data


def _check_size(item: MediaItem, limit: int, position: int) -> None:
    if item.size_bytes > limit:
        raise ProviderError(
            "media_rejected",
            f"Bluesky accepts {item.kind}s up to {limit:,} bytes; media {position + 1} "
            f"({item.id}) has {item.size_bytes:,}.",
        )


async def upload_blob(
    session: BlueskySession, item: MediaItem, body: BodyFactory, size: int, position: int
) -> dict[str, Any]:
    action = f"uploading media {position + 1} ({item.id})"
    response = await session.request(
        "POST",
        "com.atproto.repo.uploadBlob",
        action=action,
        body=body,
        headers={"Content-Type": item.mime_type, "Content-Length": str(size)},
    )
    if not response.is_success:
        error = session.classify(response, action)
        if error.code == "invalid_request":
            # uploadBlob has no other way to fail on a well-formed request: the file is refused.
            raise ProviderError("media_rejected", error.message)
        raise error
    blob = response_json(response).get("blob")
    if not isinstance(blob, dict):
        raise ProviderError(
            "provider_unavailable", f"Bluesky answered {action} without a blob reference."
        )
    return blob


def image_dimensions(data: bytes) -> tuple[int, int] | None:
    """Width and height from the image header (no pixel is decoded)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
    except Exception:  # an undecodable header: post without aspectRatio
        return None
    return (width, height)
