"""A worker node (`pressroom worker`, no API) serves its own /metrics on
PRESSROOM_METRICS_HOST:PRESSROOM_METRICS_PORT: its loops' heartbeats and the database gauges,
behind the same token; SIGTERM stops both."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests import servers
from tests.factories import SERVER_KEY

from .conftest import METRICS_TOKEN

pytestmark = pytest.mark.slow


def test_a_worker_node_serves_its_loops_heartbeats(database_url: str, tmp_path: Path):
    port = servers.free_port()
    env = {
        **os.environ,
        "PRESSROOM_DATABASE_URL": database_url,
        "PRESSROOM_DATA_DIR": str(tmp_path / "data"),
        "PRESSROOM_SECRET_KEY": SERVER_KEY,
        "PRESSROOM_METRICS": "true",
        "PRESSROOM_METRICS_TOKEN": METRICS_TOKEN,
        "PRESSROOM_METRICS_PORT": str(port),
    }
    started = time.time()
    worker = servers.start("worker", ["worker"], env, tmp_path)
    url = f"http://127.0.0.1:{port}/metrics"
    headers = {"Authorization": f"Bearer {METRICS_TOKEN}"}

    def beating() -> bool:
        try:
            response = httpx.get(url, headers=headers, timeout=2)
        except httpx.TransportError:
            return False
        return 'loop="publisher"' in response.text and 'loop="webhook-delivery"' in response.text

    try:
        servers.wait_until("the worker's metrics", beating, [worker])
        assert httpx.get(url, timeout=2).status_code == 401
        text = httpx.get(url, headers=headers, timeout=2).text
        beats = {
            sample.labels["loop"]: sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if sample.name == "pressroom_worker_loop_last_run_timestamp_seconds"
        }
        assert {"publisher", "webhook-delivery", "metrics-poller"} <= set(beats)
        assert all(started <= beat <= time.time() for beat in beats.values())
        assert "pressroom_post_targets{" in text
        assert f"metrics at http://127.0.0.1:{port}/metrics" in worker.output()
    finally:
        assert worker.stop() == 0, worker.describe()
