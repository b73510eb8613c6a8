"""Shared benchmark plumbing: fresh PostgreSQL databases, server processes, free ports."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from collections.abc import Iterator
from contextlib import asynccontextmanager
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
# One server key per benchmark run, for its in-process runtime and its server processes alike
# (a database accepts only the key it was first used with; a key must be strong).
SERVER_KEY = secrets.token_urlsafe(32)
PG_SERVER = os.environ.get(
    "PRESSROOM_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _admin(sql: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(PG_SERVER)
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A new, migrated database on the PostgreSQL server, dropped afterwards."""
    from pressroom.db import migrate

    base = PG_SERVER.rpartition("/")[0]
    name = f"pressroom_bench_{secrets.token_hex(4)}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    url = f"{base}/{name}"
    try:
        migrate(url)
        yield url
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@contextmanager
def fresh_database(kind: str) -> Iterator[str]:
    """A new, migrated database: `postgres` on the PostgreSQL server, or `sqlite` in a file
    under bench/results (the embedded default), removed afterwards."""
    if kind == "postgres":
        with fresh_postgres_database() as url:
            yield url
        return
    from pressroom.db import migrate

    folder = ROOT / "bench" / "results" / f"sqlite-{secrets.token_hex(4)}"
    folder.mkdir(parents=True)
    url = f"sqlite:///{folder / 'pressroom.db'}"
    try:
        migrate(url)
        yield url
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@asynccontextmanager
async def bench_runtime(database_url: str, data_dir: Path) -> AsyncIterator[Any]:
    """A runtime on the benchmark's database (to set it up), closed afterwards."""
    from pressroom.config import Settings
    from pressroom.runtime import Runtime

    runtime = Runtime.build(
        Settings(database_url=database_url, data_dir=data_dir, secret_key=SERVER_KEY)
    )
    try:
        yield runtime
    finally:
        await runtime.close()


def tls_files(work: Path, host: str) -> tuple[Path, Path, Path]:
    """A test CA and a certificate for `host` and 127.0.0.1 under `work`: (CA, cert, key)."""
    import trustme

    ca = trustme.CA()
    issued = ca.issue_cert(host, "127.0.0.1")
    ca_file, cert_file, key_file = work / "ca.pem", work / "cert.pem", work / "key.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    issued.cert_chain_pems[0].write_to_path(str(cert_file))
    issued.private_key_pem.write_to_path(str(key_file))
    return ca_file, cert_file, key_file


def process_cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average() -> float:
    return os.getloadavg()[0]


def pin(cpu: int | str) -> list[str]:
    """Run on one CPU (server on 0, load generator on 1), so the two never share a core; or on
    a list of them (`"0,1"`); `""`: not pinned."""
    if cpu != "" and shutil.which("taskset") and (os.cpu_count() or 1) >= 2:
        return ["taskset", "-c", str(cpu)]
    return []


UVICORN_SETTINGS = [
    "--loop",
    "uvloop",
    "--http",
    "httptools",
    "--no-access-log",
    "--log-level",
    "warning",
    "--workers",
    "1",
]


@contextmanager
def server(
    target: list[str], port: int, env: dict[str, str], ready_path: str, cpus: str = "0"
) -> Iterator[subprocess.Popen[bytes]]:
    """Run uvicorn with the shared settings, on CPU 0 unless `cpus` says otherwise, and wait
    until `ready_path` answers."""
    command = [
        *pin(cpus),
        sys.executable,
        "-m",
        "uvicorn",
        *target,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *UVICORN_SETTINGS,
    ]
    log = open(ROOT / "bench" / "results" / f"server-{port}.log", "wb")  # noqa: SIM115
    process = subprocess.Popen(command, env={**os.environ, **env}, stdout=log, stderr=log, cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}{ready_path}", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise RuntimeError(f"server on port {port} did not start")
        yield process
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def load(
    url: str,
    *,
    connections: int,
    seconds: float,
    headers: list[str],
    method: str = "GET",
    body_file: Path | None = None,
) -> dict[str, object]:
    import json

    args = [
        *pin(1),
        sys.executable,
        str(ROOT / "bench" / "loadgen.py"),
        "--url",
        url,
        "--connections",
        str(connections),
        "--seconds",
        str(seconds),
    ]
    for header in headers:
        args += ["--header", header]
    args += ["--method", method]
    if body_file is not None:
        args += ["--body-file", str(body_file)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)  # type: ignore[no-any-return]


def median_figures(runs: list[dict[str, object]]) -> dict[str, object]:
    """The median of each figure over the rounds, every round's requests per second, and the
    answers that were not 2xx and the requests that failed, over all rounds."""
    import statistics

    figures: dict[str, object] = {}
    for field in ("rps", "p50_ms", "p99_ms"):
        figures[field] = statistics.median(float(run[field]) for run in runs)  # type: ignore[arg-type]
    figures["rounds_rps"] = [run["rps"] for run in runs]
    figures["non_2xx"] = sum(
        n
        for run in runs
        for status, n in run["statuses"].items()  # type: ignore[attr-defined]
        if not str(status).startswith("2")
    )
    figures["failed"] = sum(int(run.get("failed", 0)) for run in runs)  # type: ignore[call-overload]
    return figures


def closed_loop_arguments(seconds: float) -> tuple[Any, list[str]]:
    """The arguments of the closed-loop benchmarks (--database, --seconds, --connections,
    --rounds) parsed, and the databases to run on; bench/results made."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--database", choices=["postgres", "sqlite", "both"], default="both")
    parser.add_argument("--seconds", type=float, default=seconds)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    sys.path.insert(0, str(ROOT))
    return args, ["postgres", "sqlite"] if args.database == "both" else [args.database]
