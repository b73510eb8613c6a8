"""Real media files made on the spot: Pillow images, PyAV-encoded videos, a hand-written PNG bomb.

Everything is tiny (a few KiB) and cached, so the whole suite encodes each file once.
"""

from __future__ import annotations

import functools
import io
import os
import struct
import tempfile
import zlib
from collections.abc import AsyncIterator
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import cast

import av
from av.audio.stream import AudioStream
from av.video.stream import VideoStream
from PIL import Image

VIDEO_SIZE = (64, 48)
VIDEO_FPS = 10
VIDEO_SECONDS = 2


def image_bytes(fmt: str, size: tuple[int, int] = (64, 48), *, noise: bool = False) -> bytes:
    """A still image; `noise` makes it incompressible, so half of it is really half the pixels."""
    if noise:
        image = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    else:
        image = Image.new("RGB", size, (200, 30, 90))
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    return buffer.getvalue()


def png_bytes(size: tuple[int, int] = (64, 48)) -> bytes:
    return image_bytes("PNG", size)


def jpeg_bytes(size: tuple[int, int] = (64, 48), *, noise: bool = False) -> bytes:
    return image_bytes("JPEG", size, noise=noise)


def webp_bytes(size: tuple[int, int] = (64, 48)) -> bytes:
    return image_bytes("WEBP", size)


def gif_bytes(size: tuple[int, int] = (64, 48)) -> bytes:
    return image_bytes("GIF", size)


def animated_bytes(fmt: str, frames: int, frame_ms: int, size: tuple[int, int] = (40, 30)) -> bytes:
    """An animated GIF or WebP whose frames differ (identical frames would be merged)."""
    images = [Image.new("RGB", size, (index * 40 % 256, 80, 160)) for index in range(frames)]
    buffer = io.BytesIO()
    images[0].save(
        buffer,
        format=fmt,
        save_all=True,
        append_images=images[1:],
        duration=frame_ms,
        loop=0,
    )
    return buffer.getvalue()


