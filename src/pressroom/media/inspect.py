"""Decode an uploaded file for real and describe it: dimensions, duration, codecs, animation.

A file whose first bytes look right can still be truncated, corrupt or hostile (a decompression
bomb). The networks decode what we forward, so we decode it first: Pillow for images, FFmpeg through
PyAV for video, pypdf for PDF documents (documents.py: structure and page count). Anything that
does not decode is `UnprocessableMedia` (422 `unprocessable_media`).

Decoding is bounded before it starts. Dimensions and frame counts are read from headers and frame
structure, without decoding pixels; a file whose decoding would cost more than the budget
(`DecodeLimits`: frames x canvas pixels, a deadline) is refused as it stands. Decoding itself is
blocking and CPU-bound: async code calls `inspect_file_async`, which runs it in a worker thread,
no more than `DecodeLimits.concurrency` files at a time per process, so simultaneous uploads
cannot add up to gigabytes.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import anyio
import anyio.to_thread
import av
import av.error
from av.container import InputContainer
from av.stream import Disposition
from av.video.codeccontext import VideoCodecContext
from av.video.stream import VideoStream
from PIL import Image

from pressroom.media.documents import UnreadableDocument
from pressroom.media.documents import pdf_page_count
from pressroom.media.sniff import MediaKind
from pressroom.media.sniff import Sniffed
from pressroom.metrics.instruments import MEDIA_INSPECTION

# Contract section 7: more than 100 megapixels is a decompression bomb, for images and video frames.
MAX_PIXELS = 100_000_000
# Pillow's own guard (default ~89.5 MP) warns above MAX_IMAGE_PIXELS and raises above twice that.
# Aligning it with the contract keeps legitimate 90-100 MP images from tripping a spurious warning;
# our explicit check below rejects everything above MAX_PIXELS before any pixel is decoded.
Image.MAX_IMAGE_PIXELS = MAX_PIXELS
# Animated images are decoded frame by frame to catch truncation anywhere, and Pillow composites
# every frame after the first onto a full-colour copy of the canvas, holding three or so canvases at
# 4 bytes a pixel: 12 bytes per canvas pixel, against at most 4 for a still image. A quarter of the
# still limit keeps an animation (~300 MB) within what the largest still image costs (~400 MB);
# no network takes animations anywhere near this big (X: 1280x1080).
MAX_ANIMATION_CANVAS_PIXELS = MAX_PIXELS // 4
# Each frame costs a fixed ~35 us of bookkeeping however small it is; a 15 MiB GIF of 1x1 frames
# could hold 700,000 of them. X takes at most 350.
MAX_FRAMES = 10_000
# The default decoding budget of one file, frames x canvas pixels. X's own ceiling for animated
# GIFs is 300 million (docs.x.com/x-api/media/quickstart/best-practices: "width * height *
# num_frames"), so whatever X accepts decodes here; it costs about 3 s of one core.
DEFAULT_MAX_DECODE_PIXELS = 300_000_000
DEFAULT_DECODE_TIMEOUT_SECONDS = 30.0
DEFAULT_DECODE_CONCURRENCY = 2
# A JPEG proves it decodes at an eighth of its size just as well: libjpeg reads every scan, but
# the pixels it produces (and holds) are 64 times fewer.
_JPEG_SCALE = 8

_PILLOW_FORMATS = {
    "image/jpeg": "JPEG",
    "image/png": "PNG",
    "image/webp": "WEBP",
    "image/gif": "GIF",
}
# Formats whose extra frames are animation. A JPEG's extra frames (MPO, from stereo cameras) are
# alternative views, not animation: only its first image counts.
_ANIMATED_FORMATS = frozenset({"GIF", "WEBP", "PNG"})
# The demuxer is forced from the sniffed type so FFmpeg never probes for other formats (playlists,
# concat lists and image sequences can make it open further files).
DEMUXERS = {"video/mp4": "mov", "video/quicktime": "mov", "video/webm": "matroska"}
# Types whose index lists every sample with its place in the file (FFmpeg's `mov` demuxer): such
# a file is proved whole by its index, and only its first picture is read (`_whole_by_index`).
PROVED_BY_INDEX = frozenset(mime for mime, demuxer in DEMUXERS.items() if demuxer == "mov")


# Field error codes of UnprocessableMedia.
UNDECODABLE = "undecodable"
OVER_DECODING_LIMIT = "decoding_limit"


class UnprocessableMedia(Exception):
    """The file has an accepted type but does not decode (`code` undecodable), or decoding it would
    cost more than allowed (`decoding_limit`); `reason` is safe to show the client."""

    def __init__(self, reason: str, code: str = UNDECODABLE) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


def _over_limit(reason: str) -> UnprocessableMedia:
    return UnprocessableMedia(reason, OVER_DECODING_LIMIT)


@dataclass(frozen=True)
class DecodeLimits:
    """What decoding may cost: `max_pixels` per file (frames x canvas width x height), wall-clock
    `timeout_seconds` per file, and files decoded at once per process (`concurrency`)."""

    max_pixels: int = DEFAULT_MAX_DECODE_PIXELS
    timeout_seconds: float = DEFAULT_DECODE_TIMEOUT_SECONDS
    concurrency: int = DEFAULT_DECODE_CONCURRENCY


class _Deadline:
    """Checked between frames and packets: a decoder call cannot be interrupted, but each one is
    bounded by the pixel limits, so the overrun is too."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def check(self) -> None:
        if time.monotonic() > self.at:
            raise _over_limit(f"decoding took longer than the {self.seconds:g} s limit")


