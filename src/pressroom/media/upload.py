"""Accepting an upload: inspect every staged file, store them, record the assets and their events.

All or nothing (contract section 7): every file is decoded before any is stored, and a failure
while storing or recording removes what was already stored. The order is chosen so the database
transaction (which on SQLite holds the write lock) opens only after all slow work: decoding and
sending bytes to storage happen first, outside any transaction, as the project requires for
network I/O (S3). What is left uncovered is a crash, or a failed commit, between storing and
committing: it leaves objects no row names; they are never served (keys hold fresh ids), and
the worker's `media-orphan-sweeper` removes them after six hours (worker.py).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import anyio
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.kit.clock import utcnow
from pressroom.kit.ids import uuid7
from pressroom.media.inspect import DecodeLimits
from pressroom.media.inspect import MediaInfo
from pressroom.media.inspect import UnprocessableMedia
from pressroom.media.inspect import inspect_file_async
from pressroom.media.models import MediaAsset
from pressroom.media.multipart import StagedFile
from pressroom.media.multipart import file_error
from pressroom.media.schemas import media_json
from pressroom.media.service import decode_limits
from pressroom.media.service import storage_for
from pressroom.media.service import storage_key
from pressroom.media.storage import MediaStorage
from pressroom.runtime import Runtime
from pressroom.webhooks.outbox import emit

log = logging.getLogger(__name__)

MEDIA_CREATED = "media.created.v1"


@dataclass(frozen=True)
class Uploader:
    """Who uploads: the organization the assets belong to and the member who sent them."""

    organization_id: uuid.UUID
    member_id: uuid.UUID | None


async def inspect_staged(
    files: Sequence[StagedFile], limits: DecodeLimits | None = None
) -> list[MediaInfo]:
    """Decode every file; the first one that does not decode, or would cost more than `limits`
    to decode, is a 422 naming it."""
    infos = []
    for index, staged in enumerate(files):
        try:
            info = await inspect_file_async(staged.path, staged.sniffed, limits)
        except UnprocessableMedia as exc:
            raise file_error(
                "unprocessable_media",
                index,
                staged.filename,
                exc.code,
                f"cannot be processed: {exc.reason}",
            ) from exc
        infos.append(info)
    return infos


async def accept_upload(
    runtime: Runtime,
    uploader: Uploader,
    files: Sequence[StagedFile],
    open_session: Callable[[], Awaitable[AsyncSession]],
) -> list[MediaAsset]:
    """Turn staged files into stored assets, in the caller's transaction (opened last, through
    `open_session`), with one `media.created.v1` event each. Staged files are consumed on
    success; on failure the caller discards what is left of them."""
    storage = storage_for(runtime.settings)
    # Runs while the files are decoded (see MediaStorage.prepare_file); the files are not
    # touched again before it has finished.
    preparing = asyncio.ensure_future(_prepare(storage, files))
    try:
        infos = await inspect_staged(files, decode_limits(runtime.settings))
    except BaseException:
        preparing.cancel()
        raise
    finally:
        with anyio.CancelScope(shield=True):
            await asyncio.wait([preparing])
    now = utcnow()
    assets = [
        _asset(uploader, staged, info, now) for staged, info in zip(files, infos, strict=True)
    ]
    stored: list[str] = []
    try:
        for asset, staged in zip(assets, files, strict=True):
            await storage.put_file(asset.storage_key, staged.path)
            stored.append(asset.storage_key)
        session = await open_session()
        session.add_all(assets)
        await session.flush()
        for asset in assets:
            await emit(
                session,
                runtime,
                organization_id=uploader.organization_id,
                event_type=MEDIA_CREATED,
                data={"media": media_json(asset)},
            )
    except BaseException:
        # Also on cancellation (client gone): the shield lets the clean-up finish.
        with anyio.CancelScope(shield=True):
            await _remove_stored(storage, stored)
        raise
    return assets


async def _prepare(storage: MediaStorage, files: Sequence[StagedFile]) -> None:
    for staged in files:
        try:
            await storage.prepare_file(staged.path)
        except OSError:
            return  # put_file does the same work again and reports a real failure


def _asset(uploader: Uploader, staged: StagedFile, info: MediaInfo, now: datetime) -> MediaAsset:
    asset_id = uuid7()
    return MediaAsset(
        id=asset_id,
        organization_id=uploader.organization_id,
        kind=info.kind,
        mime_type=info.mime_type,
        filename=staged.filename,
        size_bytes=staged.size_bytes,
        sha256=staged.sha256,
        width=info.width,
        height=info.height,
        duration_seconds=info.duration_seconds,
        frame_rate=info.frame_rate,
        # FFmpeg's codec names are short ("h264", "opus"); the column bounds a surprise.
        video_codec=info.video_codec[:32] if info.video_codec else None,
        audio_codec=info.audio_codec[:32] if info.audio_codec else None,
        animated=info.animated,
        page_count=info.page_count,
        storage_key=storage_key(uploader.organization_id, asset_id, info.mime_type),
        created_by=uploader.member_id,
        created_at=now,
    )


async def _remove_stored(storage: MediaStorage, keys: Sequence[str]) -> None:
    for key in keys:
        try:
            await storage.delete(key)
        except Exception:
            # The upload's own failure is what the client must hear about; an object left
            # behind is unreferenced and harmless.
            log.exception("could not remove a stored file of a failed upload", extra={"key": key})
