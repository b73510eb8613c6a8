"""Stream a multipart/form-data upload to staging files, enforcing types and sizes on the way.

The body is fed to python-multipart's push parser in batches of received pieces, on a worker
thread one batch behind the event loop, so that hashing and disk writes never hold up the event
loop and run beside its receiving; each file part goes straight to its own staging file while
its SHA-256 and size are computed, so memory stays flat (a few batches) whatever the file size.
The type is sniffed from the first bytes and the size limits are checked as bytes arrive: an
oversized upload is refused within one received piece of its limit, without reading the rest of
the body.

With `write_back` (local storage, where a staged file is made durable in place), the disk is asked
to start writing each staging file every few MiB while it arrives, so the fsync before the asset is
recorded finds little left to write, and what is on disk of a large video leaves the page cache
(media/write_back.py).

All or nothing (contract section 7): when any part is refused, every file staged for the request
is deleted before the error propagates.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import os
import tempfile
import unicodedata
from collections.abc import AsyncIterable
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from typing import BinaryIO

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser
from python_multipart.multipart import MultipartState
from python_multipart.multipart import parse_options_header

from pressroom.kit.errors import FieldError
from pressroom.kit.errors import PressroomError
from pressroom.kit.errors import field_error
from pressroom.media.inspect import PROVED_BY_INDEX
from pressroom.media.sniff import HEAD_BYTES
from pressroom.media.sniff import MediaKind
from pressroom.media.sniff import Sniffed
from pressroom.media.sniff import sniff
from pressroom.media.write_back import AVAILABLE as WRITE_BACK_AVAILABLE
from pressroom.media.write_back import MiB
from pressroom.media.write_back import WriteBack

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

GiB = 1024 * MiB

FIELD_NAME = "files"
# Small pieces (the multipart framing, a slow client's trickle) are gathered in this buffer so
# the disk sees few small writes; pieces larger than it (a server hands over ~256 KB at a time)
# go to the file directly, without a copy into the buffer.
_WRITE_BUFFER = 64 * 1024
# Received pieces are handed to the parsing thread in batches of up to this size: one thread
# round trip per batch instead of per piece. A batch also ends where a size limit could be
# crossed, so an oversized file is still refused within one piece of its limit.
_BATCH_BYTES = 1024 * 1024
_MAX_FILENAME_CHARS = 255


@dataclass(frozen=True)
class UploadLimits:
    """Size and count limits of one upload request (contract section 7 defaults)."""

    image_bytes: int = 20 * MiB
    gif_bytes: int = 15 * MiB
    video_bytes: int = 1 * GiB
    request_bytes: int = 2 * GiB
    max_files: int = 10
    # LinkedIn, the network that takes documents, takes them up to 100 MB (Documents API).
    document_bytes: int = 100 * 1000 * 1000

    def for_kind(self, kind: MediaKind) -> int:
        return {
            "image": self.image_bytes,
            "gif": self.gif_bytes,
            "video": self.video_bytes,
            "document": self.document_bytes,
        }[kind]


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
    *,
    write_back: bool = False,
) -> list[StagedFile]:
    """Receive every `files` part of a multipart body into `staging_dir`; all or nothing.

    With `write_back` (for staged files that will be made durable where they are), the disk
    starts writing each file while it arrives, so that making it durable later is quick."""
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
    receiver = _Receiver(staging_dir, limits, write_back)
    feeder: _Feeder | None = None
    try:
        feeder = _Feeder(receiver.parser_for(boundary))
        received = 0
        batch: list[bytes] = []
        batched = 0
        async for chunk in stream:
            if not chunk:
                continue
            if received + len(chunk) > limits.request_bytes:
                # Parse up to the limit first, so the error names the file it falls in.
                allowed = limits.request_bytes - received
                if allowed:
                    batch.append(chunk[:allowed])
                await feeder.finish(batch)
                raise receiver.request_too_large()
            received += len(chunk)
            batch.append(chunk)
            batched += len(chunk)
            if batched >= min(_BATCH_BYTES, receiver.headroom() - feeder.in_flight):
                await feeder.parse(batch)
                batch, batched = [], 0
        await feeder.finish(batch)
        if feeder.parser.state != MultipartState.END:
            raise _malformed("the multipart body ended before its closing boundary")
        if not receiver.staged:
            raise field_error(FIELD_NAME, "required", "Send at least one file in `files`.")
        return list(receiver.staged)
    except BaseException as exc:
        # Includes cancellation (client gone): nothing of this request may stay behind. The
        # batch being parsed is waited for first (blocking: a cancelled task cannot be relied on
        # to await), or it could stage a file after the clean-up.
        if feeder is not None:
            feeder.abandon()
        receiver.discard()
        if isinstance(exc, FormParserError):
            raise _malformed(str(exc)) from exc
        raise


# The threads that parse, hash and write received batches (one batch per upload at a time).
_PARSERS = concurrent.futures.ThreadPoolExecutor(
    max_workers=min(32, (os.cpu_count() or 1) + 4), thread_name_prefix="pressroom-upload"
)


class _Feeder:
    """Parses batches on a worker thread, one batch behind the event loop's receiving.

    While the thread parses, hashes and writes one batch (hashing and writing release the GIL),
    the event loop receives the next, so where the process has two cores both work: an upload
    of 1 GiB took 9-18 % less time than with the loop waiting for each batch, and no more on
    one core (bench/README.md, media). At most one batch is in flight: the next is handed over
    once it has been parsed, and its error (a refused file) is raised then. The bytes in flight
    count against the headroom of a size limit, so a batch that could cross a limit is parsed
    before anything more is received, and an oversized file is still refused within one
    received piece of its limit."""

    def __init__(self, parser: MultipartParser) -> None:
        self.parser = parser
        self.running: concurrent.futures.Future[None] | None = None
        self.in_flight = 0

    async def parse(self, batch: list[bytes]) -> None:
        """Hand `batch` to the thread once the batch before it has been parsed."""
        await self.drain()
        if batch:
            self.running = _PARSERS.submit(_write_all, self.parser, batch)
            self.in_flight = sum(map(len, batch))

    async def finish(self, batch: list[bytes]) -> None:
        """Parse the last batch and wait until everything handed over has been parsed."""
        await self.parse(batch)
        await self.drain()

    async def drain(self) -> None:
        """Wait for the batch in flight; its error (a refused file) is raised here."""
        if self.running is not None:
            await asyncio.wrap_future(self.running)
            self.running = None
            self.in_flight = 0

    def abandon(self) -> None:
        """Block until the batch in flight (if the wait for it was cancelled) has ended."""
        if self.running is not None:
            concurrent.futures.wait([self.running])
            self.running = None


def _write_all(parser: MultipartParser, pieces: list[bytes]) -> None:
    # One piece for the whole batch: the parser, the hash and the file each take it in one call
    # instead of four. Each of those calls gives the GIL up and must take it back from the event
    # loop, and those waits, not the copy, were what held the thread up (bench/README.md, media).
    parser.write(pieces[0] if len(pieces) == 1 else b"".join(pieces))


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


def format_size(size: int) -> str:
    """`20 MiB`, `64 KiB`, or `1234 bytes` when no unit divides it evenly."""
    for unit, factor in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"


def _claims_pdf(part: _Part) -> bool:
    """Whether the client said the part is a PDF, by its Content-Type or its file name."""
    declared = (part.declared or "").split(";", 1)[0].strip().lower()
    return declared == "application/pdf" or part.filename.lower().endswith(".pdf")


def _malformed(reason: str) -> PressroomError:
    return field_error(FIELD_NAME, "malformed", f"The multipart body is malformed: {reason}.")


def file_error(
    code: str, index: int, filename: str, field_code: str, reason: str
) -> PressroomError:
    """A problem about one file: `detail` names it, `errors[0].field` says which part
    (`files[2]`, counting the request's `files` parts from 0)."""
    return PressroomError(
        code,
        detail=f'File "{filename}" {reason}.',
        errors=[FieldError(f"{FIELD_NAME}[{index}]", field_code, reason)],
    )


class _Part:
    """The file part being received: its staging file, running hash and size, sniffed type."""

    def __init__(
        self, index: int, filename: str, declared: str | None, staging_dir: Path, write_back: bool
    ) -> None:
        self.index = index
        self.filename = filename
        self.declared = declared
        fd, name = tempfile.mkstemp(prefix="upload-", suffix=".part", dir=staging_dir)
        self.path = Path(name)
        self.file: BinaryIO = os.fdopen(fd, "wb", buffering=_WRITE_BUFFER)
        self.sha256 = hashlib.sha256()
        self.size = 0
        self.head = bytearray()
        self.sniffed: Sniffed | None = None
        self.write_back = (
            WriteBack(self.file.fileno()) if write_back and WRITE_BACK_AVAILABLE else None
        )

    def add(self, view: memoryview) -> None:
        """Hash and write `view` (the part's next bytes, already counted in `size`)."""
        self.sha256.update(view)
        self.file.write(view)
        if self.write_back is not None and self.write_back.due(self.size):
            self.advance_write_back()

    def advance_write_back(self) -> None:
        assert self.write_back is not None
        # Up to what has reached the file: the write buffer may still hold a few bytes.
        self.file.flush()
        # Inspection will not read it back: what is on disk can leave the page cache.
        releases = self.sniffed is not None and self.sniffed.mime_type in PROVED_BY_INDEX
        self.write_back.advance(self.size, release=releases)

    def finish(self) -> None:
        """Write what is buffered, hand the rest to the disk (with write-back) and close."""
        if self.write_back is not None and self.size > self.write_back.written_back:
            self.advance_write_back()
        self.close()

    def close(self) -> None:
        if not self.file.closed:
            self.file.close()


class _Receiver:
    """Parser callbacks: turns multipart events into staged files. Runs in a worker thread."""

    def __init__(self, staging_dir: Path, limits: UploadLimits, write_back: bool = False) -> None:
        self.staging_dir = staging_dir
        self.limits = limits
        self.write_back = write_back
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
        self.current = _Part(self.parts - 1, filename, declared, self.staging_dir, self.write_back)

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
        part.add(view)

    def on_part_end(self) -> None:
        part = self.current
        if part is None:  # pragma: no cover - parts always begin with headers
            return
        if part.size == 0:
            raise file_error("unprocessable_media", part.index, part.filename, "empty", "is empty")
        sniffed = part.sniffed or self.sniff(part)
        self.check_size(part, sniffed)
        part.finish()
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

    def headroom(self) -> int:
        """How many more bytes can arrive before some file could cross its size limit: the rest
        of the current file's allowance, and a whole allowance of the smallest kind for a file
        whose type is not known yet (it may begin in the very next bytes). Read by the event
        loop between batches, while the parser may be working on the batch in flight: its
        figures are then a little behind, which `_Feeder.in_flight` makes up for."""
        limits = self.limits
        room = min(limits.image_bytes, limits.gif_bytes, limits.video_bytes, limits.document_bytes)
        part = self.current
        if part is not None and part.sniffed is not None:
            room = min(room, limits.for_kind(part.sniffed.kind) - part.size)
        return room

    def sniff(self, part: _Part) -> Sniffed:
        sniffed = sniff(bytes(part.head))
        if sniffed is None and _claims_pdf(part):
            # An accepted type, claimed (by its Content-Type or name), that the bytes do not
            # bear out: not an unsupported type but a broken or mislabelled file.
            raise file_error(
                "unprocessable_media",
                part.index,
                part.filename,
                "undecodable",
                "is declared a PDF but is not one: it does not start with a PDF header "
                "(%PDF-1.x or %PDF-2.0)",
            )
        if sniffed is None:
            raise file_error(
                "unsupported_media_type",
                part.index,
                part.filename,
                "unsupported_type",
                "is not JPEG, PNG, WebP, GIF, MP4, QuickTime, WebM or PDF",
            )
        return sniffed

    def check_size(self, part: _Part, sniffed: Sniffed) -> None:
        limit = self.limits.for_kind(sniffed.kind)
        if part.size > limit:
            label = {"image": "image", "gif": "GIF", "video": "video", "document": "document"}[
                sniffed.kind
            ]
            raise file_error(
                "payload_too_large",
                part.index,
                part.filename,
                "too_large",
                f"exceeds the {label} size limit of {format_size(limit)}",
            )

    def request_too_large(self) -> PressroomError:
        limit = format_size(self.limits.request_bytes)
        part = self.current
        if part is None:
            return PressroomError(
                "payload_too_large", detail=f"The request exceeds the size limit of {limit}."
            )
        return PressroomError(
            "payload_too_large",
            detail=f"The request exceeds the size limit of {limit} while receiving "
            f'file "{part.filename}".',
            errors=[
                FieldError(
                    f"{FIELD_NAME}[{part.index}]",
                    "too_large",
                    f"the request exceeds the size limit of {limit} within this file",
                )
            ],
        )

    def discard(self) -> None:
        if self.current is not None:
            self.current.close()
            self.current.path.unlink(missing_ok=True)
            self.current = None
        discard_staged(self.staged)
        self.staged.clear()