def pdf_bytes(pages: int = 3, *, password: str | None = None) -> bytes:
    """A real PDF of blank A4 pages, written by pypdf (optionally encrypted)."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=595, height=842)
    if password is not None:
        writer.encrypt(password, algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def h264_or_mpeg4() -> str:
    """libx264 when this FFmpeg build has it (not all do, it is GPL), else the built-in MPEG-4."""
    try:
        av.codec.Codec("libx264", "w")
    except av.error.FFmpegError:
        return "mpeg4"
    except ValueError:  # older PyAV raises this for unknown codecs
        return "mpeg4"
    return "libx264"


def _encode_video(
    container_format: str,
    video_codec: str | None,
    audio_codec: str | None,
    options: dict[str, str] | None = None,
) -> bytes:
    if options:
        # Some muxer options (faststart) rewrite the file in place: they need a real file.
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / f"video.{container_format}"
            _encode_video_to(str(path), container_format, video_codec, audio_codec, options)
            return path.read_bytes()
    buffer = io.BytesIO()
    _encode_video_to(buffer, container_format, video_codec, audio_codec, None)
    return buffer.getvalue()


def _encode_video_to(
    target: str | io.BytesIO,
    container_format: str,
    video_codec: str | None,
    audio_codec: str | None,
    options: dict[str, str] | None,
) -> None:
    with av.open(target, mode="w", format=container_format, options=options) as container:
        # Every stream must exist before the first packet is muxed (that writes the header).
        video: VideoStream | None = None
        audio: AudioStream | None = None
        if video_codec is not None:
            video = cast(VideoStream, container.add_stream(video_codec, rate=VIDEO_FPS))
            video.width, video.height = VIDEO_SIZE
            video.pix_fmt = "yuv420p"
            if "vpx" in video_codec:
                # libvpx's default "good" deadline is slow for no benefit here.
                video.options = {"deadline": "realtime", "cpu-used": "8"}
        if audio_codec is not None:
            audio = cast(AudioStream, container.add_stream(audio_codec, rate=48000))
            audio.layout = "mono"
        if video is not None:
            for index in range(VIDEO_SECONDS * VIDEO_FPS):
                picture = Image.new("RGB", VIDEO_SIZE, (index * 12 % 256, 100, 200))
                frame = av.VideoFrame.from_image(picture)
                frame.pts = index
                container.mux(video.encode(frame))
            container.mux(video.encode(None))
        if audio is not None:
            samples = 960  # 20 ms; PyAV re-frames it to each encoder's frame size
            for index in range(VIDEO_SECONDS * 48000 // samples):
                sound = av.AudioFrame(format="s16", layout="mono", samples=samples)
                sound.planes[0].update(bytes(sound.planes[0].buffer_size))
                sound.sample_rate = 48000
                sound.time_base = Fraction(1, 48000)
                sound.pts = index * samples
                container.mux(audio.encode(sound))
            container.mux(audio.encode(None))


@functools.cache
def mp4_bytes() -> bytes:
    """2 s of 64x48 at 10 fps, H.264 (or MPEG-4 part 2) with AAC audio, in MP4."""
    return _encode_video("mp4", h264_or_mpeg4(), "aac")


@functools.cache
def faststart_mp4_bytes() -> bytes:
    """Like `mp4_bytes`, with the index (`moov`) before the media, as web publishers write it."""
    return _encode_video("mp4", h264_or_mpeg4(), "aac", {"movflags": "faststart"})


@functools.cache
def fragmented_mp4_bytes() -> bytes:
    """Like `mp4_bytes`, written in fragments (`moof`), as live and streaming encoders do: the
    index (`moov`) lists no sample, each fragment lists its own."""
    return _encode_video(
        "mp4", h264_or_mpeg4(), "aac", {"movflags": "frag_keyframe+empty_moov+default_base_moof"}
    )


@functools.cache
def webm_bytes() -> bytes:
    """2 s of 64x48 at 10 fps, VP8 with Opus audio, in WebM."""
    return _encode_video("webm", "libvpx", "libopus")


@functools.cache
def vp9_webm_bytes() -> bytes:
    return _encode_video("webm", "libvpx-vp9", None)


@functools.cache
def mov_bytes() -> bytes:
    """2 s of 64x48 at 10 fps, no audio, in a QuickTime movie (`ftyp qt  `)."""
    return _encode_video("mov", h264_or_mpeg4(), None)


@functools.cache
def matroska_bytes() -> bytes:
    """A valid Matroska file that is not WebM (DocType `matroska`)."""
    return _encode_video("matroska", "mpeg4", None)


@functools.cache
def audio_only_mp4_bytes() -> bytes:
    """AAC in MP4 (an .m4a): an accepted container without a video stream."""
    return _encode_video("mp4", None, "aac")


def padded_mp4_bytes(total_size: int) -> bytes:
    """`mp4_bytes` followed by a `free` box (ISO/IEC 14496-12 padding) up to `total_size`:
    a valid MP4 of any size without encoding anything more."""
    content = mp4_bytes()
    padding = total_size - len(content)
    if padding < 8:
        raise ValueError(f"an MP4 of {total_size} bytes cannot hold the video")
    return content + struct.pack(">I", padding) + b"free" + bytes(padding - 8)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def write_png_bomb(path: Path, width: int, height: int) -> Path:
    """A valid 1-bit black PNG of any size, compressed row by row: ~0.5 MB for 900 megapixels.

    Deflate level 1 keeps generation at a fraction of a second; only a few rows are ever held.
    """
    row = bytes(1 + (width + 7) // 8)  # filter byte 0, then all-zero pixels
    rows_per_block = 256
    block = row * rows_per_block
    compressor = zlib.compressobj(1)
    with path.open("wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n")
        out.write(_png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)))
        idat = bytearray()
        remaining = height
        while remaining:
            count = min(rows_per_block, remaining)
            idat += compressor.compress(block if count == rows_per_block else row * count)
            remaining -= count
        idat += compressor.flush()
        out.write(_png_chunk(b"IDAT", bytes(idat)))
        out.write(_png_chunk(b"IEND", b""))
    return path


def write_gif_bomb(path: Path, size: tuple[int, int], frames: int) -> Path:
    """An animated GIF of `frames` full-canvas frames of one colour each: Pillow's LZW packs
    100 megapixels in ~75 KB. Holds one frame in memory while writing (~100 MB at that size)."""
    palette = [0, 0, 0, 255, 255, 255] + [0] * (256 * 3 - 6)
    images = []
    for index in range(frames):
        image = Image.new("P", size, index % 2)  # frames differ, or Pillow would merge them
        image.putpalette(palette)
        images.append(image)
    images[0].save(path, save_all=True, append_images=images[1:], duration=100, loop=0)
    return path


def tiny_canvas_gif(canvas: tuple[int, int], frames: int) -> bytes:
    """A GIF of `frames` 1x1 frames on a canvas of any size, written by hand: a few bytes per
    frame (GIF89a spec: logical screen, graphic control extension, image descriptor, LZW data)."""
    width, height = canvas
    out = bytearray(b"GIF89a" + struct.pack("<HHBBB", width, height, 0x80, 0, 0))
    out += b"\x00\x00\x00\xff\xff\xff"  # a global palette of two colours
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"  # loop forever
    for index in range(frames):
        out += b"\x21\xf9\x04\x00\x0a\x00\x00\x00"  # 100 ms, no transparency
        out += b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0)
        # LZW, minimum code size 2, 3-bit codes: clear (4), the pixel (0 or 1), end (5).
        out += b"\x02\x02" + (b"\x44\x01" if index % 2 == 0 else b"\x4c\x01") + b"\x00"
    return bytes(out + b"\x3b")


# -- multipart ------------------------------------------------------------------------------------

BOUNDARY = "pressroom-test-boundary-7MA4YWxkTrZu0gW"
CONTENT_TYPE = f"multipart/form-data; boundary={BOUNDARY}"


@dataclass(frozen=True)
class FormPart:
    content: bytes
    filename: str | None = "file.bin"
    content_type: str | None = "application/octet-stream"
    name: str = "files"


def part_header(part: FormPart) -> bytes:
    disposition = f'form-data; name="{part.name}"'
    if part.filename is not None:
        disposition += f'; filename="{part.filename}"'
    lines = [f"--{BOUNDARY}", f"Content-Disposition: {disposition}"]
    if part.content_type is not None:
        lines.append(f"Content-Type: {part.content_type}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def multipart_body(parts: Sequence[FormPart]) -> bytes:
    body = b"".join(part_header(part) + part.content + b"\r\n" for part in parts)
    return body + f"--{BOUNDARY}--\r\n".encode()


def closing() -> bytes:
    return f"\r\n--{BOUNDARY}--\r\n".encode()


async def chunked(data: bytes, size: int = 65536) -> AsyncIterator[bytes]:
    """The body as a server would stream it."""
    for start in range(0, len(data), size):
        yield data[start : start + size]


class CountingStream:
    """An async body that records how far the reader consumed it."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self.chunks = chunks
        self.consumed = 0

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.consumed += 1
            yield chunk
