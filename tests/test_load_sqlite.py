"""The load test on the embedded default (issue 17): `pressroom serve` with its workers on
SQLite, 32 connections of mixed reads and writes (tests/load_client.py), no failed request and
no `database is locked` in the server's log. PRESSROOM_LOAD_SECONDS sets the time (default 10
for CI; bench/bench_load.py runs 60)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import httpx
import pytest

from tests import servers
from tests.load_client import WEIGHTS, run_load

pytestmark = pytest.mark.slow

SECONDS = float(os.environ.get("PRESSROOM_LOAD_SECONDS", "10"))


def test_mixed_load_on_embedded_sqlite_fails_no_request(tmp_path: Path) -> None:
    port = servers.free_port()
    env = {**os.environ, "PRESSROOM_DATA_DIR": str(tmp_path / "data")}
    env.pop("PRESSROOM_DATABASE_URL", None)  # the embedded SQLite default
    process = servers.start(
        "serve", ["serve", "--demo", "--json", "--port", str(port)], env, tmp_path / "logs"
    )
    base = f"http://127.0.0.1:{port}"
    try:
        servers.wait_until("the API", servers.healthy(base), [process])
        servers.wait_until("the workers", lambda: "workers started" in process.output(), [process])
        key = json.loads(process.printed().splitlines()[0])["key"]
        listed = httpx.get(
            f"{base}/api/v1/channels", headers={"Authorization": f"Bearer {key}"}, timeout=30
        ).json()
        channels = [c["id"] for c in listed["items"] if c["provider"] == "sandbox"]
        result = asyncio.run(run_load(base, key, channels, connections=32, seconds=SECONDS))
    finally:
        process.stop()
    summary = result.summary()
    assert result.failures == [], summary
    assert set(result.calls) == set(WEIGHTS), summary  # every kind of request was made
    assert sum(result.calls.values()) >= SECONDS * 5, summary
    assert "database is locked" not in process.output()
