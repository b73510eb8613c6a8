"""The Node packages some tests run (a folder with package.json and package-lock.json).

``./dev test`` installs them (``npm ci``); a test run started another way installs them the same
way on first use, again whenever the lockfile is newer than the installed tree."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

_NPM_CI = ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"]


def _installed(folder: Path) -> bool:
    modules = folder / "node_modules"
    lock = folder / "package-lock.json"
    return modules.is_dir() and modules.stat().st_mtime >= lock.stat().st_mtime


def require_node_packages(folder: Path, purpose: str) -> None:
    """Install `folder`'s pinned packages if needed; skip, saying why, without Node or npm."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"{purpose} need Node and npm (node 20+): neither is on PATH")
    if not _installed(folder):
        subprocess.run(_NPM_CI, cwd=folder, check=True, stdout=subprocess.DEVNULL)
        (folder / "node_modules").touch()
