"""`serve` hosts its workers in a supervised child process: started with the API, restarted
when it dies, stopped with the API, and gone when `serve` itself is killed. On the embedded
SQLite default the API's commits still wake the child at once (a publish-now post is
published well before the publisher's 1 s poll would find it)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from tests import servers

pytestmark = pytest.mark.slow


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is `pid` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def the_worker(process: servers.PressroomProcess) -> int:
    (child,) = children_of(process.popen.pid)
    return child


def test_a_killed_worker_process_is_restarted_and_stopped_with_serve(tmp_path: Path) -> None:
    process, base, key = servers.start_serve_demo(tmp_path)
    try:
        first = the_worker(process)
        os.kill(first, signal.SIGKILL)
        servers.wait_until(
            "a new worker process",
            lambda: process.output().count("workers started") == 2,
            [process],
        )
        second = the_worker(process)
        assert second != first
        assert "worker process exited; restarting" in process.output()
        headers = {"Authorization": f"Bearer {key}"}
        sandbox = servers.sandbox_channels(base, key)[0]
        created = httpx.post(
            f"{base}/api/v1/posts",
            json={"text": "Now", "publishNow": True, "targets": [{"channelId": sandbox}]},
            headers=headers,
            timeout=10,
        )
        assert created.status_code == 201, created.text
        url = f"{base}/api/v1/posts/{created.json()['id']}"
        servers.wait_until(
            "the post published by the restarted worker",
            lambda: httpx.get(url, headers=headers, timeout=10).json()["status"] == "published",
            [process],
            seconds=30,
        )
    finally:
        process.stop()
    assert process.popen.returncode in (0, -signal.SIGTERM), process.output()[-2000:]
    assert not alive(second)
    output = process.output()
    assert output.index("workers stopped") < output.index("Application shutdown complete")


def test_the_worker_process_dies_with_a_killed_serve(tmp_path: Path) -> None:
    process, _, _ = servers.start_serve_demo(tmp_path)
    worker = the_worker(process)
    process.stop(signal.SIGKILL)
    deadline = time.monotonic() + 30
    while alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(worker)
