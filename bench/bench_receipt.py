"""createPost -> receipt of `post.created.v1` at a steady 100 creates/s (issue 17), against one
`pressroom serve` process with its workers (which `serve` hosts in a child process), on
PostgreSQL, SQLite or each in turn.

A TLS receiver (uvicorn, `bench/receipt_receiver.py`) notes each event's arrival; the client
sends createPost (2 targets, scheduled a day ahead) on a fixed schedule, each request its own
task, and notes when each 201 arrived. Latency per post: receipt of its `post.created.v1` minus
its createPost answer (both wall clock on this machine). The baseline of the same run: the
createPost answer time itself (request sent -> 201), the API's share.

    uv run python bench/bench_receipt.py [--database both] [--rate 100] [--seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_posts import create_body
from common import ROOT
from common import SERVER_KEY
from common import free_port
from common import fresh_database
from common import load_average
from common import process_cpu_seconds
from common import tls_files
from loadgen import answer

HOST = "receipt.example.com"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def start(
    command: list[str], env: dict[str, str], log: Path, out: Path | None = None
) -> subprocess.Popen[bytes]:
    with log.open("wb") as handle, (out or log).open("ab") as printed:
        return subprocess.Popen(command, env=env, stdout=printed, stderr=handle, cwd=ROOT)


def wait_for(url: str, verify: str | bool, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            httpx.get(url, verify=verify, timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


async def drive(
    base: str, key: str, channels: list[str], rate: float, seconds: float, failed: list[str]
) -> tuple[dict[str, tuple[float, float]], float, float]:
    """createPost at `rate` per second for `seconds`: post id -> (sent, answered), wall
    clock; the seconds until the last answer (much longer than `seconds`: the API did not
    keep up with the rate); and this client's own CPU seconds.

    The client is the benchmarks' plain HTTP/1.1 one (bench/loadgen.py) over keep-alive
    connections, at most 64 in flight: on a two-core machine every millisecond of client CPU
    is taken from the server (httpx, used before, took about 4.7 ms of CPU a create; this
    client about 0.6 ms)."""
    answered: dict[str, tuple[float, float]] = {}
    where = urlsplit(base)
    host, port = where.hostname or "127.0.0.1", where.port or 80
    head = (
        f"POST /api/v1/posts HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {key}\r\n"
        "Content-Type: application/json\r\n"
    )
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    in_flight = asyncio.Semaphore(64)

    async def send() -> None:
        sent = time.time()
        body = json.dumps(create_body(channels)).encode()
        request = (
            f"{head}Idempotency-Key: {uuid.uuid4().hex}\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        for attempt in range(3):
            # A keep-alive connection the server closed as it was reused (uvicorn closes one
            # idle for 5 s; the pool holds those the opening burst left): send it again on a
            # new connection, under the same Idempotency-Key, so no post is created twice.
            reuse = idle and attempt == 0
            connection = idle.pop() if reuse else await asyncio.open_connection(host, port)
            try:
                status, payload = await answer(*connection, request)
            except (OSError, ValueError, IndexError, asyncio.IncompleteReadError) as error:
                connection[1].close()
                if attempt == 2:
                    failed.append(f"transport error: {type(error).__name__}: {error}")
                    return
                continue
            idle.append(connection)
            break
        if status != 201:
            failed.append(f"createPost answered {status}")
            return
        answered[json.loads(payload)["id"]] = (sent, time.time())

    async def one() -> None:
        async with in_flight:
            await send()

    cpu = time.process_time()
    started = time.monotonic()
    tasks = []
    for n in range(int(rate * seconds)):
        delay = started + n / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one()))
    await asyncio.gather(*tasks)
    took = time.monotonic() - started
    for _, writer in idle:
        writer.close()
    return answered, took, time.process_time() - cpu


def set_up(base: str, key: str) -> list[str]:
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        listed = client.get("/api/v1/channels").json()["items"]
        endpoint = client.post(
            "/api/v1/webhooks",
            json={"url": f"https://{HOST}/hook", "events": ["post.created.v1"]},
        )
        endpoint.raise_for_status()
    return [c["id"] for c in listed if c["provider"] == "sandbox"][:2]


def receipts(path: Path) -> dict[str, float]:
    found: dict[str, float] = {}
    for line in path.read_text().splitlines():
        arrived, event_type, post_id = line.split()
        if event_type == "post.created.v1":
            found.setdefault(post_id, float(arrived))
    return found


def measure(kind: str, args: argparse.Namespace) -> dict[str, object]:
    results = ROOT / "bench" / "results"
    work = results / f"receipt-{kind}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    ca_file, cert_file, key_file = tls_files(work, HOST)
    receipt_log = work / "receipts.txt"
    receipt_log.touch()
    receiver_port, port = free_port(), free_port()
    receiver_command = [
        sys.executable, "-m", "uvicorn", "bench.receipt_receiver:app",
        "--host", "127.0.0.1", "--port", str(receiver_port),
        "--ssl-certfile", str(cert_file), "--ssl-keyfile", str(key_file),
        "--loop", "uvloop", "--http", "httptools", "--no-access-log", "--log-level", "warning",
    ]  # fmt: skip
    env = {
        **os.environ,
        "RECEIPT_LOG": str(receipt_log),
        "PRESSROOM_DATA_DIR": str(work / "data"),
        "PRESSROOM_SECRET_KEY": SERVER_KEY,
        "PRESSROOM_RATE_LIMIT": "100000000/60",
        "PRESSROOM_WEBHOOK_RESOLVE": f"{HOST}=127.0.0.1:{receiver_port}",
        "PRESSROOM_WEBHOOK_CA_BUNDLE": str(ca_file),
    }
    load_before = load_average()
    with fresh_database(kind) as database_url:
        env["PRESSROOM_DATABASE_URL"] = database_url
        receiver = start(receiver_command, env, work / "receiver.log")
        serve = start(
            [sys.executable, "-m", "pressroom", "serve", "--demo", "--json", "--port", str(port)],
            env,
            work / "serve.log",
            work / "serve.out",
        )
        try:
            wait_for(f"https://127.0.0.1:{receiver_port}/", str(ca_file))
            base = f"http://127.0.0.1:{port}"
            wait_for(f"{base}/healthz", True)
            while b"workers started" not in (work / "serve.log").read_bytes():
                time.sleep(0.2)
            demo = json.loads((work / "serve.out").read_text().splitlines()[0])
            channels = set_up(base, demo["key"])
            cpu_before = process_cpu_seconds(serve.pid)
            failed: list[str] = []
            answered, sending, client_cpu = asyncio.run(
                drive(base, demo["key"], channels, args.rate, args.seconds, failed)
            )
            deadline = time.monotonic() + 120
            while len(receipts(receipt_log)) < len(answered) and time.monotonic() < deadline:
                time.sleep(0.2)
            api_cpu = process_cpu_seconds(serve.pid) - cpu_before
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=90)
            receiver.terminate()
            receiver.wait(timeout=30)
    got = receipts(receipt_log)
    latencies = [got[post] - done for post, (_, done) in answered.items() if post in got]
    answers = [done - sent for sent, done in answered.values()]
    p99 = percentile(latencies, 0.99) * 1000 if latencies else float("inf")
    return {
        "database": kind,
        "load_average": [round(load_before, 2), round(load_average(), 2)],
        "creates": len(answered),
        "failed": len(failed),
        "failures": sorted(set(failed))[:5],
        "answered_per_second": round(len(answered) / sending, 1),
        "received": len(latencies),
        "answer_to_receipt_ms": {
            "p50": round(percentile(latencies, 0.5) * 1000, 1) if latencies else None,
            "p99": round(p99, 1),
            "max": round(max(latencies) * 1000, 1) if latencies else None,
        },
        "createPost_answer_ms": {
            "p50": round(percentile(answers, 0.5) * 1000, 1),
            "p99": round(percentile(answers, 0.99) * 1000, 1),
        },
        "api_process_cpu_ms_per_create": round(api_cpu * 1000 / max(1, len(answered)), 2),
        "client_cpu_ms_per_create": round(client_cpu * 1000 / max(1, len(answered)), 2),
        "targets": {
            "p99 < 500 ms": p99 < 500,
            "every event received": len(latencies) == len(answered),
            "rate held (answered >= 95 % of offered)": len(answered) / sending >= 0.95 * args.rate,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database", choices=["postgres", "sqlite", "both"], default="both")
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    sys.path.insert(0, str(ROOT))
    kinds = ["postgres", "sqlite"] if args.database == "both" else [args.database]
    summary: dict[str, object] = {"rate": args.rate, "seconds": args.seconds, "runs": []}
    for kind in kinds:
        summary["runs"].append(measure(kind, args))  # type: ignore[attr-defined]
        (ROOT / "bench" / "results" / "receipt.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
