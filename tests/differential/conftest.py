"""The judges: the networks' own counting libraries, run by Node, once per test session.

``judge.mjs`` answers JSON lines (see its header). Node and the pinned packages are set up by
``./dev test`` (``npm ci`` in this folder); a test run started another way installs them here the
same way on first use. Without Node or npm the differential tests skip, saying so.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.node_packages import require_node_packages

HERE = Path(__file__).resolve().parent


class Judge:
    """One Node process answering one JSON line per text, in order."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            ["node", "judge.mjs"],
            cwd=HERE,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="surrogatepass",
        )

    def ask(self, text: str) -> dict[str, Any]:
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps({"text": text}) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"the judge stopped (exit code {self._process.poll()})")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"the judge failed on {text!r}: {answer['error']}")
        return answer

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


@pytest.fixture(scope="session")
def judge() -> Iterator[Judge]:
    require_node_packages(HERE, "differential tests")
    instance = Judge()
    try:
        yield instance
    finally:
        instance.close()
