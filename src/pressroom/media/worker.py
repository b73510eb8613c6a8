"""The media domain's background loop: removing staged uploads a dead process left behind.

A request removes its own staged files on every outcome, cancellation included; only a process
that is killed mid-upload leaves some. Files still being written are recent by construction
(every received chunk touches them), so age since the last write is a safe test.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import anyio.to_thread

from pressroom.media.service import staging_dir
from pressroom.runtime import Runtime

log = logging.getLogger(__name__)

# Far beyond any live upload's pause between two chunks, or its wait for inspection and storage.
STALE_AFTER_SECONDS = 6 * 3600
SWEEP_INTERVAL_SECONDS = 900.0


def remove_stale_staged(directory: Path, older_than_seconds: float) -> int:
    """Delete staged upload files not written to for `older_than_seconds`; how many."""
    if not directory.is_dir():
        return 0
    cutoff = time.time() - older_than_seconds
    removed = 0
    for path in directory.glob("upload-*.part"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue  # finished or removed by its request meanwhile
    return removed


async def sweep_staging(runtime: Runtime) -> bool:
    """One pass of the `media-staging-sweeper` loop; never busy (it runs on its interval)."""
    removed = await anyio.to_thread.run_sync(
        remove_stale_staged, staging_dir(runtime.settings), STALE_AFTER_SECONDS
    )
    if removed:
        log.info("removed stale staged uploads", extra={"count": removed})
    return False
