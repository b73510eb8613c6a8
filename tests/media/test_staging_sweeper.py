"""The media-staging-sweeper loop: staged files of dead uploads go, live ones stay."""

from __future__ import annotations

import os
import time
from pathlib import Path

from pressroom.media.service import staging_dir
from pressroom.media.worker import STALE_AFTER_SECONDS, remove_stale_staged, sweep_staging
from pressroom.runtime import Runtime
from pressroom.workers.loops import default_loops


def staged(directory: Path, name: str, age_seconds: float) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(b"partial upload")
    then = time.time() - age_seconds
    os.utime(path, (then, then))
    return path


async def test_sweep_removes_only_staged_files_idle_for_too_long(runtime: Runtime) -> None:
    directory = staging_dir(runtime.settings)
    dead = staged(directory, "upload-dead.part", STALE_AFTER_SECONDS + 60)
    live = staged(directory, "upload-live.part", 5)
    other = staged(directory, "notes.txt", STALE_AFTER_SECONDS + 60)

    busy = await sweep_staging(runtime)

    assert busy is False
    assert not dead.exists()
    assert live.exists()
    assert other.exists()  # not ours: never touched


def test_sweep_of_a_missing_directory_removes_nothing(tmp_path: Path) -> None:
    assert remove_stale_staged(tmp_path / "absent", 0) == 0


def test_sweeper_is_one_of_the_default_loops() -> None:
    assert "media-staging-sweeper" in {loop.name for loop in default_loops()}
