"""Previews of media assets: an image's thumbnail, a video's poster frame (its first frame),
a GIF's first frame, as a JPEG of at most `PREVIEW_SIZE` pixels a side.

Every stored asset was decoded within bounds when it was uploaded (inspect.py), so decoding
its first frame again is bounded too; it runs in a worker thread, under the same per-process
limit as inspection. A preview is made once per asset and kept in the data directory
(`previews/<id>.jpg`): an asset's bytes never change, so neither does its preview."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import anyio
import anyio.to_thread
import av
from PIL import Image

from pressroom.media.inspect import DEMUXERS
from pressroom.media.inspect import decoding_limiter
from pressroom.media.models import MediaAsset
from pressroom.media.service import decode_limits
from pressroom.media.service import open_media
from pressroom.media.service import staging_dir
from pressroom.runtime import Runtime

PREVIEW_SIZE = 320
_JPEG_QUALITY = 80


class NoPreview(Exception):
    """The asset's first frame could not be decoded again."""


def _cache_dir(runtime: Runtime) -> Path:
    return runtime.settings.resolved_data_dir / "previews"


def _first_frame(source: Path, mime_type: str) -> Image.Image:
    demuxer = DEMUXERS.get(mime_type)
    if demuxer is None:
        image = Image.open(source)
        # A JPEG can be decoded straight at a fraction of its size.
        image.draft("RGB", (PREVIEW_SIZE, PREVIEW_SIZE))
        image.seek(0)
        return image
    with av.open(str(source), mode="r", format=demuxer) as container:
        stream = container.streams.video[0]
        for frame in container.decode(stream):
            poster: Image.Image = frame.to_image()  # type: ignore[no-untyped-call]
            return poster
    raise NoPreview("the video has no frame")


def _render(source: Path, mime_type: str, target: Path) -> None:
    try:
        image = _first_frame(source, mime_type)
        image.thumbnail((PREVIEW_SIZE, PREVIEW_SIZE))
        if image.mode in ("RGBA", "LA", "P"):
            # Transparency is shown over white (JPEG has none).
            rgba = image.convert("RGBA")
            image = Image.new("RGB", rgba.size, "white")
            image.paste(rgba, mask=rgba.getchannel("A"))
        image = image.convert("RGB")
    except (OSError, ValueError, av.error.FFmpegError) as exc:
        raise NoPreview(str(exc)) from None
    # Written aside and renamed: a reader never sees half a preview.
    handle, partial = tempfile.mkstemp(dir=target.parent, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as file:
            image.save(file, "JPEG", quality=_JPEG_QUALITY)
        os.replace(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


async def preview_of(runtime: Runtime, asset: MediaAsset) -> Path:
    """The asset's preview JPEG, made on first use (NoPreview if it cannot be)."""
    target = _cache_dir(runtime) / f"{asset.id}.jpg"
    if await anyio.Path(target).exists():
        return target
    await anyio.Path(target.parent).mkdir(parents=True, exist_ok=True)
    staging = staging_dir(runtime.settings)
    await anyio.Path(staging).mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=staging, prefix="preview-")
    os.close(handle)
    copy = Path(name)
    try:
        async with (
            await anyio.open_file(copy, "wb") as file,
            contextlib.aclosing(open_media(runtime, asset)) as chunks,
        ):
            async for chunk in chunks:
                await file.write(chunk)
        limits = decode_limits(runtime.settings)
        await anyio.to_thread.run_sync(
            _render,
            copy,
            asset.mime_type,
            target,
            limiter=decoding_limiter(limits.concurrency),
        )
    finally:
        await anyio.Path(copy).unlink(missing_ok=True)
    return target


async def forget_preview(runtime: Runtime, asset_id: object) -> None:
    """Remove a deleted asset's preview (made again on demand if the deletion fails)."""
    await anyio.Path(_cache_dir(runtime) / f"{asset_id}.jpg").unlink(missing_ok=True)