@dataclass(frozen=True)
class MediaInfo:
    """What decoding proved about a file."""

    kind: MediaKind
    mime_type: str
    # None for documents, whose pages may each have their own size.
    width: int | None
    height: int | None
    duration_seconds: float | None = None
    frame_rate: float | None = None
    video_codec: str | None = None
    audio_codec: str | None = None
    animated: bool = False
    frame_count: int | None = None
    page_count: int | None = None


def inspect_file(path: Path, sniffed: Sniffed, limits: DecodeLimits | None = None) -> MediaInfo:
    """Decode `path` as the type its bytes were sniffed as; raise UnprocessableMedia if it fails
    or would cost more than `limits` (default: `DecodeLimits()`)."""
    limits = limits or DecodeLimits()
    if path.stat().st_size == 0:
        raise UnprocessableMedia("the file is empty")
    deadline = _Deadline(limits.timeout_seconds)
    if sniffed.kind == "document":
        return _inspect_document(path, sniffed)
    if sniffed.kind == "video":
        return _inspect_video(path, sniffed, deadline)
    return _inspect_image(path, sniffed, limits, deadline)


def _inspect_document(path: Path, sniffed: Sniffed) -> MediaInfo:
    try:
        pages = pdf_page_count(path)
    except UnreadableDocument as exc:
        raise UnprocessableMedia(str(exc)) from exc
    return MediaInfo(sniffed.kind, sniffed.mime_type, None, None, page_count=pages)


_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = (
    weakref.WeakKeyDictionary()
)


def decoding_limiter(concurrency: int) -> anyio.CapacityLimiter:
    # One per event loop (anyio's limiter binds to the loop that first waits on it), which in a
    # server process is one per process.
    loop = asyncio.get_running_loop()
    limiter = _limiters.get(loop)
    if limiter is None:
        limiter = _limiters[loop] = anyio.CapacityLimiter(concurrency)
    elif limiter.total_tokens != concurrency:
        limiter.total_tokens = concurrency
    return limiter


async def inspect_file_async(
    path: Path, sniffed: Sniffed, limits: DecodeLimits | None = None
) -> MediaInfo:
    """`inspect_file` in a worker thread, so decoding never blocks the event loop, and at most
    `limits.concurrency` of them at once in this process (the others wait their turn)."""
    limits = limits or DecodeLimits()
    with MEDIA_INSPECTION.labels(sniffed.kind).time():
        return await anyio.to_thread.run_sync(
            inspect_file, path, sniffed, limits, limiter=decoding_limiter(limits.concurrency)
        )


def _check_pixels(width: int, height: int) -> None:
    if width <= 0 or height <= 0:
        raise UnprocessableMedia(f"invalid dimensions {width}x{height}")
    if width * height > MAX_PIXELS:
        raise _over_limit(
            f"{width}x{height} is {width * height:,} pixels, more than the "
            f"{MAX_PIXELS // 1_000_000} megapixel limit (decompression bomb)"
        )


def _check_decoding_cost(width: int, height: int, frames: int, limits: DecodeLimits) -> None:
    """Refuse, before any pixel is decoded, a file whose frames would cost too much."""
    if frames > MAX_FRAMES:
        raise _over_limit(f"its {frames:,} frames are more than the limit of {MAX_FRAMES:,}")
    total = frames * width * height
    if total > limits.max_pixels:
        what = f"{frames} frames of {width}x{height} are" if frames > 1 else f"{width}x{height} is"
        raise _over_limit(
            f"{what} {total:,} pixels to decode, more than the decoding budget of "
            f"{limits.max_pixels:,} pixels per file (decompression bomb)"
        )
    if frames > 1 and width * height > MAX_ANIMATION_CANVAS_PIXELS:
        raise _over_limit(
            f"an animation of {width}x{height} ({width * height:,} pixels a frame) is over the "
            f"{MAX_ANIMATION_CANVAS_PIXELS // 1_000_000} megapixel limit for animated images "
            "(decompression bomb)"
        )


