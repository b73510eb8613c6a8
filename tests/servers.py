"""Pressroom processes for tests: start `python -m pressroom ...` with its output in log files,
wait for it to come up within a deadline, and stop it.

A process that exits before it is ready, or is not ready by its deadline, fails the test at
once with what it wrote: a test never carries on against a server that never started."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

# Starting Python and importing the application takes seconds on an idle 2-core machine and
# several times that when other suites share it: a deadline long enough for that, and no more.
START_SECONDS = 90.0
STOP_SECONDS = 30.0
TAIL_CHARS = 4000


@dataclass
class PressroomProcess:
    """One `python -m pressroom` process; stderr (its log) and stdout each in a file."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    stdout: Path

    def output(self) -> str:
        """Everything it has logged so far (stderr)."""
        return self.log.read_text(errors="replace")

    def printed(self) -> str:
        """Everything it has printed so far (stdout)."""
        return self.stdout.read_text(errors="replace")

    def describe(self) -> str:
        """Exit status and the tail of both outputs, for a failure message."""
        code = self.popen.poll()
        status = "still running" if code is None else f"exited with {code}"
        return (
            f"{self.name} (pid {self.popen.pid}) {status}\n"
            f"--- {self.name} stderr ---\n{self.output()[-TAIL_CHARS:]}\n"
            f"--- {self.name} stdout ---\n{self.printed()[-TAIL_CHARS:]}"
        )

    def assert_running(self, waiting_for: str) -> None:
        if self.popen.poll() is not None:
            message = f"{self.name} exited while waiting for {waiting_for}:\n{self.describe()}"
            pytest.fail(message, pytrace=False)

    def stop(self, how: signal.Signals = signal.SIGTERM, seconds: float = STOP_SECONDS) -> int:
        """Signal it (if still running) and wait for it to exit; SIGKILL when it does not
        within `seconds`. Returns its exit code."""
        if self.popen.poll() is None:
            self.popen.send_signal(how)
        try:
            return self.popen.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            pytest.fail(f"{self.name} did not exit within {seconds} s of {how.name}", pytrace=False)


def start(name: str, args: list[str], env: Mapping[str, str], logs: Path) -> PressroomProcess:
    """`python -m pressroom *args`, its stderr in logs/<name>.log and stdout in
    logs/<name>.out."""
    logs.mkdir(parents=True, exist_ok=True)
    log, out = logs / f"{name}.log", logs / f"{name}.out"
    with log.open("wb") as err_sink, out.open("wb") as out_sink:
        popen = subprocess.Popen(
            [sys.executable, "-m", "pressroom", *args],
            env=dict(env),
            stdout=out_sink,
            stderr=err_sink,
        )
    return PressroomProcess(name, popen, log, out)


def _timed_out(what: str, seconds: float, processes: Iterable[PressroomProcess]) -> str:
    details = "\n".join(process.describe() for process in processes)
    return f"timed out after {seconds:.0f} s waiting for {what}\n{details}"


def wait_until(
    what: str,
    ready: Callable[[], bool],
    processes: Iterable[PressroomProcess],
    seconds: float = START_SECONDS,
) -> None:
    """Poll `ready` until it holds; fail the test with the processes' output as soon as one
    of them exits, or when `seconds` pass."""
    watched = list(processes)
    deadline = time.monotonic() + seconds
    while True:
        for process in watched:
            process.assert_running(what)
        if ready():
            return
        if time.monotonic() > deadline:
            pytest.fail(_timed_out(what, seconds, watched), pytrace=False)
        time.sleep(0.1)


async def wait_until_async(
    what: str,
    ready: Callable[[], bool | Awaitable[bool]],
    processes: Iterable[PressroomProcess],
    seconds: float = START_SECONDS,
) -> None:
    """wait_until for a test running on an event loop (`ready` may be a coroutine)."""
    watched = list(processes)
    deadline = time.monotonic() + seconds
    while True:
        for process in watched:
            process.assert_running(what)
        answer = ready()
        if answer if isinstance(answer, bool) else await answer:
            return
        if time.monotonic() > deadline:
            pytest.fail(_timed_out(what, seconds, watched), pytrace=False)
        await asyncio.sleep(0.1)


def healthy(base_url: str) -> Callable[[], bool]:
    """A probe: the API at base_url answers /healthz with 200."""

    def probe() -> bool:
        try:
            return httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    return probe


def healthy_async(base_url: str) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        try:
            async with httpx.AsyncClient() as client:
                return (await client.get(f"{base_url}/healthz", timeout=2)).status_code == 200
        except httpx.TransportError:
            return False

    return probe


def workers_started(processes: Iterable[PressroomProcess]) -> Callable[[], bool]:
    """A probe: every one of these worker processes has logged that its loops run."""
    watched = list(processes)
    return lambda: all("workers started" in process.output() for process in watched)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_serve_demo(
    tmp_path: Path, settings: Mapping[str, str] | None = None
) -> tuple[PressroomProcess, str, str]:
    """`pressroom serve --demo --json` with its workers on the embedded SQLite default in
    tmp_path (and `settings`, PRESSROOM_* variables), up and with its workers running:
    (process, base URL, the demo owner's key)."""
    import json
    import os

    port = free_port()
    env = {**os.environ, **(settings or {}), "PRESSROOM_DATA_DIR": str(tmp_path / "data")}
    env.pop("PRESSROOM_DATABASE_URL", None)
    process = start(
        "serve", ["serve", "--demo", "--json", "--port", str(port)], env, tmp_path / "logs"
    )
    base = f"http://127.0.0.1:{port}"
    wait_until("the API", healthy(base), [process])
    wait_until("the workers", lambda: "workers started" in process.output(), [process])
    return process, base, json.loads(process.printed().splitlines()[0])["key"]


def sandbox_channels(base: str, key: str) -> list[str]:
    """The ids of the sandbox channels the key's organization has connected."""
    listed = httpx.get(
        f"{base}/api/v1/channels", headers={"Authorization": f"Bearer {key}"}, timeout=30
    ).json()
    return [channel["id"] for channel in listed["items"] if channel["provider"] == "sandbox"]
