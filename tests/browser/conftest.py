"""Fixtures of the browser tests (tests/browser/harness.py has the pieces)."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from pressroom.runtime import Runtime
from tests.browser.harness import CHROMIUM
from tests.browser.harness import ConsoleServer
from tests.browser.harness import require_browser
from tests.browser.harness import start_console_server
from tests.factories import Tenant
from tests.factories import make_tenant


@pytest.fixture(scope="module")
def console_env() -> dict[str, str]:
    """More environment for the module's server (a module overrides this fixture)."""
    return {}


@pytest.fixture(scope="module")
def console_server(
    fresh_databases: Callable[[str], str],
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
    console_env: dict[str, str],
) -> Iterator[ConsoleServer]:
    """A server over a database of this module alone, with an owner (all scopes)."""
    require_browser()
    name = request.module.__name__.rpartition(".")[2]
    # In a thread: migrating runs its own event loop, and Playwright's may already run here.
    with ThreadPoolExecutor(1) as pool:
        database_url = pool.submit(fresh_databases, name).result()

    async def owner(runtime: Runtime) -> Tenant:
        return await make_tenant(runtime, name="Console Test")

    server = start_console_server(
        database_url,
        tmp_path_factory.mktemp(f"{name}-data"),
        tmp_path_factory.mktemp(f"{name}-logs"),
        owner,
        console_env,
    )
    try:
        yield server
    finally:
        server.process.stop()
    errors = [line for line in server.process.output().splitlines() if '"ERROR"' in line]
    assert not errors, errors[0][:3000]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A new browser profile (no cookies) per test. A script error or a refusal by the
    console's Content-Security-Policy, logged by the browser, fails the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    opened.on(
        "console",
        lambda message: (
            problems.append(message.text)
            if message.type == "error" and "Content Security Policy" in message.text
            else None
        ),
    )
    try:
        yield opened
    finally:
        context.close()
    assert not problems, problems