def _clean_message(exc: BaseException, path: Path) -> str:
    # Decoder messages often quote the file name; the staging path is nobody's business.
    message = str(exc).replace(str(path), "file").strip() or type(exc).__name__
    return message


def _inspect_image(
    path: Path, sniffed: Sniffed, limits: DecodeLimits, deadline: _Deadline
) -> MediaInfo:
    pillow_format = _PILLOW_FORMATS.get(sniffed.mime_type)
    if pillow_format is None:
        raise UnprocessableMedia(f"{sniffed.mime_type} is not an image type")
    try:
        width, height, frame_count, duration_ms = _decode_image(
            path, pillow_format, limits, deadline
        )
    except UnprocessableMedia:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        # Raised by Image.open itself for very large sizes (or as an error when warnings are
        # configured to raise): same verdict as our own check.
        raise _over_limit(
            f"the image is larger than the {MAX_PIXELS // 1_000_000} megapixel limit "
            "(decompression bomb)"
        ) from exc
    except Exception as exc:
        # Pillow signals bad data with a zoo of types (OSError, SyntaxError, ValueError, EOFError,
        # struct.error, ...); at this boundary every one of them means "does not decode".
        raise UnprocessableMedia(
            f"the {pillow_format} data does not decode: {_clean_message(exc, path)}"
        ) from exc
    animated = frame_count > 1
    return MediaInfo(
        kind=sniffed.kind,
        mime_type=sniffed.mime_type,
        width=width,
        height=height,
        duration_seconds=duration_ms / 1000 if animated else None,
        frame_rate=None,
        video_codec=None,
        audio_codec=None,
        animated=animated,
        frame_count=frame_count,
    )


