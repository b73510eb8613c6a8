"""Recognise an upload's real type from its first bytes (magic numbers), never from its name.

The declared Content-Type and the filename are chosen by the client and prove nothing; the bytes are
what the decoders and the networks will see. Only the formats of contract section 7 are recognised,
and PDF documents (an addition, for LinkedIn's document posts): anything else is `None`, which
the upload route answers with 415.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MediaKind = Literal["image", "gif", "video", "document"]

# Every signature below fits in the first 32 bytes except WebM's, whose DocType sits inside the EBML
# header. Writers put it within the first ~40 bytes, but the header may legally carry Void or CRC
# elements first, so keep a generous window: it costs 4 KiB per file in flight.
HEAD_BYTES = 4096


@dataclass(frozen=True)
class Sniffed:
    """What the first bytes of a file say it is."""

    mime_type: str
    kind: MediaKind


JPEG = Sniffed("image/jpeg", "image")
PNG = Sniffed("image/png", "image")
WEBP = Sniffed("image/webp", "image")
GIF = Sniffed("image/gif", "gif")
MP4 = Sniffed("video/mp4", "video")
QUICKTIME = Sniffed("video/quicktime", "video")
WEBM = Sniffed("video/webm", "video")
PDF = Sniffed("application/pdf", "document")

# ISO 32000-1 section 7.5.2: a PDF's first line is its header, `%PDF-` and the version (1.0 to
# 1.7, or 2.0 in ISO 32000-2). Readers tolerate bytes before it; we do not: a file that starts
# otherwise is refused rather than guessed at.
_PDF_HEADER = b"%PDF-"

# ISO-BMFF brands that mean "an MP4 a video decoder can read" (ISO/IEC 14496-12 and -14, Apple's
# M4V, DASH segments). `M4A ` is deliberately included through `isom`: audio-only files sniff as MP4
# and are rejected by inspection for having no video stream, which is the 422 the contract wants.
_MP4_BRANDS = frozenset(
    {
        b"isom",
        b"iso2",
        b"iso3",
        b"iso4",
        b"iso5",
        b"iso6",
        b"mp41",
        b"mp42",
        b"avc1",
        b"M4V ",
        b"M4VH",
        b"M4VP",
        b"dash",
    }
)
_QUICKTIME_BRAND = b"qt  "
# HEIF/AVIF stills share the `ftyp` box; their major brand wins even if an MP4 brand is listed as
# compatible, because a video demuxer would find no playable track in them.
_IMAGE_BRANDS = frozenset({b"heic", b"heix", b"heim", b"heis", b"mif1", b"msf1", b"avif", b"avis"})
# Pre-`ftyp` QuickTime files (before 2001) start directly with one of these atoms.
_CLASSIC_QUICKTIME_ATOMS = frozenset({b"moov", b"mdat", b"wide", b"pnot"})

_PDF_VERSIONS = frozenset({b"1.0", b"1.1", b"1.2", b"1.3", b"1.4", b"1.5", b"1.6", b"1.7", b"2.0"})
_EBML_MAGIC = b"\x1a\x45\xdf\xa3"
_EBML_DOCTYPE_ID = 0x4282


def sniff(head: bytes) -> Sniffed | None:
    """The accepted type the first bytes (ideally `HEAD_BYTES` of them) prove, or None."""
    if head.startswith(b"\xff\xd8\xff"):
        return JPEG
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if head.startswith((b"GIF87a", b"GIF89a")):
        return GIF
    # RIFF container whose form type is WEBP and whose first chunk is a VP8 flavour.
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP" and head[12:15] == b"VP8":
        return WEBP
    if head.startswith(_PDF_HEADER) and head[5:8] in _PDF_VERSIONS:
        return PDF
    if head.startswith(_EBML_MAGIC):
        return WEBM if _ebml_doctype(head) == b"webm" else None
    return _sniff_iso_bmff(head)


def _sniff_iso_bmff(head: bytes) -> Sniffed | None:
    if len(head) < 12:
        return None
    box_size = int.from_bytes(head[:4], "big")
    box_type = head[4:8]
    if box_type == b"ftyp":
        # size 1 would mean a 64-bit size follows; nobody writes that for ftyp, so treat as junk.
        if box_size < 16 and box_size != 0:
            return None
        major = head[8:12]
        end = len(head) if box_size == 0 else min(box_size, len(head))
        compatible = [head[i : i + 4] for i in range(16, end - 3, 4)]
        if major == _QUICKTIME_BRAND:
            return QUICKTIME
        if major in _MP4_BRANDS:
            return MP4
        if major in _IMAGE_BRANDS:
            return None
        if _QUICKTIME_BRAND in compatible:
            return QUICKTIME
        if any(brand in _MP4_BRANDS for brand in compatible):
            return MP4
        return None
    # A classic atom's size is 0 (to end of file), 1 (64-bit size follows) or at least its header.
    if box_type in _CLASSIC_QUICKTIME_ATOMS and (box_size in (0, 1) or box_size >= 8):
        return QUICKTIME
    return None


def _read_vint(data: bytes, pos: int, *, keep_marker: bool) -> tuple[int, int] | None:
    """An EBML variable-length integer at `pos`: (value, next position), or None if cut short."""
    if pos >= len(data):
        return None
    first = data[pos]
    if first == 0:
        return None  # longer than 8 bytes: not valid in an EBML header
    length = 1
    while not first & (0x80 >> (length - 1)):
        length += 1
    if pos + length > len(data):
        return None
    value = first if keep_marker else first & (0xFF >> length)
    for byte in data[pos + 1 : pos + length]:
        value = (value << 8) | byte
    return value, pos + length


def _ebml_doctype(head: bytes) -> bytes | None:
    """The DocType string of the EBML header at the start of `head`, if it is within reach."""
    size = _read_vint(head, len(_EBML_MAGIC), keep_marker=False)
    if size is None:
        return None
    header_size, pos = size
    end = min(pos + header_size, len(head))
    while pos < end:
        element_id = _read_vint(head, pos, keep_marker=True)
        if element_id is None:
            return None
        eid, pos = element_id
        element_size = _read_vint(head, pos, keep_marker=False)
        if element_size is None:
            return None
        length, pos = element_size
        if eid == _EBML_DOCTYPE_ID:
            if pos + length > len(head):
                return None
            # EBML strings may be padded with NULs.
            return head[pos : pos + length].rstrip(b"\x00")
        pos += length
    return None
