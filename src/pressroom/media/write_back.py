"""Starting a file's write to disk early, where the platform allows it (media/multipart.py)."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable


def _load_write_back() -> Callable[[int, int, int], None] | None:
    """Linux's `sync_file_range(SYNC_FILE_RANGE_WRITE)`: start writing a byte range of a file to
    disk without waiting for it. None where it is not available (it is only a head start: the
    fsync that makes a file durable does the same work when it was not started)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    function.restype = ctypes.c_int
    sync_file_range_write = 2

    def start(fd: int, offset: int, length: int) -> None:
        # A failure here (an old kernel, a file system without it) costs only the head start.
        function(fd, offset, length, sync_file_range_write)

    return start


start_write_back = _load_write_back()
