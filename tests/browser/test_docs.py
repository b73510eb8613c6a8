"""The documentation at /docs, rendered by the vendored Swagger UI in a real browser: every
operation of the OpenAPI 3.1 document is shown, with no request leaving the machine."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.browser.harness import ConsoleServer
from tests.browser.harness import check_accessibility
from tests.browser.harness import screenshot_both_widths

pytestmark = [pytest.mark.browser, pytest.mark.slow]
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def test_the_docs_render_every_operation(console_server: ConsoleServer, page: Any) -> None:
    document = httpx.get(f"{console_server.base}/openapi.json", timeout=10).json()
    operations = [
        (method, path)
        for path, item in document["paths"].items()
        for method in item
        if method in METHODS
    ]
    # The document's `webhooks` (the events a receiver gets) are drawn as operations too.
    events = [
        method
        for item in document.get("webhooks", {}).values()
        for method in item
        if method in METHODS
    ]
    elsewhere: list[str] = []
    page.on(
        "request",
        lambda request: (
            None
            if request.url.startswith((console_server.base, "data:"))
            else elsewhere.append(request.url)
        ),
    )
    page.goto(f"{console_server.base}/docs")
    page.locator(".opblock").first.wait_for()
    expected = len(operations) + len(events)
    page.wait_for_function(f"() => document.querySelectorAll('.opblock').length >= {expected}")
    assert page.locator(".opblock").count() == expected
    for method, path in operations:
        block = page.locator(f".opblock-{method}", has=page.locator(f'[data-path="{path}"]'))
        assert block.count() == 1, (method, path)
    assert "Unable to render this definition" not in page.content()
    assert not elsewhere, elsewhere
    check_accessibility(page)
    screenshot_both_widths(page, "docs")
