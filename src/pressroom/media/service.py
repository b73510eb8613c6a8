"""Media use cases other than the upload itself: reading assets, their bytes and the settings
that shape uploads (storage, staging directory, size limits).

Other domains come here, never to the repository: the posts domain validates a post's media
with `media_facts`, the publisher hands adapters `media_items`, and provider adapters stream an
asset's bytes with `open_media`.
"""

from __future__ import annotations

import functools
import os
import re
import uuid
from collections.abc import AsyncGenerator
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.config import Settings
from pressroom.kit.attributes import from_attributes
from pressroom.kit.errors import found
from pressroom.kit.pagination import PageParams
from pressroom.kit.pagination import paginate
from pressroom.media import repository
from pressroom.media.inspect import DecodeLimits
from pressroom.media.models import MediaAsset
from pressroom.media.multipart import UploadLimits
from pressroom.media.sniff import MediaKind
from pressroom.media.storage import S3_ENDPOINT_ENV
from pressroom.media.storage import LocalStorage
from pressroom.media.storage import MediaStorage
from pressroom.media.storage import storage_from_url
from pressroom.providers.adapter import MediaItem
from pressroom.providers.validation import MediaFacts
from pressroom.runtime import Runtime

# Storage keys end with the extension of the proven type, so a bucket or directory listing is
# readable by people and tools; the type itself is always taken from the row.
_EXTENSIONS = {
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/webp": ".webp",
    "image/gif": ".gif",
    "video/mp4": ".mp4",
    "video/quicktime": ".mov",
    "video/webm": ".webm",
    "application/pdf": ".pdf",
}
# Other spellings of a type's extension that a client's file name may keep when it is served.
_ALIASES = {"image/jpeg": (".jpeg", ".jpe"), "video/quicktime": (".qt",)}
_COLLECTION = "media"
_KINDS: dict[str, MediaKind] = {
    "image": "image",
    "gif": "gif",
    "video": "video",
    "document": "document",
}


def storage_for(settings: Settings) -> MediaStorage:
    """The media storage `settings` name (one instance per configuration and process)."""
    return _storage(
        settings.media_storage_url, settings.resolved_data_dir, os.environ.get(S3_ENDPOINT_ENV)
    )


@functools.lru_cache(maxsize=8)
def _storage(url: str, data_dir: Path, _endpoint: str | None) -> MediaStorage:
    # Cached because an S3 client is costly to build and safe to share across threads; the
    # endpoint variable is part of the key only so that changing it takes effect.
    return storage_from_url(url, data_dir)


def staging_dir(settings: Settings) -> Path:
    """Where uploads are received before inspection: in the data dir, so that for local storage
    (the default, under the same dir) accepting a file is a rename, not a copy."""
    return settings.resolved_data_dir / "staging" / "media"


def stores_staged_files_in_place(settings: Settings) -> bool:
    """Whether accepted files are kept by renaming the staged file (local storage), which is
    then made durable where it is: worth starting its write-back while it arrives. Files sent
    to S3 are read once and deleted; writing them to the local disk early would be wasted."""
    return isinstance(storage_for(settings), LocalStorage)


def upload_limits(settings: Settings) -> UploadLimits:
    return UploadLimits(
        image_bytes=int(settings.media_max_image_bytes),
        gif_bytes=int(settings.media_max_gif_bytes),
        video_bytes=int(settings.media_max_video_bytes),
        document_bytes=int(settings.media_max_document_bytes),
        request_bytes=int(settings.media_max_request_bytes),
    )


def served_filename(filename: str, mime_type: str) -> str:
    """The name a download is offered under: the client's name, its extension that of the type
    the bytes proved. `x.html` holding a PNG is `x.png`: a name may not promise a browser or a
    desktop another type than the bytes are (the stored `filename` stays as sent)."""
    extension = _EXTENSIONS.get(mime_type, "")
    stem, dot, current = filename.rpartition(".")
    if not dot or not stem:
        stem, current = filename, ""
    if f".{current.lower()}" in (extension, *_ALIASES.get(mime_type, ())):
        return filename
    return f"{stem}{extension}"


