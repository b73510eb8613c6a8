"""The media sweepers as the worker runs them: staged files of dead uploads go, live ones stay;
stored objects without an asset row go once older than six hours, fresh ones stay."""

from __future__ import annotations

import os
import time
from pathlib import Path

from pressroom.kit.ids import uuid7
from pressroom.media.service import staging_dir
from pressroom.media.service import storage_for
from pressroom.media.storage import LocalStorage
from pressroom.media.worker import STALE_AFTER_SECONDS
from pressroom.media.worker import remove_stale_staged
from pressroom.media.worker import sweep_orphans
from pressroom.media.worker import sweep_staging
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


async def test_orphan_sweep_removes_stored_objects_without_a_row_older_than_six_hours(
    runtime: Runtime,
) -> None:
    storage = storage_for(runtime.settings)
    assert isinstance(storage, LocalStorage)  # the default; its files' ages can be set
    organization = uuid7()
    old, fresh = (storage.path_for(f"{organization}/{uuid7()}.png") for _ in range(2))
    old.parent.mkdir(parents=True)
    for path, age in ((old, STALE_AFTER_SECONDS + 60), (fresh, 5)):
        path.write_bytes(b"stored, never committed")
        then = time.time() - age
        os.utime(path, (then, then))

    busy = await sweep_orphans(runtime)

    assert busy is False
    assert not old.exists()
    assert fresh.exists()


def test_orphan_sweeper_is_one_of_the_default_loops() -> None:
    assert "media-orphan-sweeper" in {loop.name for loop in default_loops()}
