from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pressroom.media.inspect import MediaInfo
from pressroom.media.inspect import UnprocessableMedia
from pressroom.media.inspect import inspect_file
from pressroom.media.inspect import inspect_file_async
from pressroom.media.sniff import HEAD_BYTES
from pressroom.media.sniff import Sniffed
from pressroom.media.sniff import sniff

from . import factories


def sniffed_file(tmp_path: Path, content: bytes, name: str = "upload.bin") -> tuple[Path, Sniffed]:
    path = tmp_path / name
    path.write_bytes(content)
    sniffed = sniff(content[:HEAD_BYTES])
    assert sniffed is not None
    return path, sniffed


def inspect_bytes(tmp_path: Path, content: bytes, name: str = "upload.bin") -> MediaInfo:
    return inspect_file(*sniffed_file(tmp_path, content, name))


def expected_video_codec() -> str:
    return "h264" if factories.h264_or_mpeg4() == "libx264" else "mpeg4"


# -- images ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "mime_type"),
    [
        (factories.png_bytes, "image/png"),
        (factories.jpeg_bytes, "image/jpeg"),
        (factories.webp_bytes, "image/webp"),
    ],
    ids=["png", "jpeg", "webp"],
)
def test_still_image_reports_its_size_and_no_animation(
    tmp_path: Path, make: Callable[[tuple[int, int]], bytes], mime_type: str
) -> None:
    info = inspect_bytes(tmp_path, make((321, 123)))

    assert info == MediaInfo(
        kind="image",
        mime_type=mime_type,
        width=321,
        height=123,
        duration_seconds=None,
        frame_rate=None,
        video_codec=None,
        audio_codec=None,
        animated=False,
        frame_count=1,
    )


def test_still_gif_is_kind_gif_and_not_animated(tmp_path: Path) -> None:
    info = inspect_bytes(tmp_path, factories.gif_bytes((50, 20)))

    assert (info.kind, info.mime_type, info.width, info.height) == ("gif", "image/gif", 50, 20)
    assert info.animated is False
    assert info.frame_count == 1


def test_animated_gif_reports_frames_and_duration(tmp_path: Path) -> None:
    info = inspect_bytes(tmp_path, factories.animated_bytes("GIF", frames=5, frame_ms=120))

    assert (info.kind, info.width, info.height) == ("gif", 40, 30)
    assert info.animated is True
    assert info.frame_count == 5
    assert info.duration_seconds == pytest.approx(0.6)


def test_animated_webp_reports_frames_and_duration(tmp_path: Path) -> None:
    info = inspect_bytes(tmp_path, factories.animated_bytes("WEBP", frames=4, frame_ms=250))

    assert (info.kind, info.mime_type) == ("image", "image/webp")
    assert info.animated is True
    assert info.frame_count == 4
    assert info.duration_seconds == pytest.approx(1.0)


def test_png_named_and_declared_as_mp4_is_inspected_as_png(tmp_path: Path) -> None:
    info = inspect_bytes(tmp_path, factories.png_bytes((30, 10)), name="holiday.mp4")

    assert (info.kind, info.mime_type, info.width, info.height) == ("image", "image/png", 30, 10)


