"""Stream a multipart/form-data upload to staging files, enforcing types and sizes on the way.

The body is fed chunk by chunk to python-multipart's push parser; each file part goes straight to
its own staging file through a buffered writer while its SHA-256 and size are computed, so memory
stays flat whatever the file size. The type is sniffed from the first bytes and the size limits are
checked as bytes arrive: an oversized upload is refused the moment it crosses its limit, without
reading the rest of the body.

All or nothing (contract section 7): when any part is refused, every file staged for the request
is deleted before the error propagates.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import unicodedata
from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import anyio.to_thread
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, MultipartState, parse_options_header

from pressroom.kit.errors import PressroomError, field_error
from pressroom.media.sniff import HEAD_BYTES, MediaKind, Sniffed, sniff

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

MiB = 1024 * 1024
GiB = 1024 * MiB

FIELD_NAME = "files"
# Staged bytes pass through this buffer: large enough that the disk sees few big writes, small
# enough that ten files in flight stay far below the memory a request may use.
_WRITE_BUFFER = 256 * 1024
_MAX_FILENAME_CHARS = 255


@dataclass(frozen=True)
class UploadLimits:
    """Size and count limits of one upload request (contract section 7 defaults)."""

    image_bytes: int = 20 * MiB
    gif_bytes: int = 15 * MiB
    video_bytes: int = 1 * GiB
    request_bytes: int = 2 * GiB
    max_files: int = 10

    def for_kind(self, kind: MediaKind) -> int:
        return {"image": self.image_bytes, "gif": self.gif_bytes, "video": self.video_bytes}[kind]


@dataclass(frozen=True)
class StagedFile:
    """One received file, complete on disk in the staging directory, not yet inspected."""

    filename: str
    path: Path
    size_bytes: int
    sha256: str
    sniffed: Sniffed
    declared_content_type: str | None


async def read_upload(
    stream: AsyncIterable[bytes],
    content_type: str,
    staging_dir: Path,
    limits: UploadLimits | None = None,
) -> list[StagedFile]:
    """Receive every `files` part of a multipart body into `staging_dir`; all or nothing."""
    limits = limits or UploadLimits()
    mime, params = parse_options_header(content_type)
    if mime != b"multipart/form-data":
        raise PressroomError(
            "unsupported_media_type",
            detail="Upload media as multipart/form-data with one `files` part per file.",
        )
    boundary = params.get(b"boundary")
    if not boundary:
        raise _malformed("the multipart Content-Type has no boundary")
    receiver = _Receiver(staging_dir, limits)
    try:
        parser = receiver.parser_for(boundary)
        received = 0
        async for chunk in stream:
            if not chunk:
                continue
            if received + len(chunk) > limits.request_bytes:
                # Parse up to the limit first, so the error names the file it falls in.
                allowed = limits.request_bytes - received
                if allowed:
                    await anyio.to_thread.run_sync(parser.write, chunk[:allowed])
                raise receiver.request_too_large()
            received += len(chunk)
            # Parsing runs the callbacks, which write to disk: keep that off the event loop.
            await anyio.to_thread.run_sync(parser.write, chunk)
        if parser.state != MultipartState.END:
            raise _malformed("the multipart body ended before its closing boundary")
        if not receiver.staged:
            raise field_error(FIELD_NAME, "required", "Send at least one file in `files`.")
        return list(receiver.staged)
    except FormParserError as exc:
        receiver.discard()
        raise _malformed(str(exc)) from exc
    except BaseException:
        # Includes cancellation (client gone): nothing of this request may stay behind. Done
        # synchronously because a cancelled task cannot await a worker thread any more.
        receiver.discard()
        raise


def discard_staged(files: Iterable[StagedFile]) -> None:
    """Delete staged files, e.g. when inspection rejects one file of an accepted batch."""
    for staged in files:
        staged.path.unlink(missing_ok=True)


def canonical_digest(files: list[StagedFile]) -> str:
    """SHA-256 identifying an upload by its files' names and contents, in order (idempotency)."""
    # JSON gives an unambiguous encoding: no name can be crafted to collide with another split.
    canonical = json.dumps([[f.filename, f.sha256] for f in files], separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def sanitize_filename(raw: str) -> str:
    """The client's file name made safe to display and store: last path segment, no controls."""
    name = raw.replace("\\", "/").rsplit("/", 1)[-1]
    name = unicodedata.normalize("NFC", name)
    name = "".join(ch for ch in name if not unicodedata.category(ch).startswith("C"))
    name = name.strip().strip(".").strip()
    return name[:_MAX_FILENAME_CHARS] or "upload"


def _format_size(size: int) -> str:
    for unit, factor in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"


def _malformed(reason: str) -> PressroomError:
    return field_error(FIELD_NAME, "malformed", f"The multipart body is malformed: {reason}.")


class _Part:
    """The file part being received: its staging file, running hash and size, sniffed type."""

    def __init__(self, filename: str, declared: str | None, staging_dir: Path) -> None:
        self.filename = filename
        self.declared = declared
        fd, name = tempfile.mkstemp(prefix="upload-", suffix=".part", dir=staging_dir)
        self.path = Path(name)
        self.file: BinaryIO = os.fdopen(fd, "wb", buffering=_WRITE_BUFFER)
        self.sha256 = hashlib.sha256()
        self.size = 0
        self.head = bytearray()
        self.sniffed: Sniffed | None = None

    def close(self) -> None:
        if not self.file.closed:
            self.file.close()


class _Receiver:
    """Parser callbacks: turns multipart events into staged files. Runs in a worker thread."""

    def __init__(self, staging_dir: Path, limits: UploadLimits) -> None:
        self.staging_dir = staging_dir
        self.limits = limits
        self.staged: list[StagedFile] = []
        self.current: _Part | None = None
        self.headers: dict[str, str] = {}
        self.header_field = bytearray()
        self.header_value = bytearray()
        self.parts = 0

    def parser_for(self, boundary: bytes) -> MultipartParser:
        callbacks: MultipartCallbacks = {
            "on_part_begin": self.on_part_begin,
            "on_header_field": self.on_header_field,
            "on_header_value": self.on_header_value,
            "on_header_end": self.on_header_end,
            "on_headers_finished": self.on_headers_finished,
            "on_part_data": self.on_part_data,
            "on_part_end": self.on_part_end,
        }
        return MultipartParser(boundary, callbacks)

    # -- parser callbacks ------------------------------------------------------------------------

    def on_part_begin(self) -> None:
        self.headers = {}

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header_field += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]

    def on_header_end(self) -> None:
        name = self.header_field.decode("latin-1").strip().lower()
        self.headers[name] = self.header_value.decode("latin-1").strip()
        self.header_field.clear()
        self.header_value.clear()

    def on_headers_finished(self) -> None:
        disposition, params = parse_options_header(self.headers.get("content-disposition"))
        field_name = params.get(b"name")
        if disposition != b"form-data" or field_name is None:
            raise _malformed("a part has no Content-Disposition form-data name")
        # Header bytes are latin-1 on the wire per python-multipart; browsers send UTF-8 names.
        name = field_name.decode("utf-8", "replace")
        if name != FIELD_NAME:
            raise field_error(
                name, "unknown_field", f"Unexpected form field {name!r}: only `files` is accepted."
            )
        self.parts += 1
        if self.parts > self.limits.max_files:
            raise field_error(
                FIELD_NAME,
                "too_many",
                f"At most {self.limits.max_files} files can be uploaded in one request.",
            )
        filename = sanitize_filename(params.get(b"filename", b"").decode("utf-8", "replace"))
        declared = self.headers.get("content-type") or None
        self.current = _Part(filename, declared, self.staging_dir)

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        part = self.current
        if part is None:  # pragma: no cover - the parser sends data only after headers
            return
        view = memoryview(data)[start:end]
        part.size += len(view)
        if part.sniffed is None:
            part.head += view[: HEAD_BYTES - len(part.head)]
            if len(part.head) >= HEAD_BYTES:
                part.sniffed = self.sniff(part)
        if part.sniffed is not None:
            self.check_size(part, part.sniffed)
        part.sha256.update(view)
        part.file.write(view)

    def on_part_end(self) -> None:
        part = self.current
        if part is None:  # pragma: no cover - parts always begin with headers
            return
        if part.size == 0:
            raise PressroomError("unprocessable_media", detail=f'File "{part.filename}" is empty.')
        sniffed = part.sniffed or self.sniff(part)
        self.check_size(part, sniffed)
        part.close()
        self.current = None
        self.staged.append(
            StagedFile(
                filename=part.filename,
                path=part.path,
                size_bytes=part.size,
                sha256=part.sha256.hexdigest(),
                sniffed=sniffed,
                declared_content_type=part.declared,
            )
        )

    # -- checks and cleanup ----------------------------------------------------------------------

    def sniff(self, part: _Part) -> Sniffed:
        sniffed = sniff(bytes(part.head))
        if sniffed is None:
            raise PressroomError(
                "unsupported_media_type",
                detail=f'File "{part.filename}" is not JPEG, PNG, WebP, GIF, MP4, QuickTime '
                "or WebM.",
            )
        return sniffed

    def check_size(self, part: _Part, sniffed: Sniffed) -> None:
        limit = self.limits.for_kind(sniffed.kind)
        if part.size > limit:
            label = {"image": "image", "gif": "GIF", "video": "video"}[sniffed.kind]
            raise PressroomError(
                "payload_too_large",
                detail=f'File "{part.filename}" exceeds the {label} size limit of '
                f"{_format_size(limit)}.",
            )

    def request_too_large(self) -> PressroomError:
        limit = _format_size(self.limits.request_bytes)
        if self.current is not None:
            detail = (
                f"The request exceeds the size limit of {limit} while receiving "
                f'file "{self.current.filename}".'
            )
        else:
            detail = f"The request exceeds the size limit of {limit}."
        return PressroomError("payload_too_large", detail=detail)

    def discard(self) -> None:
        if self.current is not None:
            self.current.close()
            self.current.path.unlink(missing_ok=True)
            self.current = None
        discard_staged(self.staged)
        self.staged.clear()
