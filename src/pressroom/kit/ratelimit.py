"""Fixed-window request counters: in-process by default, Redis when configured.

The counting itself is the `limits` library's storage; this module only decides the
key and turns the count into the RateLimit-* headers."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits.aio.storage import MemoryStorage, RedisStorage, Storage


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int
    window: int

    def headers(self) -> list[tuple[bytes, bytes]]:
        return [
            (b"ratelimit-limit", str(self.limit).encode()),
            (b"ratelimit-remaining", str(self.remaining).encode()),
            (b"ratelimit-reset", str(self.reset_seconds).encode()),
            (b"ratelimit-policy", f"{self.limit};w={self.window}".encode()),
        ]


class RateLimiter:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    @classmethod
    def from_url(cls, redis_url: str | None) -> RateLimiter:
        if redis_url:
            uri = redis_url if redis_url.startswith("async+") else "async+" + redis_url
            return cls(RedisStorage(uri))
        return cls(MemoryStorage())

    def _key(self, bucket: str, identity: str, window: int) -> str:
        # The window start is part of the key, so every node agrees on window edges.
        start = int(time.time()) // window * window
        return f"pressroom:rl:{bucket}:{identity}:{window}:{start}"

    async def hit(self, bucket: str, identity: str, limit: int, window: int) -> Decision:
        """Count one request and decide whether it may proceed."""
        now = time.time()
        window_end = (int(now) // window + 1) * window
        count = await self.storage.incr(self._key(bucket, identity, window), window + 1)
        return Decision(
            allowed=count <= limit,
            limit=limit,
            remaining=max(0, limit - count),
            reset_seconds=max(1, math.ceil(window_end - now)),
            window=window,
        )

    async def peek(self, bucket: str, identity: str, limit: int, window: int) -> Decision:
        """The current state without counting (for responses that are not charged)."""
        now = time.time()
        window_end = (int(now) // window + 1) * window
        count = await self.storage.get(self._key(bucket, identity, window))
        return Decision(
            allowed=count < limit,
            limit=limit,
            remaining=max(0, limit - count),
            reset_seconds=max(1, math.ceil(window_end - now)),
            window=window,
        )
