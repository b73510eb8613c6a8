"""What inspecting an upload may cost: decompression bombs are refused from their headers and frame
structure, before any pixel is decoded; decoding has a deadline; and a process decodes only a few
files at a time, so simultaneous bombs cannot add up to gigabytes."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from pathlib import Path

import httpx
import pytest

from pressroom.app import create_app
from pressroom.config import Settings
from pressroom.media import inspect
from pressroom.media.inspect import DecodeLimits
from pressroom.media.inspect import MediaInfo
from pressroom.media.inspect import UnprocessableMedia
from pressroom.media.inspect import inspect_file
from pressroom.media.inspect import inspect_file_async
from pressroom.media.service import decode_limits
from pressroom.media.sniff import HEAD_BYTES
from pressroom.media.sniff import Sniffed
from pressroom.media.sniff import sniff
from pressroom.runtime import Runtime
from tests.factories import Tenant

from . import factories
from .api import assert_nothing_stored
from .api import upload
from .factories import FormPart

# Far below what decoding the bomb took before it was refused up front (1.46 GB and 12 s), far
# above what refusing it costs, even on a loaded machine.
MAX_GROWTH_BYTES = 300 * 2**20
MAX_SECONDS = 5.0


@pytest.fixture(scope="session")
def gif_bomb(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """Two 10000x9990 frames in ~150 KB: what decoding took 1.46 GB and 12 s for."""
    path = tmp_path_factory.mktemp("bombs") / "bomb.gif"
    content = factories.write_gif_bomb(path, (10_000, 9_990), frames=2).read_bytes()
    assert len(content) < 200_000
    return content


def _proc_status_bytes(field: str) -> int:
    status = Path("/proc/self/status").read_text()
    match = re.search(rf"^{field}:\s+(\d+) kB$", status, re.MULTILINE)
    assert match is not None, f"no {field} in /proc/self/status"
    return int(match.group(1)) * 1024


class PeakMemory:
    """The growth of this process's peak resident memory (threads included) from now on."""

    def __init__(self) -> None:
        if not Path("/proc/self/status").exists():
            pytest.skip("peak memory is read from /proc/self/status (Linux)")
        self.reset()

    def reset(self) -> None:
        try:
            # Resets VmHWM to the current resident size (proc(5), clear_refs "5").
            Path("/proc/self/clear_refs").write_text("5")
            self.baseline = _proc_status_bytes("VmRSS")
        except OSError:
            self.baseline = _proc_status_bytes("VmHWM")  # can only under-report the growth

    @property
    def growth(self) -> int:
        return _proc_status_bytes("VmHWM") - self.baseline


@pytest.fixture
def peak_memory() -> PeakMemory:
    return PeakMemory()


def staged(tmp_path: Path, content: bytes, name: str = "upload.bin") -> tuple[Path, Sniffed]:
    path = tmp_path / name
    path.write_bytes(content)
    sniffed = sniff(content[:HEAD_BYTES])
    assert sniffed is not None
    return path, sniffed


def refusal(tmp_path: Path, content: bytes, limits: DecodeLimits | None = None) -> str:
    with pytest.raises(UnprocessableMedia) as caught:
        inspect_file(*staged(tmp_path, content), limits)
    assert caught.value.code == "decoding_limit"
    return caught.value.reason


# -- through the API ------------------------------------------------------------------------------


async def test_gif_bomb_is_422_without_decoding_it(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    gif_bomb: bytes,
    peak_memory: PeakMemory,
) -> None:
    started = time.monotonic()
    response = await upload(client, tenant, [FormPart(gif_bomb, "bomb.gif", "image/gif")])
    elapsed = time.monotonic() - started

    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "unprocessable_media"
    [error] = body["errors"]
    assert (error["field"], error["code"]) == ("files[0]", "decoding_limit")
    assert "10000x9990" in body["detail"]
    assert "25 megapixel limit for animated images" in body["detail"]
    assert elapsed < MAX_SECONDS
    assert peak_memory.growth < MAX_GROWTH_BYTES
    await assert_nothing_stored(runtime, tenant)


async def test_three_gif_bombs_at_once_stay_within_the_same_memory(
    client: httpx.AsyncClient, tenant: Tenant, gif_bomb: bytes, peak_memory: PeakMemory
) -> None:
    started = time.monotonic()
    responses = await asyncio.gather(
        *(
            upload(client, tenant, [FormPart(gif_bomb, f"bomb-{i}.gif", "image/gif")])
            for i in range(3)
        )
    )

    assert [r.status_code for r in responses] == [422, 422, 422]
    assert time.monotonic() - started < MAX_SECONDS
    assert peak_memory.growth < MAX_GROWTH_BYTES


async def test_a_legitimate_animated_gif_still_passes(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    content = factories.animated_bytes("GIF", frames=60, frame_ms=50, size=(480, 270))

    response = await upload(client, tenant, [FormPart(content, "clip.gif", "image/gif")])

    assert response.status_code == 201, response.text
    [item] = response.json()["items"]
    assert (item["kind"], item["width"], item["height"]) == ("gif", 480, 270)
    assert item["durationSeconds"] == pytest.approx(3.0)


@pytest.fixture
def tight_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"media_max_decode_pixels": 5_000})


async def test_decoding_budget_comes_from_the_settings(
    tight_settings: Settings, tenant: Tenant
) -> None:
    tight = Runtime.build(tight_settings)
    try:
        transport = httpx.ASGITransport(app=create_app(runtime=tight))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            content = factories.animated_bytes("GIF", frames=5, frame_ms=100, size=(40, 30))
            response = await upload(client, tenant, [FormPart(content, "five.gif", "image/gif")])
    finally:
        await tight.close()

    assert response.status_code == 422, response.text
    assert "6,000 pixels to decode" in response.json()["detail"]
    assert "decoding budget of 5,000 pixels per file" in response.json()["detail"]


