"""The media domain's background loops: removing what a dead process left behind.

A request removes its own staged files on every outcome, cancellation included; only a process
that is killed mid-upload leaves some. Files still being written are recent by construction
(every received chunk touches them), so age since the last write is a safe test.

An upload stores its files before it commits their rows (upload.py); a process killed between the
two leaves stored objects no row names. They are never served, but they take space forever: the
orphan sweeper lists the store and removes objects of ours without a row once they are older than
any upload could take to commit.
"""

from __future__ import annotations

import logging
import time
import uuid
from datetime import datetime
from datetime import timedelta
from pathlib import Path

import anyio.to_thread

from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.media.service import asset_id_of_key
from pressroom.media.service import staging_dir
from pressroom.media.service import storage_for
from pressroom.media.service import stored_keys
from pressroom.media.storage import MediaStorage
from pressroom.runtime import Runtime

log = logging.getLogger(__name__)

# Far beyond any live upload's pause between two chunks, or its wait for inspection and storage.
STALE_AFTER_SECONDS = 6 * 3600
SWEEP_INTERVAL_SECONDS = 900.0
# An object is written seconds before its row is committed; after six hours without one, no
# upload is still on its way to committing it.
ORPHAN_GRACE = timedelta(seconds=STALE_AFTER_SECONDS)
# Listing a whole bucket is the costly part: once an hour is plenty for what a crash leaves.
ORPHAN_SWEEP_INTERVAL_SECONDS = 3600.0
# Keys looked up in the database at once.
_ORPHAN_BATCH = 500


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


async def remove_orphaned_objects(
    runtime: Runtime, storage: MediaStorage, *, older_than: timedelta, now: datetime
) -> int:
    """Delete stored objects of ours that no asset row names and that were last written before
    `now - older_than`; how many. Objects whose keys `storage_key` did not make are left alone
    (the store may be shared)."""
    cutoff = now - older_than
    removed = 0
    candidates: dict[str, uuid.UUID] = {}
    async for item in storage.list_objects():
        asset_id = asset_id_of_key(item.key)
        if asset_id is None or item.modified_at >= cutoff:
            continue
        candidates[item.key] = asset_id
        if len(candidates) >= _ORPHAN_BATCH:
            removed += await _remove_unreferenced(runtime, storage, candidates)
            candidates = {}
    if candidates:
        removed += await _remove_unreferenced(runtime, storage, candidates)
    return removed


async def _remove_unreferenced(
    runtime: Runtime, storage: MediaStorage, candidates: dict[str, uuid.UUID]
) -> int:
    # Looked up by asset id (the primary key), then compared key for key: a row exists for the
    # asset and names exactly this object, or the object is an orphan.
    async with unit_of_work(runtime.sessions) as session:
        referenced = await stored_keys(session, list(set(candidates.values())))
    orphans = [key for key, asset_id in candidates.items() if referenced.get(asset_id) != key]
    for key in orphans:
        await storage.delete(key)
        log.info("removed a stored media object without an asset", extra={"key": key})
    return len(orphans)


async def sweep_orphans(runtime: Runtime) -> bool:
    """One pass of the `media-orphan-sweeper` loop; never busy (it runs on its interval)."""
    removed = await remove_orphaned_objects(
        runtime, storage_for(runtime.settings), older_than=ORPHAN_GRACE, now=utcnow()
    )
    if removed:
        log.info("removed stored media objects without an asset", extra={"count": removed})
    return False
