"""Starting a staged file's write to disk early, and letting go of what is on disk, where the
platform allows it (media/multipart.py).

With local storage a staged file is made durable where it lies, so the disk is asked to start
writing it every `WRITE_BACK_BYTES` while it arrives: the fsync before the asset is recorded then
finds little left to do. A file whose inspection reads little of it (an MP4 or QuickTime file:
its index says where every sample lies, `PROVED_BY_INDEX` in media/inspect.py) is also let go
of behind the write-back: each range is dropped from the page cache once it is on disk, so a
large upload reuses a few tens of MiB of memory instead of taking a page of the cache for every
byte it stores. Fresh pages are what cost: writing 1 GiB into new page-cache memory took 2.5 s
of CPU on the project's machine, into reused memory 0.35-0.45 s (bench/README.md, media). The
head, where inspection decodes the first picture, and the end, where an index may lie, stay
cached.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
from collections.abc import Callable

MiB = 1024 * 1024
WRITE_BACK_BYTES = 16 * MiB
KEPT_HEAD_BYTES = 16 * MiB
_PAGE_BYTES = mmap.PAGESIZE
# sync_file_range(2) flags.
_WAIT_BEFORE = 1
_WRITE = 2
_WAIT_AFTER = 4


def _load_sync_file_range() -> Callable[[int, int, int, int], int] | None:
    if not sys.platform.startswith("linux") or not hasattr(os, "posix_fadvise"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


_sync_file_range = _load_sync_file_range()
AVAILABLE = _sync_file_range is not None


class WriteBack:
    """Follows one staging file as it is written (call `advance` with its size so far)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.written_back = 0
        self.started_before = 0
        self.released = KEPT_HEAD_BYTES

    def due(self, size: int) -> bool:
        return size - self.written_back >= WRITE_BACK_BYTES

    def advance(self, size: int, *, release: bool) -> None:
        """Start writing what was written since last time (up to `size`, which must have reached
        the file); with `release`, drop from the page cache what is on disk by now."""
        assert _sync_file_range is not None
        # A failure here (an old kernel, a file system without it) costs only the head start.
        _sync_file_range(self.fd, self.written_back, size - self.written_back, _WRITE)
        # Up to where the write-back started the time before last: on disk by now, so the wait
        # is short (releasing what started last time waited on the device). Whole pages only: a
        # page cut by the end would stay cached for good.
        end = self.started_before - self.started_before % _PAGE_BYTES
        if release and end > self.released:
            self._release(self.released, end - self.released)
            self.released = end
        self.started_before = self.written_back
        self.written_back = size

    def _release(self, offset: int, length: int) -> None:
        # Not durability (that is the fsync's, metadata and the device's cache included): only
        # clean pages can be dropped. A range that could not be written stays cached.
        assert _sync_file_range is not None
        flags = _WAIT_BEFORE | _WRITE | _WAIT_AFTER
        if _sync_file_range(self.fd, offset, length, flags) == 0:
            os.posix_fadvise(self.fd, offset, length, os.POSIX_FADV_DONTNEED)