def test_decode_settings_default_to_the_documented_limits(tmp_path: Path) -> None:
    limits = decode_limits(Settings(data_dir=tmp_path))

    assert limits == DecodeLimits(max_pixels=300_000_000, timeout_seconds=30.0, concurrency=2)


def test_decode_settings_are_read_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRESSROOM_MEDIA_MAX_DECODE_PIXELS", "1000000")
    monkeypatch.setenv("PRESSROOM_MEDIA_DECODE_TIMEOUT_SECONDS", "2.5")
    monkeypatch.setenv("PRESSROOM_MEDIA_DECODE_CONCURRENCY", "1")

    limits = decode_limits(Settings(data_dir=tmp_path))

    assert limits == DecodeLimits(max_pixels=1_000_000, timeout_seconds=2.5, concurrency=1)


# -- the rules ------------------------------------------------------------------------------------


def test_frames_count_at_their_canvas_size_however_small_they_are(tmp_path: Path) -> None:
    # 1x1 frames, but Pillow composites each onto the whole 10000x9990 canvas.
    content = factories.tiny_canvas_gif((10_000, 9_990), frames=2)

    reason = refusal(tmp_path, content)

    assert "an animation of 10000x9990" in reason


def test_animation_over_the_decoding_budget_is_refused_naming_it(tmp_path: Path) -> None:
    content = factories.tiny_canvas_gif((4_000, 4_000), frames=20)  # 320 MP, 16 MP a frame

    reason = refusal(tmp_path, content)

    assert reason == (
        "20 frames of 4000x4000 are 320,000,000 pixels to decode, more than the decoding "
        "budget of 300,000,000 pixels per file (decompression bomb)"
    )


def test_animation_within_the_budget_decodes(tmp_path: Path) -> None:
    content = factories.tiny_canvas_gif((1_000, 1_000), frames=20)

    info = inspect_file(*staged(tmp_path, content))

    assert (info.width, info.height, info.frame_count) == (1_000, 1_000, 20)


def test_more_frames_than_the_frame_limit_are_refused(tmp_path: Path) -> None:
    content = factories.tiny_canvas_gif((1, 1), frames=inspect.MAX_FRAMES + 1)

    reason = refusal(tmp_path, content)

    assert reason == "its 10,001 frames are more than the limit of 10,000"


def test_still_image_over_the_budget_is_refused(tmp_path: Path) -> None:
    reason = refusal(tmp_path, factories.png_bytes((100, 100)), DecodeLimits(max_pixels=9_999))

    assert reason.startswith("100x100 is 10,000 pixels to decode, more than the decoding budget")


def test_decoding_past_the_deadline_is_refused(tmp_path: Path) -> None:
    content = factories.animated_bytes("GIF", frames=3, frame_ms=100)

    reason = refusal(tmp_path, content, DecodeLimits(timeout_seconds=1e-9))

    assert reason == "decoding took longer than the 1e-09 s limit"


def test_video_decoding_past_the_deadline_is_refused(tmp_path: Path) -> None:
    reason = refusal(tmp_path, factories.mp4_bytes(), DecodeLimits(timeout_seconds=1e-9))

    assert "decoding took longer" in reason


def test_an_mp4_index_is_walked_under_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An index can list millions of samples: the walk itself is stopped by the deadline, before
    # anything is decoded.
    def never(*_args: object) -> None:
        raise AssertionError("the first picture was decoded past the deadline")

    monkeypatch.setattr(inspect, "_decode_first_picture", never)

    reason = refusal(tmp_path, factories.mp4_bytes(), DecodeLimits(timeout_seconds=1e-9))

    assert reason == "decoding took longer than the 1e-09 s limit"


def test_large_jpeg_decodes_at_a_fraction_of_its_size(
    tmp_path: Path, peak_memory: PeakMemory
) -> None:
    # 80 megapixels: 240 MB decoded in full, under 4 MB at an eighth of each side.
    content = factories.jpeg_bytes((10_000, 8_000))
    peak_memory.reset()  # measure the inspection only

    info = inspect_file(*staged(tmp_path, content))

    assert (info.width, info.height) == (10_000, 8_000)
    assert peak_memory.growth < 100 * 2**20


async def test_files_are_decoded_no_more_than_the_concurrency_limit_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside: list[Path] = []
    release = threading.Event()
    real = inspect.inspect_file

    def held_inspection(path: Path, sniffed: Sniffed, limits: DecodeLimits) -> MediaInfo:
        inside.append(path)
        release.wait(10)
        return real(path, sniffed, limits)

    monkeypatch.setattr(inspect, "inspect_file", held_inspection)
    limits = DecodeLimits(concurrency=1)
    first = staged(tmp_path, factories.png_bytes(), "first.png")
    second = staged(tmp_path, factories.png_bytes(), "second.png")
    tasks = [asyncio.create_task(inspect_file_async(*f, limits)) for f in (first, second)]
    limiter = inspect.decoding_limiter(1)
    deadline = time.monotonic() + 5
    while not (inside and limiter.statistics().tasks_waiting == 1):
        assert time.monotonic() < deadline, "the second inspection never queued"
        await asyncio.sleep(0.01)

    assert inside == [first[0]]  # the second waits for the first to finish
    release.set()
    infos = await asyncio.gather(*tasks)
    assert [info.width for info in infos] == [64, 64]
    assert inside == [first[0], second[0]]
