from __future__ import annotations

import ctypes
import hashlib
import mmap
import sys
import threading
import tracemalloc
from collections.abc import AsyncIterator
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pressroom.kit.errors import PressroomError
from pressroom.media import multipart
from pressroom.media.inspect import inspect_file
from pressroom.media.multipart import MiB
from pressroom.media.multipart import StagedFile
from pressroom.media.multipart import UploadLimits
from pressroom.media.multipart import canonical_digest
from pressroom.media.multipart import read_upload
from pressroom.media.multipart import sanitize_filename
from pressroom.media.sniff import Sniffed

from . import factories
from .factories import CONTENT_TYPE
from .factories import CountingStream
from .factories import FormPart
from .factories import chunked
from .factories import multipart_body

pytestmark = pytest.mark.anyio


@pytest.fixture
def staging(tmp_path: Path) -> Path:
    path = tmp_path / "staging"
    path.mkdir()
    return path


def leftovers(staging: Path) -> list[Path]:
    return list(staging.iterdir())


async def receive(
    staging: Path,
    parts: list[FormPart],
    limits: UploadLimits | None = None,
    chunk_size: int = 65536,
) -> list[StagedFile]:
    return await read_upload(
        chunked(multipart_body(parts), chunk_size), CONTENT_TYPE, staging, limits or UploadLimits()
    )


def png_part(filename: str = "photo.png", size: tuple[int, int] = (64, 48)) -> FormPart:
    return FormPart(factories.png_bytes(size), filename, "image/png")


# -- accepted uploads -----------------------------------------------------------------------------


async def test_file_is_staged_with_its_hash_size_and_sniffed_type(staging: Path) -> None:
    content = factories.jpeg_bytes()

    [staged] = await receive(staging, [FormPart(content, "cat.jpg", "image/jpeg")])

    assert staged.filename == "cat.jpg"
    assert staged.path.parent == staging
    assert staged.path.read_bytes() == content
    assert staged.size_bytes == len(content)
    assert staged.sha256 == hashlib.sha256(content).hexdigest()
    assert staged.sniffed == Sniffed("image/jpeg", "image")
    assert staged.declared_content_type == "image/jpeg"


async def test_png_named_and_declared_as_mp4_is_sniffed_and_inspected_as_png(
    staging: Path,
) -> None:
    part = FormPart(factories.png_bytes((20, 10)), "movie.mp4", "video/mp4")

    [staged] = await receive(staging, [part])
    info = inspect_file(staged.path, staged.sniffed)

    assert staged.sniffed == Sniffed("image/png", "image")
    assert staged.declared_content_type == "video/mp4"
    assert (info.mime_type, info.width, info.height) == ("image/png", 20, 10)


async def test_several_files_are_staged_in_the_order_sent(staging: Path) -> None:
    parts = [
        png_part("a.png"),
        FormPart(factories.mp4_bytes(), "b.mp4", "video/mp4"),
        FormPart(factories.animated_bytes("GIF", 3, 100), "c.gif", "image/gif"),
        FormPart(factories.webm_bytes(), "d.webm", None),
    ]

    staged = await receive(staging, parts)

    assert [s.filename for s in staged] == ["a.png", "b.mp4", "c.gif", "d.webm"]
    assert [s.sniffed.kind for s in staged] == ["image", "video", "gif", "video"]
    assert [s.path.read_bytes() for s in staged] == [p.content for p in parts]
    assert staged[3].declared_content_type is None


@pytest.mark.parametrize("chunk_size", [1, 7, 4093])
async def test_body_in_awkward_chunks_parses_the_same(staging: Path, chunk_size: int) -> None:
    parts = [png_part("a.png", (30, 30)), FormPart(factories.webm_bytes(), "b.webm", "video/webm")]

    staged = await receive(staging, parts, chunk_size=chunk_size)

    assert [s.path.read_bytes() for s in staged] == [p.content for p in parts]


