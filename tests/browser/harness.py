"""The browser tests' harness: a real Pressroom server on loopback over a fresh database, the
Debian Chromium driven by Playwright, axe-core, screenshots and secret checks."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Awaitable
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import TypeVar

import pytest

from pressroom.config import Settings
from pressroom.runtime import Runtime
from tests import servers
from tests.factories import SERVER_KEY
from tests.factories import Tenant

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("PRESSROOM_CHROMIUM", "/usr/bin/chromium"))
AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
# Not committed (bench/results/ is ignored): look at them after a run.
SCREENSHOTS = Path(os.environ.get("PRESSROOM_SCREENSHOTS", ROOT / "bench" / "results" / "console"))
WIDTHS = (1280, 390)


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (it is a dev dependency: ./dev test)"
    return None


def require_browser() -> None:
    """Skip with the reason outside CI; in CI (which installs the browser) a missing browser
    fails instead of passing silently."""
    reason = missing_browser()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def in_thread(work: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion on its own loop in another thread: Playwright's sync API
    keeps a loop on the test's thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(work())).result()  # type: ignore[arg-type]


@dataclass
class ConsoleServer:
    """A `pressroom serve` process (API, console and workers) on a database of its own."""

    base: str
    env: dict[str, str]
    settings: Settings
    process: servers.PressroomProcess
    owner: Tenant
    extra: dict[str, Any] = field(default_factory=dict)

    def with_runtime(self, work: Callable[[Runtime], Awaitable[T]]) -> T:
        async def run() -> T:
            runtime = Runtime.build(self.settings)
            try:
                return await work(runtime)
            finally:
                await runtime.close()

        return in_thread(run)

    def cli(self, *args: str) -> str:
        """`pressroom ARGS` against this server's database; its stdout."""
        done = subprocess.run(
            [sys.executable, "-m", "pressroom", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


def start_console_server(
    database_url: str,
    data_dir: Path,
    logs: Path,
    make_owner: Callable[[Runtime], Awaitable[Tenant]],
    extra_env: dict[str, str] | None = None,
) -> ConsoleServer:
    port = servers.free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "PRESSROOM_DATABASE_URL": database_url,
        "PRESSROOM_DATA_DIR": str(data_dir),
        "PRESSROOM_SECRET_KEY": SERVER_KEY,
        "PRESSROOM_RATE_LIMIT": "1000000/60",
        "PRESSROOM_AUTH_FAILURE_LIMIT": "1000/60",
        "PRESSROOM_LOG_LEVEL": "WARNING",
        "PRESSROOM_PUBLIC_URL": base,
        **(extra_env or {}),
    }
    settings = Settings(
        database_url=database_url, data_dir=data_dir, secret_key=SERVER_KEY, public_url=base
    )

    async def owner() -> Tenant:
        runtime = Runtime.build(settings)
        try:
            return await make_owner(runtime)
        finally:
            await runtime.close()

    tenant = in_thread(owner)
    process = servers.start("console", ["serve", "--port", str(port)], env, logs)
    servers.wait_until("the console's server", servers.healthy(base), [process])
    return ConsoleServer(base, env, settings, process, tenant)


def check_accessibility(page: Any) -> list[dict[str, Any]]:
    """Run axe-core on the page; fail on any critical violation. The violations found (of any
    impact) are returned for a test that holds a screen to more."""
    # Served from the page's own origin (intercepted, never reaching the server), so the
    # console's Content-Security-Policy stays on while axe runs.
    origin = "/".join(page.url.split("/")[:3])
    url = f"{origin}/__axe__/axe.min.js"
    page.route(url, lambda route: route.fulfill(path=str(AXE), content_type="text/javascript"))
    page.add_script_tag(url=url)
    results = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    violations: list[dict[str, Any]] = results["violations"]
    critical = [
        f"{v['id']}: {v['help']} ({[n['target'] for n in v['nodes']][:3]})"
        for v in violations
        if v["impact"] == "critical"
    ]
    assert not critical, f"critical accessibility violations on {page.url}: {critical}"
    return violations


def screenshot_both_widths(page: Any, name: str) -> None:
    """A full-page screenshot at 1280 and 390 px wide; at each width nothing may stick out
    sideways (the page must be readable without scrolling left and right)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{name} is {overflow} px wider than the {width} px window"
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def assert_no_secret(page: Any, *secrets: str) -> None:
    """None of `secrets` is anywhere in the page's HTML (nor its text)."""
    html = page.content()
    for secret in secrets:
        assert secret not in html, f"a secret ({secret[:6]}...) appears in {page.url}"
