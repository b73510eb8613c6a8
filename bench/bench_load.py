"""The load test on the embedded default (issue 17): `pressroom serve` with its workers on
SQLite (no database URL: the file in the data dir), 32 keep-alive connections of mixed reads
and writes (tests/load_client.py) for 60 s. Reports throughput and latency, every failed
request (transport error or status >= 400), and every `database is locked` in the server's log.
The bare framework's GET under the same load generator is the baseline of the same run.

    uv run python bench/bench_load.py [--seconds 60] [--connections 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT
from common import SERVER_KEY
from common import free_port
from common import load
from common import load_average
from common import process_cpu_seconds
from common import server


def start_serve(data_dir: Path, port: int, log: Path, out: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PRESSROOM_DATA_DIR": str(data_dir),
        "PRESSROOM_SECRET_KEY": SERVER_KEY,
        "PRESSROOM_RATE_LIMIT": "100000000/60",
    }
    env.pop("PRESSROOM_DATABASE_URL", None)
    with log.open("wb") as err, out.open("wb") as printed:
        return subprocess.Popen(
            [sys.executable, "-m", "pressroom", "serve", "--demo", "--json", "--port", str(port)],
            env=env,
            stdout=printed,
            stderr=err,
            cwd=ROOT,
        )


def wait_ready(base: str, process: subprocess.Popen[bytes], out: Path) -> dict[str, str]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"serve exited with {process.returncode}")
        printed = out.read_text().strip()
        if printed:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    return json.loads(printed.splitlines()[0])  # type: ignore[no-any-return]
            except httpx.TransportError:
                pass
        time.sleep(0.2)
    raise RuntimeError("serve did not start")


def sandbox_channels(base: str, key: str) -> list[str]:
    response = httpx.get(
        f"{base}/api/v1/channels", headers={"Authorization": f"Bearer {key}"}, timeout=30
    )
    response.raise_for_status()
    return [c["id"] for c in response.json()["items"] if c["provider"] == "sandbox"]


def main() -> None:
    sys.path.insert(0, str(ROOT))  # the load client is shared with the suite's load test
    from tests.load_client import run_load

    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    results = ROOT / "bench" / "results"
    data_dir = results / "load-data"
    shutil.rmtree(data_dir, ignore_errors=True)
    port, ceiling_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    log, out = results / "load-serve.log", results / "load-serve.out"
    load_before = load_average()
    process = start_serve(data_dir, port, log, out)
    try:
        demo = wait_ready(base, process, out)
        channels = sandbox_channels(base, demo["key"])
        cpu_before = process_cpu_seconds(process.pid)
        figures = asyncio.run(
            run_load(
                base, demo["key"], channels, connections=args.connections, seconds=args.seconds
            )
        ).summary()
        figures["server_cpu_s"] = round(process_cpu_seconds(process.pid) - cpu_before, 1)
    finally:
        process.terminate()
        process.wait(timeout=60)
    with server(["bench.bare_app:app"], ceiling_port, {}, "/json"):
        ceiling = load(
            f"http://127.0.0.1:{ceiling_port}/json",
            connections=args.connections,
            seconds=min(args.seconds, 15),
            headers=[],
        )
    locked = log.read_text(errors="replace").count("database is locked")
    summary = {
        "load_average": [round(load_before, 2), round(load_average(), 2)],
        "connections": args.connections,
        "mixed": figures,
        "ceiling_get_rps": ceiling["rps"],
        "database_is_locked_in_log": locked,
        "targets": {
            "no failed request": figures["failed"] == 0,
            "no database is locked": not locked,
        },
    }
    (results / "load.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