@pytest.mark.parametrize("chunk_size", [65536, 262139])
async def test_write_back_stages_the_same_bytes(staging: Path, chunk_size: int) -> None:
    # Over 40 MiB in two files, so each starts its write-back to disk several times on the way
    # (every 16 MiB), in pieces that do not divide it evenly.
    video = factories.mp4_bytes()
    big = video + bytes(range(256)) * (41 * MiB // 256)
    parts = [FormPart(big, "big.mp4", "video/mp4"), png_part("small.png")]
    body = multipart_body(parts)

    staged = await read_upload(
        chunked(body, chunk_size), CONTENT_TYPE, staging, UploadLimits(), write_back=True
    )

    assert [s.path.read_bytes() for s in staged] == [p.content for p in parts]
    assert [s.sha256 for s in staged] == [hashlib.sha256(p.content).hexdigest() for p in parts]
    assert [s.size_bytes for s in staged] == [len(p.content) for p in parts]


def resident(path: Path) -> list[bool]:
    """Which 4 KiB pages of `path` are in the page cache (mincore(2) over a mapping of it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = path.stat().st_size
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    vector = ctypes.create_string_buffer(pages)
    with path.open("rb") as file:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, file.fileno(), 0)
        assert address not in (None, ctypes.c_void_p(-1).value)
        try:
            assert libc.mincore(address, size, vector) == 0
        finally:
            libc.munmap(address, size)
    return [bool(byte & 1) for byte in vector.raw]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sync_file_range is Linux's")
@pytest.mark.parametrize(
    ("make", "name", "declared", "released"),
    [
        (factories.mp4_bytes, "big.mp4", "video/mp4", True),
        (factories.webm_bytes, "big.webm", "video/webm", False),
    ],
    ids=["mp4-index-says-all", "webm-read-to-the-end"],
)
async def test_staged_video_leaves_the_page_cache_behind_it_when_inspection_reads_little(
    staging: Path, make: Callable[[], bytes], name: str, declared: str, released: bool
) -> None:
    # 81 MiB: write-back starts at every 16 MiB, and what started the time before last is
    # released, so 16-48 MiB must have left the page cache of an MP4. The first 16 MiB stay
    # (inspection decodes the first picture there), and so does the end (an MP4's index may be
    # there). A WebM is read to its end by inspection: all of it stays.
    big = make() + bytes(range(256)) * (81 * MiB // 256)
    body = multipart_body([FormPart(big, name, declared)])

    [staged] = await read_upload(
        chunked(body, 262139), CONTENT_TYPE, staging, UploadLimits(), write_back=True
    )

    pages = resident(staged.path)
    page = mmap.PAGESIZE
    assert all(pages[: 16 * MiB // page])
    assert all(pages[-16 * MiB // page :])
    assert not any(pages[16 * MiB // page : 48 * MiB // page]) if released else all(pages)
    assert staged.path.read_bytes() == big
    assert staged.sha256 == hashlib.sha256(big).hexdigest()


async def test_file_exactly_at_its_limit_is_accepted(staging: Path) -> None:
    content = factories.png_bytes()
    limits = UploadLimits(image_bytes=len(content))

    [staged] = await receive(staging, [png_part()], limits)

    assert staged.size_bytes == len(content)


async def test_utf8_filename_is_kept_and_paths_are_stripped(staging: Path) -> None:
    parts = [png_part("café 🎉.png"), png_part("../../etc/passwd.png")]

    staged = await receive(staging, parts)

    assert [s.filename for s in staged] == ["café 🎉.png", "passwd.png"]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("photo.jpg", "photo.jpg"),
        ("C:\\Users\\ana\\Desktop\\photo.jpg", "photo.jpg"),
        ("/etc/passwd", "passwd"),
        ("evil\r\nname\x00.png", "evilname.png"),
        ("..", "upload"),
        ("", "upload"),
        ("x" * 300 + ".png", "x" * 255),
    ],
)
def test_filename_is_sanitized_for_display(raw: str, shown: str) -> None:
    assert sanitize_filename(raw) == shown


def test_canonical_digest_depends_on_names_contents_and_order(tmp_path: Path) -> None:
    def staged(name: str, content: bytes) -> StagedFile:
        return StagedFile(
            filename=name,
            path=tmp_path / name,
            size_bytes=len(content),
            sha256=hashlib.sha256(content).hexdigest(),
            sniffed=Sniffed("image/png", "image"),
            declared_content_type=None,
        )

    a, b = staged("a.png", b"one"), staged("b.png", b"two")

    assert canonical_digest([a, b]) == canonical_digest([a, b])
    assert canonical_digest([a, b]) != canonical_digest([b, a])
    assert canonical_digest([a]) != canonical_digest([staged("a.png", b"other")])
    assert canonical_digest([a]) != canonical_digest([staged("renamed.png", b"one")])


# -- malformed requests ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/x-www-form-urlencoded", "image/png", ""],
)
async def test_non_multipart_request_is_415(staging: Path, content_type: str) -> None:
    with pytest.raises(PressroomError) as caught:
        await read_upload(chunked(b"{}"), content_type, staging, UploadLimits())

    assert caught.value.code == "unsupported_media_type"


async def test_multipart_without_boundary_is_400_on_files(staging: Path) -> None:
    body = multipart_body([png_part()])

    with pytest.raises(PressroomError) as caught:
        await read_upload(chunked(body), "multipart/form-data", staging, UploadLimits())

    assert caught.value.code == "validation_failed"
    assert [e.field for e in caught.value.errors] == ["files"]


async def test_body_cut_before_closing_boundary_is_400_and_stages_nothing(staging: Path) -> None:
    body = multipart_body([png_part(), png_part("b.png")])

    with pytest.raises(PressroomError) as caught:
        await read_upload(chunked(body[:-40]), CONTENT_TYPE, staging, UploadLimits())

    assert caught.value.code == "validation_failed"
    assert [e.field for e in caught.value.errors] == ["files"]
    assert leftovers(staging) == []


async def test_garbage_body_is_400(staging: Path) -> None:
    with pytest.raises(PressroomError) as caught:
        await read_upload(chunked(b"this is not multipart"), CONTENT_TYPE, staging, UploadLimits())

    assert caught.value.code == "validation_failed"
    assert [e.field for e in caught.value.errors] == ["files"]


async def test_request_without_files_is_400(staging: Path) -> None:
    with pytest.raises(PressroomError) as caught:
        await receive(staging, [])

    assert caught.value.code == "validation_failed"
    assert [(e.field, e.code) for e in caught.value.errors] == [("files", "required")]


async def test_other_form_field_is_400_naming_it(staging: Path) -> None:
    parts = [png_part(), FormPart(b"hello", None, None, name="caption")]

    with pytest.raises(PressroomError) as caught:
        await receive(staging, parts)

    assert caught.value.code == "validation_failed"
    assert [e.field for e in caught.value.errors] == ["caption"]
    assert leftovers(staging) == []


async def test_more_than_ten_files_is_400_and_stages_nothing(staging: Path) -> None:
    with pytest.raises(PressroomError) as caught:
        await receive(staging, [png_part(f"{n}.png") for n in range(11)])

    assert caught.value.code == "validation_failed"
    assert [(e.field, e.code) for e in caught.value.errors] == [("files", "too_many")]
    assert leftovers(staging) == []


async def test_ten_files_are_accepted(staging: Path) -> None:
    staged = await receive(staging, [png_part(f"{n}.png") for n in range(10)])

    assert len(staged) == 10


# -- rejected files -------------------------------------------------------------------------------


async def test_text_file_named_mp4_is_415_naming_it(staging: Path) -> None:
    part = FormPart(b"just some notes, not a video\n" * 10, "clip.mp4", "video/mp4")

    with pytest.raises(PressroomError) as caught:
        await receive(staging, [part])

    assert caught.value.code == "unsupported_media_type"
    assert '"clip.mp4"' in (caught.value.detail or "")
    assert leftovers(staging) == []


async def test_empty_file_is_422_naming_it(staging: Path) -> None:
    with pytest.raises(PressroomError) as caught:
        await receive(staging, [FormPart(b"", "nothing.png", "image/png")])

    assert caught.value.code == "unprocessable_media"
    assert '"nothing.png"' in (caught.value.detail or "")
    assert leftovers(staging) == []


async def test_batch_with_one_bad_file_stages_nothing(staging: Path) -> None:
    parts = [
        png_part("good-1.png"),
        FormPart(factories.mp4_bytes(), "good-2.mp4", "video/mp4"),
        FormPart(b"PK\x03\x04" + bytes(5000), "bad.jpg", "image/jpeg"),
    ]

    with pytest.raises(PressroomError) as caught:
        await receive(staging, parts)

    assert caught.value.code == "unsupported_media_type"
    assert '"bad.jpg"' in (caught.value.detail or "")
    assert leftovers(staging) == []


def oversized_png_stream(total_chunks: int, chunk_size: int = 65536) -> CountingStream:
    """A PNG part whose body keeps going: header, PNG signature, then zeros, then the end."""
    head = factories.part_header(FormPart(b"", "huge.png", "image/png"))
    first = head + factories.png_bytes()
    chunks = [first] + [bytes(chunk_size)] * total_chunks + [factories.closing()]
    return CountingStream(chunks)


async def test_file_over_its_limit_is_413_while_streaming_and_stages_nothing(
    staging: Path,
) -> None:
    stream = oversized_png_stream(total_chunks=256)  # 16 MiB of body for a 1 MiB limit

    with pytest.raises(PressroomError) as caught:
        await read_upload(stream, CONTENT_TYPE, staging, UploadLimits(image_bytes=1 * MiB))

    assert caught.value.code == "payload_too_large"
    assert caught.value.detail == 'File "huge.png" exceeds the image size limit of 1 MiB.'
    # Headers and the PNG, then 16 chunks of 64 KiB: the 17th chunk crosses 1 MiB. The parser
    # works one batch behind the reader, so at most one more chunk was read, and nothing after.
    assert stream.consumed <= 18 < len(stream.chunks)
    assert leftovers(staging) == []


async def test_gif_limit_applies_to_gifs(staging: Path) -> None:
    content = factories.animated_bytes("GIF", 3, 100)
    limits = UploadLimits(gif_bytes=len(content) - 1)

    with pytest.raises(PressroomError) as caught:
        await receive(staging, [FormPart(content, "anim.gif", "image/gif")], limits)

    assert caught.value.code == "payload_too_large"
    assert "GIF size limit" in (caught.value.detail or "")


async def test_request_over_its_total_limit_is_413(staging: Path) -> None:
    parts = [FormPart(factories.mp4_bytes(), f"{n}.mp4", "video/mp4") for n in range(3)]
    # Room for the first two files and the third one's headers, not for its bytes.
    limits = UploadLimits(request_bytes=len(multipart_body(parts[:2])) + 500)

    with pytest.raises(PressroomError) as caught:
        await receive(staging, parts, limits, chunk_size=1024)

    assert caught.value.code == "payload_too_large"
    assert caught.value.detail == (
        f"The request exceeds the size limit of {limits.request_bytes} bytes "
        'while receiving file "2.mp4".'
    )
    assert leftovers(staging) == []


async def test_client_disconnect_mid_upload_stages_nothing(staging: Path) -> None:
    body = multipart_body([png_part("a.png"), png_part("b.png", (300, 300))])

    async def disconnecting() -> AsyncIterator[bytes]:
        yield body[: len(body) - 100]
        raise OSError("client went away")

    with pytest.raises(OSError, match="client went away"):
        await read_upload(disconnecting(), CONTENT_TYPE, staging, UploadLimits())

    assert leftovers(staging) == []


async def test_the_next_batch_is_received_while_the_thread_parses_one(
    staging: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first batch's parse is held until the reader has asked for the piece after it: a
    # reader that waited for each parse before receiving more would never ask, and time out.
    asked_past_first_batch = threading.Event()
    parsed_batches: list[int] = []

    def held_write_all(parser: Any, pieces: list[bytes]) -> None:
        if not parsed_batches and not asked_past_first_batch.wait(timeout=10):
            raise AssertionError("the reader waited for the parse before receiving more")
        parsed_batches.append(sum(map(len, pieces)))
        original_write_all(parser, pieces)

    original_write_all = multipart._write_all
    monkeypatch.setattr(multipart, "_write_all", held_write_all)
    head = factories.part_header(FormPart(b"", "clip.mp4", "video/mp4"))
    first = head + factories.mp4_bytes()[:64]
    pieces = [first] + [bytes(256 * 1024)] * 8

    async def body() -> AsyncIterator[bytes]:
        yield first
        for index, piece in enumerate(pieces[1:], start=1):
            if sum(map(len, pieces[:index])) >= multipart._BATCH_BYTES:
                asked_past_first_batch.set()
            yield piece
        yield factories.closing()

    [staged] = await read_upload(body(), CONTENT_TYPE, staging, UploadLimits())

    assert asked_past_first_batch.is_set()
    assert len(parsed_batches) >= 2
    assert staged.size_bytes == 64 + 8 * 256 * 1024
    assert (
        staged.sha256
        == hashlib.sha256(factories.mp4_bytes()[:64] + bytes(8 * 256 * 1024)).hexdigest()
    )


# -- memory ---------------------------------------------------------------------------------------


async def test_64_mib_upload_streams_with_flat_memory(staging: Path) -> None:
    chunk_size, chunks = 65536, 1024  # 64 MiB after the video header
    head = factories.part_header(FormPart(b"", "big.mp4", "video/mp4"))
    video_head = factories.mp4_bytes()[:64]

    async def body() -> AsyncIterator[bytes]:
        yield head + video_head
        for _ in range(chunks):
            yield bytes(chunk_size)  # a fresh buffer each time, as a server would hand over
        yield factories.closing()

    tracemalloc.start()
    try:
        [staged] = await read_upload(body(), CONTENT_TYPE, staging, UploadLimits())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert staged.size_bytes == len(video_head) + chunk_size * chunks
    assert staged.path.stat().st_size == staged.size_bytes
    assert peak < 16 * MiB, f"peak Python allocations {peak / MiB:.1f} MiB"
