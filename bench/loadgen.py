"""A small closed-loop HTTP/1.1 load generator: N keep-alive connections, each sending the
next request when the previous response is complete. Prints JSON figures on stdout.

    python bench/loadgen.py --url http://127.0.0.1:8000/path --connections 32 --seconds 10 \
        [--header 'Authorization: Bearer ...'] [--method POST --body-file body.json]

A request that fails (connection reset, closed or malformed answer) is counted in `failed` and
its connection reopened; statuses count the answers received.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from urllib.parse import urlsplit


async def connection_loop(
    host: str,
    port: int,
    request: bytes,
    deadline: float,
    latencies: list[float],
    statuses: dict[int, int],
    failures: list[float],
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            try:
                status = await exchange(reader, writer, request)
            except (OSError, ValueError, IndexError, asyncio.IncompleteReadError):
                failures.append(time.perf_counter() - started)
                writer.close()
                reader, writer = await asyncio.open_connection(host, port)
                continue
            latencies.append(time.perf_counter() - started)
            statuses[status] = statuses.get(status, 0) + 1
    finally:
        writer.close()


async def exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> int:
    """Send one request, read its whole answer; its status."""
    return (await answer(reader, writer, request))[0]


async def answer(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> tuple[int, bytes]:
    """Send one request, read its whole answer (Content-Length framed); status and body."""
    writer.write(request)
    status_line = await reader.readline()
    status = int(status_line.split(b" ", 2)[1])
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    return status, await reader.readexactly(length) if length else b""


def percentile(sorted_values: list[float], fraction: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, round(fraction * (len(sorted_values) - 1)))
    return sorted_values[index]


def read_body(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--header", action="append", default=[])
    parser.add_argument("--method", default="GET")
    parser.add_argument("--body-file", default=None)
    args = parser.parse_args()
    parts = urlsplit(args.url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    headers = "".join(f"{h}\r\n" for h in args.header)
    body = b""
    if args.body_file:
        body = read_body(args.body_file)
        headers += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    request = (
        f"{args.method} {target} HTTP/1.1\r\nHost: {host}:{port}\r\n{headers}\r\n"
    ).encode() + body
    latencies: list[float] = []
    failures: list[float] = []
    statuses: dict[int, int] = {}
    started = time.perf_counter()
    deadline = started + args.seconds
    await asyncio.gather(
        *(
            connection_loop(host, port, request, deadline, latencies, statuses, failures)
            for _ in range(args.connections)
        )
    )
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    print(
        json.dumps(
            {
                "requests": len(latencies),
                "seconds": round(elapsed, 3),
                "rps": round(len(latencies) / elapsed, 1),
                "p50_ms": round(percentile(ordered, 0.50) * 1000, 3),
                "p99_ms": round(percentile(ordered, 0.99) * 1000, 3),
                "mean_ms": round(statistics.fmean(ordered) * 1000, 3) if ordered else None,
                "statuses": statuses,
                "failed": len(failures),
            }
        )
    )


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main())
