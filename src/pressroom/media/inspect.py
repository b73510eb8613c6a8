"""Decode an uploaded file for real and describe it: dimensions, duration, codecs, animation.

A file whose first bytes look right can still be truncated, corrupt or hostile (a decompression
bomb). The networks decode what we forward, so we decode it first: Pillow for images, FFmpeg through
PyAV for video. Anything that does not decode is `UnprocessableMedia` (422 `unprocessable_media`).

Decoding is blocking and CPU-bound: async code calls `inspect_file_async`, which runs it in a worker
thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import anyio.to_thread
import av
import av.error
from av.container import InputContainer
from av.stream import Disposition
from av.video.codeccontext import VideoCodecContext
from av.video.stream import VideoStream
from PIL import Image

from pressroom.media.sniff import MediaKind, Sniffed

# Contract section 7: more than 100 megapixels is a decompression bomb, for images and video frames.
MAX_PIXELS = 100_000_000
# Pillow's own guard (default ~89.5 MP) warns above MAX_IMAGE_PIXELS and raises above twice that.
# Aligning it with the contract keeps legitimate 90-100 MP images from tripping a spurious warning;
# our explicit check below rejects everything above MAX_PIXELS before any pixel is decoded.
Image.MAX_IMAGE_PIXELS = MAX_PIXELS
# Animated images are decoded frame by frame to catch truncation anywhere; a small file can still
# declare thousands of full-canvas frames, so the total decoded area is capped too (ten 100 MP
# frames, or ~3,000 frames of 640x480).
MAX_ANIMATION_PIXELS = 10 * MAX_PIXELS

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
_DEMUXERS = {"video/mp4": "mov", "video/quicktime": "mov", "video/webm": "matroska"}


class UnprocessableMedia(Exception):
    """The file has an accepted type but does not decode; `reason` is safe to show the client."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class MediaInfo:
    """What decoding proved about a file."""

    kind: MediaKind
    mime_type: str
    width: int
    height: int
    duration_seconds: float | None
    frame_rate: float | None
    video_codec: str | None
    audio_codec: str | None
    animated: bool
    frame_count: int | None


def inspect_file(path: Path, sniffed: Sniffed) -> MediaInfo:
    """Decode `path` as the type its bytes were sniffed as; raise UnprocessableMedia if it fails."""
    if path.stat().st_size == 0:
        raise UnprocessableMedia("the file is empty")
    if sniffed.kind == "video":
        return _inspect_video(path, sniffed)
    return _inspect_image(path, sniffed)


async def inspect_file_async(path: Path, sniffed: Sniffed) -> MediaInfo:
    """`inspect_file` in a worker thread, so decoding never blocks the event loop."""
    return await anyio.to_thread.run_sync(inspect_file, path, sniffed)


def _check_pixels(width: int, height: int) -> None:
    if width <= 0 or height <= 0:
        raise UnprocessableMedia(f"invalid dimensions {width}x{height}")
    if width * height > MAX_PIXELS:
        raise UnprocessableMedia(
            f"{width}x{height} is {width * height:,} pixels, more than the "
            f"{MAX_PIXELS // 1_000_000} megapixel limit (decompression bomb)"
        )


def _clean_message(exc: BaseException, path: Path) -> str:
    # Decoder messages often quote the file name; the staging path is nobody's business.
    message = str(exc).replace(str(path), "file").strip() or type(exc).__name__
    return message


def _inspect_image(path: Path, sniffed: Sniffed) -> MediaInfo:
    pillow_format = _PILLOW_FORMATS.get(sniffed.mime_type)
    if pillow_format is None:
        raise UnprocessableMedia(f"{sniffed.mime_type} is not an image type")
    formats = [pillow_format]
    try:
        # First pass: header and structure only (`verify` checks PNG CRCs, for instance). Pillow
        # cannot use the image after verify(), hence the second open below.
        with Image.open(path, formats=formats) as image:
            _check_pixels(*image.size)
            image.verify()
        # Second pass: decode every pixel of every frame, which is what catches truncation.
        with Image.open(path, formats=formats) as image:
            width, height = image.size
            _check_pixels(width, height)
            frame_count = 1
            if pillow_format in _ANIMATED_FORMATS:
                frame_count = int(getattr(image, "n_frames", 1))
            animated = frame_count > 1
            if animated and frame_count * width * height > MAX_ANIMATION_PIXELS:
                raise UnprocessableMedia(
                    f"{frame_count} frames of {width}x{height} exceed the decoding budget of "
                    f"{MAX_ANIMATION_PIXELS // 1_000_000} megapixels"
                )
            duration_ms = 0
            for index in range(frame_count):
                image.seek(index)
                image.load()
                duration_ms += int(image.info.get("duration", 0) or 0)
    except UnprocessableMedia:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        # Raised by Image.open itself for very large sizes (or as an error when warnings are
        # configured to raise): same verdict as our own check.
        raise UnprocessableMedia(
            f"the image is larger than the {MAX_PIXELS // 1_000_000} megapixel limit "
            "(decompression bomb)"
        ) from exc
    except Exception as exc:
        # Pillow signals bad data with a zoo of types (OSError, SyntaxError, ValueError, EOFError,
        # struct.error, ...); at this boundary every one of them means "does not decode".
        raise UnprocessableMedia(
            f"the {pillow_format} data does not decode: {_clean_message(exc, path)}"
        ) from exc
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


def _inspect_video(path: Path, sniffed: Sniffed) -> MediaInfo:
    demuxer = _DEMUXERS.get(sniffed.mime_type)
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
            _read_through(container, video, codec, duration)
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
