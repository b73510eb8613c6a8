"""Authenticated, rate-limited read vs. the bare framework ceiling (issue: foundation).

Starts Pressroom on a fresh database (PostgreSQL, SQLite or each in turn) and a bare Starlette
JSON endpoint with the same uvicorn settings (one process each, uvloop + httptools), then
drives each with 32 keep-alive connections for the same time, in interleaved rounds, and
reports requests per second and p50/p99 latency of both (medians over the rounds) and their
ratio.

    uv run python bench/bench_tenant.py [--database both] [--seconds 15] [--connections 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT
from common import SERVER_KEY
from common import bench_runtime
from common import closed_loop_arguments
from common import free_port
from common import fresh_database
from common import load
from common import load_average
from common import median_figures
from common import server


async def make_key(database_url: str, data_dir: Path) -> str:
    from tests.factories import make_tenant

    async with bench_runtime(database_url, data_dir) as runtime:
        return (await make_tenant(runtime, name="Bench")).key


def measure(kind: str, args: argparse.Namespace) -> dict[str, object]:
    data_dir = ROOT / "bench" / "results" / f"tenant-data-{kind}"
    with fresh_database(kind) as database_url:
        key = asyncio.run(make_key(database_url, data_dir))
        env = {
            "PRESSROOM_DATABASE_URL": database_url,
            "PRESSROOM_DATA_DIR": str(data_dir),
            "PRESSROOM_SECRET_KEY": SERVER_KEY,
            # A limit the benchmark cannot reach: we measure the limiter's cost, not 429s.
            "PRESSROOM_RATE_LIMIT": "100000000/60",
        }
        rounds: dict[str, list[dict[str, object]]] = {"ceiling": [], "getTenant": []}
        ceiling_port, tenant_port = free_port(), free_port()
        auth = [f"Authorization: Bearer {key}"]
        targets = {
            "ceiling": (f"http://127.0.0.1:{ceiling_port}/json", []),
            "getTenant": (f"http://127.0.0.1:{tenant_port}/api/v1/tenant", auth),
        }
        load_before = load_average()
        with (
            server(["bench.bare_app:app"], ceiling_port, {}, "/json"),
            server(["--factory", "pressroom.app:create_app"], tenant_port, env, "/healthz"),
        ):
            for url, headers in targets.values():
                load(url, connections=args.connections, seconds=2, headers=headers)  # warm-up
            # Interleaved rounds, so drift in the machine's speed hits both alike.
            for _ in range(args.rounds):
                for name, (url, headers) in targets.items():
                    rounds[name].append(
                        load(
                            url, connections=args.connections, seconds=args.seconds, headers=headers
                        )
                    )
        results = {name: median_figures(runs) for name, runs in rounds.items()}
    ceiling, tenant = results["ceiling"], results["getTenant"]
    ratio = float(tenant["rps"]) / float(ceiling["rps"])  # type: ignore[arg-type]
    return {
        "database": kind,
        "load_average": [round(load_before, 2), round(load_average(), 2)],
        "ceiling": ceiling,
        "getTenant": tenant,
        "ratio": round(ratio, 3),
        "targets": {"ratio >= 0.25": ratio >= 0.25, "p99 < 25 ms": float(tenant["p99_ms"]) < 25},  # type: ignore[arg-type]
    }


def main() -> None:
    args, kinds = closed_loop_arguments(seconds=15.0)
    summary = {
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "connections": args.connections,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "runs": [measure(kind, args) for kind in kinds],
    }
    (ROOT / "bench" / "results" / "tenant.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    for run in summary["runs"]:  # type: ignore[attr-defined]
        ceiling, tenant = run["ceiling"], run["getTenant"]
        print(
            f"\n[{run['database']}] bare Starlette: {ceiling['rps']} req/s, "
            f"p99 {ceiling['p99_ms']} ms; GET /api/v1/tenant: {tenant['rps']} req/s, "
            f"p50 {tenant['p50_ms']} ms, p99 {tenant['p99_ms']} ms, "
            f"failed {tenant['failed']}, non-2xx {tenant['non_2xx']}; "
            f"ratio {run['ratio']:.1%} of the ceiling"
        )


if __name__ == "__main__":
    main()
