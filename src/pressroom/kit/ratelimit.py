"""Fixed-window request counters: in-process by default, Redis when configured.

With Redis, the counting is the `limits` library's storage (an atomic INCR with expiry
shared by all nodes). In-process, counters are a plain dict: the library's memory
storage starts an expiry-scanning task on nearly every increment, which measured as a
third of the cost of an authenticated read (bench/bench_tenant.py)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits.aio.storage import RedisStorage
from limits.aio.storage import Storage


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


class LocalCounters:
    """Counters of this process only; keys carry their window, so a whole window's keys
    are dropped together once it has ended."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._ends: dict[str, float] = {}
        self._next_prune = 0.0

    async def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        now = time.time()
        if now >= self._next_prune:
            self._prune(now)
        count = self._counts.get(key, 0) + amount
        self._counts[key] = count
        if count == amount:
            self._ends[key] = now + expiry
        return count

    async def get(self, key: str) -> int:
        return self._counts.get(key, 0)

    def _prune(self, now: float) -> None:
        for key in [k for k, end in self._ends.items() if end <= now]:
            self._counts.pop(key, None)
            self._ends.pop(key, None)
        self._next_prune = now + 1.0


class RateLimiter:
    def __init__(self, storage: Storage | LocalCounters) -> None:
        self.storage = storage

    @classmethod
    def from_url(cls, redis_url: str | None) -> RateLimiter:
        if redis_url:
            uri = redis_url if redis_url.startswith("async+") else "async+" + redis_url
            return cls(RedisStorage(uri))
        return cls(LocalCounters())

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
