from __future__ import annotations

from collections.abc import Callable

import pytest

from pressroom.media.sniff import HEAD_BYTES
from pressroom.media.sniff import Sniffed
from pressroom.media.sniff import sniff

from . import factories


def ebml_header(doctype: bytes, *, void_before: int = 0) -> bytes:
    """An EBML header: EBMLVersion 1, optional Void padding, then the DocType."""
    children = b"\x42\x86\x81\x01"
    if void_before:
        children += b"\xec" + bytes([0x80 | void_before]) + bytes(void_before)
    children += b"\x42\x82" + bytes([0x80 | len(doctype)]) + doctype
    return b"\x1a\x45\xdf\xa3" + bytes([0x80 | len(children)]) + children


def ftyp(major: bytes, *compatible: bytes) -> bytes:
    payload = major + b"\x00\x00\x02\x00" + b"".join(compatible)
    return (8 + len(payload)).to_bytes(4, "big") + b"ftyp" + payload + b"\x00\x00\x00\x08free"


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (factories.jpeg_bytes, Sniffed("image/jpeg", "image")),
        (factories.png_bytes, Sniffed("image/png", "image")),
        (factories.webp_bytes, Sniffed("image/webp", "image")),
        (factories.gif_bytes, Sniffed("image/gif", "gif")),
        (lambda: factories.animated_bytes("GIF", 3, 100), Sniffed("image/gif", "gif")),
        (lambda: factories.animated_bytes("WEBP", 3, 100), Sniffed("image/webp", "image")),
    ],
    ids=["jpeg", "png", "webp", "gif", "animated-gif", "animated-webp"],
)
def test_images_are_recognised_by_their_magic_bytes(
    make: Callable[[], bytes], expected: Sniffed
) -> None:
    assert sniff(make()[:HEAD_BYTES]) == expected


def test_mp4_made_by_ffmpeg_is_mp4() -> None:
    assert sniff(factories.mp4_bytes()[:HEAD_BYTES]) == Sniffed("video/mp4", "video")


def test_quicktime_made_by_ffmpeg_is_quicktime() -> None:
    assert sniff(factories.mov_bytes()[:HEAD_BYTES]) == Sniffed("video/quicktime", "video")


@pytest.mark.parametrize(
    "make", [factories.webm_bytes, factories.vp9_webm_bytes], ids=["vp8", "vp9"]
)
def test_webm_made_by_ffmpeg_is_webm(make: Callable[[], bytes]) -> None:
    assert sniff(make()[:HEAD_BYTES]) == Sniffed("video/webm", "video")


def test_matroska_that_is_not_webm_is_unsupported() -> None:
    assert sniff(factories.matroska_bytes()[:HEAD_BYTES]) is None
    assert sniff(ebml_header(b"matroska")) is None


def test_webm_doctype_after_void_padding_is_found() -> None:
    assert sniff(ebml_header(b"webm", void_before=40)) == Sniffed("video/webm", "video")


def test_ebml_header_cut_before_its_doctype_is_unsupported() -> None:
    assert sniff(ebml_header(b"webm")[:8]) is None


@pytest.mark.parametrize(
    "brands",
    [(b"isom",), (b"mp42", b"isom"), (b"avc1",), (b"M4V ", b"M4V "), (b"dash", b"iso6")],
    ids=["isom", "mp42", "avc1", "m4v", "dash"],
)
def test_iso_bmff_video_brands_are_mp4(brands: tuple[bytes, ...]) -> None:
    assert sniff(ftyp(*brands)) == Sniffed("video/mp4", "video")


def test_unknown_major_brand_with_mp4_compatible_brand_is_mp4() -> None:
    assert sniff(ftyp(b"3gp5", b"3gp5", b"isom")) == Sniffed("video/mp4", "video")


@pytest.mark.parametrize(
    "content",
    [
        b"\x00\x00\x00\x08wide\x00\x01\x00\x00mdat",
        b"\x00\x00\x10\x00moov\x00\x00\x00\x6cmvhd",
        b"\x00\x00\x00\x00mdat" + bytes(8),
    ],
    ids=["wide", "moov", "mdat-to-eof"],
)
def test_classic_quicktime_atoms_are_quicktime(content: bytes) -> None:
    assert sniff(content) == Sniffed("video/quicktime", "video")


@pytest.mark.parametrize(
    "content",
    [
        ftyp(b"heic", b"mif1", b"heic"),
        ftyp(b"avif", b"avif", b"mif1", b"miaf"),
        ftyp(b"crx ", b"crx "),
    ],
    ids=["heic", "avif", "canon-raw"],
)
def test_other_iso_bmff_files_are_unsupported(content: bytes) -> None:
    assert sniff(content) is None


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\xff\xd8",
        b"hello, this is a text file pretending to be a video\n",
        b"PK\x03\x04\x14\x00",
        b"%PDF-3.1\n",
        b"RIFF\x24\x00\x00\x00WAVEfmt ",
        b"BM" + bytes(60),
        b"\x00\x00\x00\x08junk" + bytes(8),
    ],
    ids=["empty", "short-jpeg", "text", "zip", "pdf-3.1", "wav", "bmp", "unknown-atom"],
)
def test_anything_else_is_unsupported(content: bytes) -> None:
    assert sniff(content) is None