def _decode_image(
    path: Path, pillow_format: str, limits: DecodeLimits, deadline: _Deadline
) -> tuple[int, int, int, int]:
    """Width, height, frames and total frame time (ms) of an image whose every frame decodes."""
    formats = [pillow_format]
    # First pass: header and structure only (`verify` checks PNG CRCs, for instance). Pillow
    # cannot use the image after verify(), hence the second open below.
    with Image.open(path, formats=formats) as image:
        _check_pixels(*image.size)
        image.verify()
    with Image.open(path, formats=formats) as image:
        width, height = image.size
        _check_pixels(width, height)
        frame_count = 1
        if pillow_format in _ANIMATED_FORMATS:
            # Without decoding pixels: GIF walks its blocks skipping the image data, WebP's
            # demuxer and APNG's header declare the count.
            frame_count = int(getattr(image, "n_frames", 1))
        _check_decoding_cost(width, height, frame_count, limits)
        if pillow_format == "JPEG":
            image.draft(image.mode, (-(-width // _JPEG_SCALE), -(-height // _JPEG_SCALE)))
        # Decode every pixel of every frame, which is what catches truncation.
        duration_ms = 0
        for index in range(frame_count):
            deadline.check()
            image.seek(index)
            image.load()
            duration_ms += int(image.info.get("duration", 0) or 0)
    return width, height, frame_count, duration_ms


def _rate(value: Fraction | None) -> float | None:
    if value is None or value <= 0:
        return None
    return float(value)


# How far the last packet may end before the declared duration: a frame or an audio packet of
# rounding is normal, a missing second of the end is a truncated file.
_TRUNCATION_SLACK_SECONDS = 0.5
_TRUNCATION_SLACK_RATIO = 0.02


def _read_through(
    container: InputContainer,
    video: VideoStream,
    codec: VideoCodecContext,
    duration: float | None,
    deadline: _Deadline,
) -> None:
    """Demux every packet (cheap: no decoding) and decode video until the first picture.

    Decoding one frame proves the codec data is real; reading every packet proves the file is
    whole. MP4 marks packets cut short by the end of file as corrupt and its index says how many
    video samples there are; Matroska has neither, but a last packet ending well before the
    declared duration gives truncation away just the same.
    """
    pictures = 0
    video_packets = 0
    end = 0.0
    for packet in container.demux():
        deadline.check()
        if packet.is_corrupt:
            raise UnprocessableMedia("the file is truncated or corrupt")
        stamp = packet.pts if packet.pts is not None else packet.dts
        if stamp is None:
            continue  # the empty packet PyAV yields at the end of each stream
        end = max(end, float((stamp + (packet.duration or 0)) * packet.time_base))
        if packet.stream_index == video.index:
            video_packets += 1
            if not pictures:
                pictures = len(codec.decode(packet))
    if not pictures:
        pictures = len(codec.decode(None))  # drain frames held back for reordering
    if not pictures:
        raise UnprocessableMedia("the video stream has no decodable frame")
    if video.frames and video_packets < video.frames:
        raise UnprocessableMedia(
            f"the file is truncated: {video_packets} of {video.frames} video frames are present"
        )
    if duration and end < duration - _TRUNCATION_SLACK_SECONDS - _TRUNCATION_SLACK_RATIO * duration:
        raise UnprocessableMedia(
            f"the file is truncated: its media ends at {end:.1f} s of {duration:.1f} s"
        )


_ENTRIES_BETWEEN_CHECKS = 65536


def _whole_by_index(
    container: InputContainer, video: VideoStream, size: int, deadline: _Deadline
) -> bool:
    """Whether an MP4 or QuickTime file is proved whole by its index, without reading it.

    Its `moov` index says where every sample of every track lies: the file is whole when each
    ends within it (a truncated file is refused here). False when the index does not list every
    video frame (a fragmented file announces its samples in fragments along the file): then
    every packet is read instead."""
    if not video.frames or len(video.index_entries) != video.frames:
        return False
    end = 0
    for stream in container.streams:
        for number, entry in enumerate(stream.index_entries):
            end = max(end, entry.pos + entry.size)
            if not number % _ENTRIES_BETWEEN_CHECKS:
                deadline.check()  # an index can list millions of samples (~0.5 us each)
    if end > size:
        missing = end - size
        raise UnprocessableMedia(
            f"the file is truncated: its index places samples {missing} bytes past its end"
        )
    return True


def _decode_first_picture(
    container: InputContainer, video: VideoStream, codec: VideoCodecContext, deadline: _Deadline
) -> None:
    """Decode the video until its first picture: proof that the codec data is real."""
    for packet in container.demux(video):
        deadline.check()
        if packet.is_corrupt:
            raise UnprocessableMedia("the file is truncated or corrupt")
        if packet.pts is None and packet.dts is None:
            continue  # the empty packet PyAV yields at the end of the stream
        if codec.decode(packet):
            return
    if not codec.decode(None):
        raise UnprocessableMedia("the video stream has no decodable frame")


def _inspect_video(path: Path, sniffed: Sniffed, deadline: _Deadline) -> MediaInfo:
    demuxer = DEMUXERS.get(sniffed.mime_type)
    if demuxer is None:
        raise UnprocessableMedia(f"{sniffed.mime_type} is not a video type")
    try:
        with av.open(str(path), mode="r", format=demuxer) as container:
            # Cover art in audio files shows up as a one-picture "video" stream; it is not video.
            streams = [
                stream
                for stream in container.streams.video
                if not stream.disposition & Disposition.attached_pic
            ]
            if not streams:
                raise UnprocessableMedia("the file has no video stream")
            video = streams[0]
            # FFmpeg can announce a stream it knows nothing about (a QuickTime file without its
            # `moov` index, for instance): PyAV then gives it no codec context.
            codec: VideoCodecContext | None = video.codec_context
            if codec is None:
                raise UnprocessableMedia("the video stream's codec is unknown or its index missing")
            width, height = codec.width, codec.height
            _check_pixels(width, height)
            audio_codec = (
                container.streams.audio[0].codec_context.name if container.streams.audio else None
            )
            duration: float | None = None
            if container.duration is not None and container.duration > 0:
                duration = container.duration / av.time_base
            elif video.duration is not None and video.time_base is not None:
                duration = float(video.duration * video.time_base)
            frame_rate = _rate(video.average_rate) or _rate(video.guessed_rate)
            # A single decoding thread: frame threads would each have to be fed a packet before
            # the first picture comes out, multiplying the memory for no gain.
            codec.thread_count = 1
            if sniffed.mime_type in PROVED_BY_INDEX and _whole_by_index(
                container, video, path.stat().st_size, deadline
            ):
                _decode_first_picture(container, video, codec, deadline)
            else:
                _read_through(container, video, codec, duration, deadline)
            return MediaInfo(
                kind=sniffed.kind,
                mime_type=sniffed.mime_type,
                width=width,
                height=height,
                duration_seconds=duration,
                frame_rate=frame_rate,
                video_codec=codec.name,
                audio_codec=audio_codec,
                animated=False,
                frame_count=video.frames or None,
            )
    except UnprocessableMedia:
        raise
    except av.error.FFmpegError as exc:
        reason = exc.strerror or _clean_message(exc, path)
        raise UnprocessableMedia(f"the video does not decode: {reason}") from exc
    except Exception as exc:
        # PyAV also surfaces bad data as ValueError/IndexError/UnicodeDecodeError in metadata.
        raise UnprocessableMedia(f"the video does not decode: {_clean_message(exc, path)}") from exc
