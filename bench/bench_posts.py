"""The posts paths against the bare framework (issue 17): `GET /api/v1/posts?pageSize=25`
over 200 posts with 2 targets each, and `createPost` (2 targets, scheduled) in a closed loop.

Per database (PostgreSQL, SQLite or each in turn): a fresh database, an organization with two
sandbox channels and 200 scheduled posts, one Pressroom process (uvicorn, pinned to CPU 0) and
the bare Starlette app under the same settings. 32 keep-alive connections from the load
generator (CPU 1), interleaved rounds of: the bare GET, listPosts, the bare POST (parses and
answers the same JSON body), createPost. Figures are medians over the rounds; CPU per request
is the server process's user+system time over a round divided by its answers.

    uv run python bench/bench_posts.py [--database both] [--seconds 10] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path

import httpx

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
from common import process_cpu_seconds
from common import server

POSTS = 200


async def make_tenant_with_channels(database_url: str, data_dir: Path) -> tuple[str, list[str]]:
    from tests.channels.factories import connect_channel
    from tests.factories import make_tenant

    async with bench_runtime(database_url, data_dir) as runtime:
        tenant = await make_tenant(runtime, name="Bench")
        channels = [
            str(await connect_channel(runtime, tenant.organization_id, name=f"Sandbox {n}"))
            for n in range(2)
        ]
        return tenant.key, channels


def create_body(channels: list[str]) -> dict[str, object]:
    """A scheduled post with two targets, a day ahead (the publisher never takes it)."""
    scheduled = (datetime.now(UTC) + timedelta(days=1)).isoformat().replace("+00:00", "Z")
    return {
        "text": "Spring launch: our new pricing is live. Read the details on the blog.",
        "scheduledAt": scheduled,
        "tags": ["spring-launch"],
        "topics": ["pricing"],
        "targets": [{"channelId": channel} for channel in channels],
    }


def round_with_cpu(
    pid: int | None, url: str, args: argparse.Namespace, **options: object
) -> dict[str, object]:
    before = process_cpu_seconds(pid) if pid else 0.0
    figures = load(url, connections=args.connections, seconds=args.seconds, **options)  # type: ignore[arg-type]
    if pid:
        answered = sum(figures["statuses"].values()) or 1  # type: ignore[attr-defined]
        figures["cpu_ms"] = (process_cpu_seconds(pid) - before) * 1000 / answered
    return figures


def measure(kind: str, args: argparse.Namespace) -> dict[str, object]:
    results_dir = ROOT / "bench" / "results"
    data_dir = results_dir / f"posts-data-{kind}"
    body_file = results_dir / "create-post.json"
    with fresh_database(kind) as database_url:
        key, channels = asyncio.run(make_tenant_with_channels(database_url, data_dir))
        body_file.write_text(json.dumps(create_body(channels)))
        env = {
            "PRESSROOM_DATABASE_URL": database_url,
            "PRESSROOM_DATA_DIR": str(data_dir),
            "PRESSROOM_SECRET_KEY": SERVER_KEY,
            "PRESSROOM_RATE_LIMIT": "100000000/60",
        }
        auth = [f"Authorization: Bearer {key}"]
        ceiling_port, port = free_port(), free_port()
        base = f"http://127.0.0.1:{port}"
        load_before = load_average()
        with (
            server(["bench.bare_app:app"], ceiling_port, {}, "/json") as ceiling_process,
            server(["--factory", "pressroom.app:create_app"], port, env, "/healthz") as process,
        ):
            with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}) as client:
                for _ in range(POSTS):
                    client.post("/api/v1/posts", json=create_body(channels)).raise_for_status()
            paths = {
                "ceiling_get": (ceiling_process.pid, f"http://127.0.0.1:{ceiling_port}/json", {}),
                "listPosts": (process.pid, f"{base}/api/v1/posts?pageSize=25", {}),
                "ceiling_post": (
                    ceiling_process.pid,
                    f"http://127.0.0.1:{ceiling_port}/echo",
                    {"method": "POST", "body_file": body_file},
                ),
                "createPost": (
                    process.pid,
                    f"{base}/api/v1/posts",
                    {"method": "POST", "body_file": body_file},
                ),
            }
            warm = argparse.Namespace(connections=args.connections, seconds=2)
            for pid, url, options in paths.values():
                round_with_cpu(pid, url, warm, headers=auth, **options)
            rounds: dict[str, list[dict[str, object]]] = {name: [] for name in paths}
            for _ in range(args.rounds):
                for name, (pid, url, options) in paths.items():
                    rounds[name].append(round_with_cpu(pid, url, args, headers=auth, **options))
    figures: dict[str, object] = {}
    for name, runs in rounds.items():
        figures[name] = median_figures(runs)
        figures[name]["cpu_ms"] = round(statistics.median(float(r["cpu_ms"]) for r in runs), 3)  # type: ignore[index]
    listing, creating = figures["listPosts"], figures["createPost"]
    list_ratio = float(listing["rps"]) / float(figures["ceiling_get"]["rps"])  # type: ignore[index]
    create_ratio = float(creating["rps"]) / float(figures["ceiling_post"]["rps"])  # type: ignore[index]
    return {
        "database": kind,
        "load_average": [round(load_before, 2), round(load_average(), 2)],
        **figures,
        "listPosts_ratio": round(list_ratio, 4),
        "createPost_ratio": round(create_ratio, 4),
        "targets": {
            "listPosts >= 5% of the bare framework": list_ratio >= 0.05,
            "listPosts p99 < 100 ms": float(listing["p99_ms"]) < 100,  # type: ignore[index]
            "listPosts no failed request": listing["failed"] == 0 and listing["non_2xx"] == 0,  # type: ignore[index]
            "createPost no failed request": creating["failed"] == 0 and creating["non_2xx"] == 0,  # type: ignore[index]
        },
    }


def main() -> None:
    args, kinds = closed_loop_arguments(seconds=10.0)
    summary = {
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "connections": args.connections,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "runs": [measure(kind, args) for kind in kinds],
    }
    (ROOT / "bench" / "results" / "posts.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    for run in summary["runs"]:  # type: ignore[attr-defined]
        for name in ("listPosts", "createPost"):
            f = run[name]
            print(
                f"[{run['database']}] {name}: {f['rps']} req/s ({run[name + '_ratio']:.1%} of "
                f"the bare framework), p50 {f['p50_ms']} ms, p99 {f['p99_ms']} ms, "
                f"{f['cpu_ms']} ms CPU per request, failed {f['failed']}, non-2xx {f['non_2xx']}"
            )


if __name__ == "__main__":
    main()
