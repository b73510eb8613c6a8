"""Helpers of the operations screens' browser tests (webhooks, analytics, audit, media,
channels)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tests.browser.harness import ConsoleServer
from tests.browser.harness import check_accessibility
from tests.browser.harness import screenshot_both_widths


def sign_in(page: Any, server: ConsoleServer, key: str) -> None:
    """Sign in with an API key pasted into the sign-in form."""
    page.goto(f"{server.base}/console/sign-in")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{server.base}/console")


def look_at(page: Any, name: str) -> list[dict[str, Any]]:
    """axe-core (no critical violation) and screenshots at both widths; the violations. At
    390 px nothing may stick out, and the message names what does."""
    violations = check_accessibility(page)
    page.set_viewport_size({"width": 390, "height": 900})
    wide = page.evaluate(_STICKING_OUT)
    page.set_viewport_size({"width": 1280, "height": 900})
    assert not wide, f"{name} at 390 px: these stick out: {wide}"
    screenshot_both_widths(page, name)
    return violations


# Elements wider than the window, or whose content spills out of them sideways (a long word),
# innermost first.
_STICKING_OUT = """() => {
  const width = document.documentElement.clientWidth;
  const spills = e => e.getBoundingClientRect().right > width + 0.5 ||
    (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'visible' &&
     e.clientWidth > 0);
  return [...document.querySelectorAll('body *')]
    .filter(e => spills(e) && ![...e.children].some(spills))
    .slice(0, 5)
    .map(e => `${e.tagName.toLowerCase()}.${e.className}: ${e.textContent.trim().slice(0, 40)}`);
}"""


def csrf_of(page: Any) -> str:
    """The session's CSRF token, as the page carries it for its forms."""
    token: str = page.evaluate("() => document.body.dataset.csrf")
    assert token
    return token


def eventually(check: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout} s"
        time.sleep(0.25)
