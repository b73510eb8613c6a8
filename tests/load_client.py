"""Mixed reads and writes over many keep-alive connections against one API, for the load test
on the embedded default (tests/test_load_sqlite.py) and its benchmark (bench/bench_load.py).

Imports nothing of the service: it talks HTTP only. Every connection is a closed loop (the next
request leaves when the previous answer is in); a failure is any transport error or any answer
of 400 or more."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import httpx

# How often each operation is picked: the everyday reads, and writes beside them (posts a day
# ahead, posts published at once by the workers, edits of scheduled posts).
WEIGHTS = {
    "getTenant": 2,
    "listPosts": 3,
    "getPost": 2,
    "listChannels": 1,
    "createScheduledPost": 3,
    "createPublishNowPost": 1,
    "updatePost": 1,
}


@dataclass
class LoadResult:
    calls: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.latencies)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]

    def summary(self) -> dict[str, Any]:
        total = sum(self.calls.values())
        return {
            "requests": total,
            "seconds": round(self.seconds, 2),
            "rps": round(total / self.seconds, 1) if self.seconds else 0.0,
            "p50_ms": round(self.percentile(0.5) * 1000, 1),
            "p99_ms": round(self.percentile(0.99) * 1000, 1),
            "calls": dict(self.calls),
            "failed": len(self.failures),
            "firstFailures": self.failures[:10],
        }


def _post_body(channels: list[str], rng: random.Random, *, now: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "text": f"Load test post {rng.randrange(10**9)}",
        "targets": [{"channelId": channel} for channel in channels[:2]],
    }
    if now:
        body["publishNow"] = True
    else:
        ahead = datetime.now(UTC) + timedelta(days=1, seconds=rng.randrange(86400))
        body["scheduledAt"] = ahead.isoformat().replace("+00:00", "Z")
    return body


async def _one(
    client: httpx.AsyncClient,
    operation: str,
    channels: list[str],
    scheduled: list[str],
    rng: random.Random,
) -> httpx.Response:
    if operation == "getPost" and scheduled:
        return await client.get(f"/api/v1/posts/{rng.choice(scheduled)}")
    if operation == "updatePost" and scheduled:
        return await client.patch(
            f"/api/v1/posts/{rng.choice(scheduled)}", json={"text": f"Edited {rng.random()}"}
        )
    if operation in ("createScheduledPost", "createPublishNowPost"):
        now = operation == "createPublishNowPost"
        response = await client.post("/api/v1/posts", json=_post_body(channels, rng, now=now))
        if response.status_code == 201 and not now:
            scheduled.append(response.json()["id"])
        return response
    if operation == "listChannels":
        return await client.get("/api/v1/channels")
    if operation == "getTenant":
        return await client.get("/api/v1/tenant")
    return await client.get("/api/v1/posts", params={"pageSize": 25})


async def _connection_loop(
    client: httpx.AsyncClient,
    channels: list[str],
    scheduled: list[str],
    deadline: float,
    seed: int,
    result: LoadResult,
) -> None:
    rng = random.Random(seed)
    names = list(WEIGHTS)
    weights = [WEIGHTS[name] for name in names]
    while time.monotonic() < deadline:
        (operation,) = rng.choices(names, weights=weights)
        started = time.monotonic()
        try:
            response = await _one(client, operation, channels, scheduled, rng)
        except httpx.HTTPError as exc:
            result.failures.append(f"{operation}: {type(exc).__name__}: {exc}")
            continue
        result.latencies.append(time.monotonic() - started)
        result.calls[operation] += 1
        if response.status_code >= 400:
            result.failures.append(f"{operation}: {response.status_code} {response.text[:300]}")


async def run_load(
    base: str, key: str, channels: list[str], *, connections: int = 32, seconds: float = 60.0
) -> LoadResult:
    """`connections` closed loops of mixed traffic for `seconds`."""
    result = LoadResult()
    scheduled: list[str] = []
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(
        base_url=base, headers=headers, limits=limits, timeout=60
    ) as client:
        started = time.monotonic()
        deadline = started + seconds
        await asyncio.gather(
            *(
                _connection_loop(client, channels, scheduled, deadline, seed, result)
                for seed in range(connections)
            )
        )
        result.seconds = time.monotonic() - started
    return result
