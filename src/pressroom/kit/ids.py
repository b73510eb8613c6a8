"""Time-ordered identifiers (UUIDv7, RFC 9562)."""

from __future__ import annotations

import os
import threading
import time
import uuid

_lock = threading.Lock()
_last_ms = 0
_counter = 0


def uuid7() -> uuid.UUID:
    """A UUIDv7: 48-bit Unix milliseconds, then a 12-bit counter that keeps ids
    generated within one millisecond in order, then 62 random bits."""
    global _last_ms, _counter
    with _lock:
        now_ms = time.time_ns() // 1_000_000
        if now_ms <= _last_ms:
            _counter += 1
            if _counter > 0xFFF:
                # Counter exhausted within one millisecond: borrow the next millisecond.
                _last_ms += 1
                _counter = 0
            now_ms = _last_ms
        else:
            _last_ms = now_ms
            _counter = int.from_bytes(os.urandom(2), "big") & 0x1FF
        counter = _counter
    rand = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (now_ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= counter << 64
    value |= 0b10 << 62
    value |= rand
    return uuid.UUID(int=value)


def uuid7_seconds(value: uuid.UUID) -> float:
    """The Unix time (seconds) a UUIDv7 was made at, from its 48-bit millisecond prefix."""
    return (value.int >> 80) / 1000.0