def decode_limits(settings: Settings) -> DecodeLimits:
    return DecodeLimits(
        max_pixels=settings.media_max_decode_pixels,
        timeout_seconds=settings.media_decode_timeout_seconds,
        concurrency=settings.media_decode_concurrency,
    )


def storage_key(organization_id: uuid.UUID, asset_id: uuid.UUID, mime_type: str) -> str:
    return f"{organization_id}/{asset_id}{_EXTENSIONS.get(mime_type, '')}"


# What `storage_key` makes, and what LocalStorage's cross-device copy names its partial file
# (`.<name>.partial`); nothing else in a store is ours to remove.
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_OUR_KEY = re.compile(rf"{_UUID}/(\.)?(?P<asset>{_UUID})(\.[a-z0-9]+)?(?(1)\.partial)")


def asset_id_of_key(key: str) -> uuid.UUID | None:
    """The asset id in a key `storage_key` made (or in its partial copy); None for any other
    object, which the orphan sweeper leaves alone."""
    match = _OUR_KEY.fullmatch(key)
    return uuid.UUID(match["asset"]) if match else None


async def stored_keys(
    session: AsyncSession, asset_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, str]:
    """The storage key of each asset among `asset_ids` that has a row, whatever its organization."""
    return await repository.storage_keys(session, asset_ids)


async def get_media(
    session: AsyncSession, organization_id: uuid.UUID, media_id: uuid.UUID
) -> MediaAsset:
    """The organization's asset, or 404 (another organization's asset looks the same)."""
    assets = await repository.get_assets(session, organization_id, [media_id])
    return found(assets.get(media_id), "media")


async def get_assets(
    session: AsyncSession, organization_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, MediaAsset]:
    """The organization's assets among `ids`; unknown and foreign ids are absent."""
    return await repository.get_assets(session, organization_id, ids)


async def list_media(
    session: AsyncSession, runtime: Runtime, organization_id: uuid.UUID, page: PageParams
) -> tuple[list[MediaAsset], str | None]:
    """One page of the organization's assets, newest first, and the next cursor."""
    return await paginate(
        session,
        select(MediaAsset).where(MediaAsset.organization_id == organization_id),
        model=MediaAsset,
        params=page,
        box=runtime.box,
        collection=_COLLECTION,
    )


def media_facts(asset: MediaAsset) -> MediaFacts:
    """What provider media rules are checked against."""
    return MediaFacts(
        id=str(asset.id),
        kind=_KINDS[asset.kind],
        mime_type=asset.mime_type,
        size_bytes=asset.size_bytes,
        width=asset.width,
        height=asset.height,
        duration_seconds=asset.duration_seconds,
        page_count=asset.page_count,
    )


async def media_items(
    session: AsyncSession, organization_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, MediaItem]:
    """The organization's assets among `ids` as a provider adapter is handed them; unknown and
    foreign ids are absent."""
    assets = await repository.get_assets(session, organization_id, ids)
    return {asset_id: _media_item(asset) for asset_id, asset in assets.items()}


def _media_item(asset: MediaAsset) -> MediaItem:
    """What a provider adapter publishes from (it streams the bytes with `open_media`)."""
    return from_attributes(MediaItem, asset)


def open_media(
    runtime: Runtime, asset: MediaAsset, *, start: int = 0, length: int | None = None
) -> AsyncGenerator[bytes, None]:
    """Stream an asset's bytes from storage (for provider adapters and downloads), from byte
    `start`, `length` of them or to the end.

    `async for chunk in open_media(runtime, asset)`; a reader that may stop early wraps it in
    `contextlib.aclosing` so the file or connection is released at once. A missing object
    raises FileNotFoundError on the first read."""
    return storage_for(runtime.settings).open_read(asset.storage_key, start=start, length=length)
