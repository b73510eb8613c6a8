"""Media use cases other than the upload itself: reading assets, their bytes and the settings
that shape uploads (storage, staging directory, size limits).

Other domains come here, never to the repository: the posts domain validates a post's media
with `media_facts`, the publisher hands adapters `media_items`, and provider adapters stream an
asset's bytes with `open_media`.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.config import Settings
from pressroom.kit.errors import not_found
from pressroom.kit.pagination import PageParams, paginate
from pressroom.media import repository
from pressroom.media.models import MediaAsset
from pressroom.media.multipart import UploadLimits
from pressroom.media.sniff import MediaKind
from pressroom.media.storage import S3_ENDPOINT_ENV, MediaStorage, storage_from_url
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
}
_COLLECTION = "media"
_KINDS: dict[str, MediaKind] = {"image": "image", "gif": "gif", "video": "video"}


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


def upload_limits(settings: Settings) -> UploadLimits:
    return UploadLimits(
        image_bytes=int(settings.media_max_image_bytes),
        gif_bytes=int(settings.media_max_gif_bytes),
        video_bytes=int(settings.media_max_video_bytes),
        request_bytes=int(settings.media_max_request_bytes),
    )


def storage_key(organization_id: uuid.UUID, asset_id: uuid.UUID, mime_type: str) -> str:
    return f"{organization_id}/{asset_id}{_EXTENSIONS.get(mime_type, '')}"


async def get_media(
    session: AsyncSession, organization_id: uuid.UUID, media_id: uuid.UUID
) -> MediaAsset:
    """The organization's asset, or 404 (another organization's asset looks the same)."""
    assets = await repository.get_assets(session, organization_id, [media_id])
    asset = assets.get(media_id)
    if asset is None:
        raise not_found("media")
    return asset


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
    return MediaItem(
        id=asset.id,
        kind=asset.kind,
        mime_type=asset.mime_type,
        size_bytes=asset.size_bytes,
        storage_key=asset.storage_key,
    )


def open_media(
    runtime: Runtime, asset: MediaAsset, *, start: int = 0, length: int | None = None
) -> AsyncGenerator[bytes, None]:
    """Stream an asset's bytes from storage (for provider adapters and downloads), from byte
    `start`, `length` of them or to the end.

    `async for chunk in open_media(runtime, asset)`; a reader that may stop early wraps it in
    `contextlib.aclosing` so the file or connection is released at once. A missing object
    raises FileNotFoundError on the first read."""
    return storage_for(runtime.settings).open_read(asset.storage_key, start=start, length=length)