def test_truncated_jpeg_is_unprocessable(tmp_path: Path) -> None:
    whole = factories.jpeg_bytes((256, 256), noise=True)

    with pytest.raises(UnprocessableMedia, match="truncated"):
        inspect_bytes(tmp_path, whole[: len(whole) // 2])


def test_png_with_corrupt_checksum_is_unprocessable(tmp_path: Path) -> None:
    content = bytearray(factories.png_bytes())
    content[-20] ^= 0xFF  # inside the IDAT chunk, so its CRC no longer matches

    with pytest.raises(UnprocessableMedia):
        inspect_bytes(tmp_path, bytes(content))


def test_empty_file_is_unprocessable(tmp_path: Path) -> None:
    path = tmp_path / "empty.png"
    path.touch()

    with pytest.raises(UnprocessableMedia, match="empty"):
        inspect_file(path, Sniffed("image/png", "image"))


def test_png_bomb_of_900_megapixels_is_rejected_without_decoding(tmp_path: Path) -> None:
    path = factories.write_png_bomb(tmp_path / "bomb.png", 30_000, 30_000)
    assert path.stat().st_size < 1_000_000  # the point of a bomb: tiny file, huge image

    with pytest.raises(UnprocessableMedia, match="decompression bomb"):
        inspect_file(path, Sniffed("image/png", "image"))


# Pillow only warns between its limit and twice that; our own check must still reject.
@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_png_just_over_100_megapixels_is_rejected(tmp_path: Path) -> None:
    path = factories.write_png_bomb(tmp_path / "big.png", 10_001, 10_000)

    with pytest.raises(UnprocessableMedia, match="100 megapixel limit"):
        inspect_file(path, Sniffed("image/png", "image"))


def test_bytes_that_do_not_match_the_sniffed_image_type_are_unprocessable(tmp_path: Path) -> None:
    path = tmp_path / "x.gif"
    path.write_bytes(factories.png_bytes())

    with pytest.raises(UnprocessableMedia):
        inspect_file(path, Sniffed("image/gif", "gif"))


# -- video ----------------------------------------------------------------------------------------


def test_mp4_reports_codecs_size_duration_and_frame_rate(tmp_path: Path) -> None:
    info = inspect_bytes(tmp_path, factories.mp4_bytes())

    assert (info.kind, info.mime_type) == ("video", "video/mp4")
    assert (info.width, info.height) == factories.VIDEO_SIZE
    assert info.video_codec == expected_video_codec()
    assert info.audio_codec == "aac"
    assert info.frame_rate == pytest.approx(factories.VIDEO_FPS)
    assert info.duration_seconds == pytest.approx(factories.VIDEO_SECONDS, abs=0.15)
    assert info.frame_count == factories.VIDEO_SECONDS * factories.VIDEO_FPS
    assert info.animated is False


def test_webm_reports_vp8_and_opus(tmp_path: Path) -> None:
    info = inspect_bytes(tmp_path, factories.webm_bytes())

    assert (info.kind, info.mime_type) == ("video", "video/webm")
    assert (info.width, info.height) == factories.VIDEO_SIZE
    assert (info.video_codec, info.audio_codec) == ("vp8", "opus")
    assert info.frame_rate == pytest.approx(factories.VIDEO_FPS)
    assert info.duration_seconds == pytest.approx(factories.VIDEO_SECONDS, abs=0.15)


def test_vp9_webm_without_audio_has_no_audio_codec(tmp_path: Path) -> None:
    info = inspect_bytes(tmp_path, factories.vp9_webm_bytes())

    assert (info.video_codec, info.audio_codec) == ("vp9", None)


def test_quicktime_movie_is_inspected(tmp_path: Path) -> None:
    info = inspect_bytes(tmp_path, factories.mov_bytes(), name="clip.mov")

    assert (info.kind, info.mime_type) == ("video", "video/quicktime")
    assert (info.width, info.height) == factories.VIDEO_SIZE
    assert info.video_codec == expected_video_codec()
    assert info.audio_codec is None
    assert info.frame_rate == pytest.approx(factories.VIDEO_FPS)
    assert info.duration_seconds == pytest.approx(factories.VIDEO_SECONDS, abs=0.15)


def test_audio_only_file_is_unprocessable(tmp_path: Path) -> None:
    path, sniffed = sniffed_file(tmp_path, factories.audio_only_mp4_bytes(), "song.m4a")
    assert sniffed.mime_type == "video/mp4"  # the container is accepted...

    with pytest.raises(UnprocessableMedia, match="no video stream"):
        inspect_file(path, sniffed)  # ...but there is nothing to show


def test_faststart_mp4_is_inspected(tmp_path: Path) -> None:
    info = inspect_bytes(tmp_path, factories.faststart_mp4_bytes())

    assert info.duration_seconds == pytest.approx(factories.VIDEO_SECONDS, abs=0.15)
    assert info.frame_count == factories.VIDEO_SECONDS * factories.VIDEO_FPS


@pytest.mark.parametrize(
    "make",
    [factories.mp4_bytes, factories.faststart_mp4_bytes, factories.webm_bytes],
    ids=["mp4-index-last", "mp4-index-first", "webm"],
)
def test_video_cut_in_half_is_unprocessable(tmp_path: Path, make: Callable[[], bytes]) -> None:
    whole = make()

    with pytest.raises(UnprocessableMedia):
        inspect_bytes(tmp_path, whole[: len(whole) // 2])


def test_mp4_missing_its_last_bytes_is_unprocessable(tmp_path: Path) -> None:
    # The index comes first and is whole; only the last sample is cut short. Its index places
    # that sample past the end of the file, which is refused without reading the samples.
    whole = factories.faststart_mp4_bytes()

    with pytest.raises(UnprocessableMedia, match="index places samples 10 bytes past its end"):
        inspect_bytes(tmp_path, whole[:-10])


def test_mp4_whose_samples_are_not_read_back_still_proves_its_first_picture(
    tmp_path: Path,
) -> None:
    # An MP4's index proves it whole; only the first picture is decoded. A file whose every
    # sample is zeroed keeps a whole index but has no picture to show.
    whole = bytearray(factories.faststart_mp4_bytes())
    mdat = whole.index(b"mdat")
    whole[mdat + 4 :] = bytes(len(whole) - mdat - 4)

    with pytest.raises(UnprocessableMedia):
        inspect_bytes(tmp_path, bytes(whole))


def test_fragmented_mp4_is_inspected_by_reading_every_packet(tmp_path: Path) -> None:
    info = inspect_bytes(tmp_path, factories.fragmented_mp4_bytes())

    # Fragments carry the audio encoder's priming too: a little more than the video's 2 s.
    assert info.duration_seconds == pytest.approx(factories.VIDEO_SECONDS, abs=0.3)
    assert (info.width, info.height) == factories.VIDEO_SIZE


def test_fragmented_mp4_cut_in_half_is_unprocessable(tmp_path: Path) -> None:
    # Its index lists no sample, so nothing proves it whole but reading it to the end.
    whole = factories.fragmented_mp4_bytes()

    with pytest.raises(UnprocessableMedia):
        inspect_bytes(tmp_path, whole[: len(whole) // 2])


def test_mp4_header_followed_by_garbage_is_unprocessable(tmp_path: Path) -> None:
    content = factories.mp4_bytes()[:32] + b"\x13\x37" * 2000

    with pytest.raises(UnprocessableMedia, match="does not decode"):
        inspect_bytes(tmp_path, content)


def test_unprocessable_reason_does_not_reveal_the_staging_path(tmp_path: Path) -> None:
    path = tmp_path / "staged-secret-name.part"
    path.write_bytes(b"\x00\x00\x00\x08wide" + b"garbage" * 100)

    with pytest.raises(UnprocessableMedia) as caught:
        inspect_file(path, Sniffed("video/quicktime", "video"))
    assert "staged-secret-name" not in caught.value.reason


@pytest.mark.anyio
async def test_async_inspection_runs_in_a_worker_thread(tmp_path: Path) -> None:
    path, sniffed = sniffed_file(tmp_path, factories.webm_bytes())

    info = await inspect_file_async(path, sniffed)

    assert info.video_codec == "vp8"
