"""The load test on the embedded default (issue 17): `pressroom serve` with its workers on
SQLite, 32 connections of mixed reads and writes (tests/load_client.py), no failed request and
no `database is locked` in the server's log. PRESSROOM_LOAD_SECONDS sets the time (default 10
for CI; bench/bench_load.py runs 60)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests import servers
from tests.load_client import WEIGHTS
from tests.load_client import run_load

pytestmark = pytest.mark.slow

SECONDS = float(os.environ.get("PRESSROOM_LOAD_SECONDS", "10"))


def test_mixed_load_on_embedded_sqlite_fails_no_request(tmp_path: Path) -> None:
    # A per-key limit the load cannot reach: this measures the database, not 429s.
    limit = {"PRESSROOM_RATE_LIMIT": "100000000/60"}
    process, base, key = servers.start_serve_demo(tmp_path, limit)
    try:
        channels = servers.sandbox_channels(base, key)
        result = asyncio.run(run_load(base, key, channels, connections=32, seconds=SECONDS))
    finally:
        process.stop()
    summary = result.summary()
    assert result.failures == [], summary
    assert set(result.calls) == set(WEIGHTS), summary  # every kind of request was made
    assert sum(result.calls.values()) >= SECONDS * 5, summary
    assert "database is locked" not in process.output()
