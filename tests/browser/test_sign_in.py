"""Signing in to the console in a real browser: by a one-time link and by an API key; used
and expired links refused; sign-out, idle expiry and CSRF."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import update

from pressroom.auth.models import ConsoleSession
from pressroom.auth.models import SignInLink
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.runtime import Runtime
from tests.browser.harness import ConsoleServer
from tests.browser.harness import assert_no_secret
from tests.browser.harness import check_accessibility
from tests.browser.harness import screenshot_both_widths

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def login_link(server: ConsoleServer) -> str:
    """A link printed by `pressroom members login-link`, as an operator would get one."""
    printed = server.cli(
        "members",
        "login-link",
        "--org",
        str(server.owner.organization_id),
        "--member",
        str(server.owner.member_id),
        "--json",
    )
    url: str = json.loads(printed)["url"]
    assert url.startswith(f"{server.base}/console/sign-in/link?token=prl_")
    return url


def sign_in_with_key(page: Any, server: ConsoleServer, key: str) -> None:
    page.goto(f"{server.base}/console")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()


def test_a_login_link_signs_the_member_in_once(page: Any, console_server: ConsoleServer) -> None:
    url = login_link(console_server)
    page.goto(url)
    check_accessibility(page)
    page.get_by_role("button", name="Continue to the console").click()
    page.wait_for_url(f"{console_server.base}/console")
    assert page.get_by_role("heading", name="Overview").is_visible()
    check_accessibility(page)
    screenshot_both_widths(page, "overview")
    assert_no_secret(page, url.partition("token=")[2], console_server.owner.key)
    cookie = next(c for c in page.context.cookies() if c["name"] == "pressroom_console")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and not cookie["secure"]
    assert_no_secret(page, cookie["value"])

    # The same link again, in another browser profile: refused.
    other = page.context.browser.new_context()
    try:
        again = other.new_page()
        again.goto(url)
        again.get_by_role("button", name="Continue to the console").click()
        assert (
            again.get_by_role("alert")
            .inner_text()
            .startswith("This sign-in link has already been used")
        )
        assert again.url.endswith("/console/sign-in/link?token=" + url.partition("token=")[2])
        again.goto(f"{console_server.base}/console")
        assert again.url == f"{console_server.base}/console/sign-in"
    finally:
        other.close()


def test_an_expired_login_link_is_refused(page: Any, console_server: ConsoleServer) -> None:
    url = login_link(console_server)

    async def expire(runtime: Runtime) -> None:
        async with unit_of_work(runtime.sessions) as session:
            await session.execute(
                update(SignInLink).values(expires_at=utcnow() - timedelta(seconds=1))
            )

    console_server.with_runtime(expire)
    page.goto(url)
    page.get_by_role("button", name="Continue to the console").click()
    assert "has expired" in page.get_by_role("alert").inner_text()
    page.goto(f"{console_server.base}/console")
    assert page.url == f"{console_server.base}/console/sign-in"


def test_an_api_key_signs_in_and_is_never_shown(page: Any, console_server: ConsoleServer) -> None:
    page.goto(f"{console_server.base}/console")
    assert page.url == f"{console_server.base}/console/sign-in"
    check_accessibility(page)
    screenshot_both_widths(page, "sign-in")
    sign_in_with_key(page, console_server, console_server.owner.key)
    page.wait_for_url(f"{console_server.base}/console")
    assert page.get_by_text(re.compile(r"key prk_")).is_visible()
    assert_no_secret(page, console_server.owner.key)


def test_a_wrong_key_is_refused(page: Any, console_server: ConsoleServer) -> None:
    sign_in_with_key(page, console_server, "prk_" + "x" * 43)
    assert page.get_by_role("alert").inner_text() == "That API key is unknown, revoked or expired."
    page.goto(f"{console_server.base}/console")
    assert page.url == f"{console_server.base}/console/sign-in"


def test_sign_out_ends_the_session(page: Any, console_server: ConsoleServer) -> None:
    sign_in_with_key(page, console_server, console_server.owner.key)
    page.wait_for_url(f"{console_server.base}/console")
    cookie = next(c for c in page.context.cookies() if c["name"] == "pressroom_console")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(f"{console_server.base}/console/sign-in")
    # The old cookie, presented again, opens nothing.
    page.context.add_cookies([cookie])
    page.goto(f"{console_server.base}/console")
    assert page.url == f"{console_server.base}/console/sign-in"


def test_an_idle_session_expires(page: Any, console_server: ConsoleServer) -> None:
    sign_in_with_key(page, console_server, console_server.owner.key)
    page.wait_for_url(f"{console_server.base}/console")

    async def idle(runtime: Runtime) -> None:
        async with unit_of_work(runtime.sessions) as session:
            await session.execute(
                update(ConsoleSession).values(last_seen_at=utcnow() - timedelta(hours=1))
            )

    console_server.with_runtime(idle)
    page.goto(f"{console_server.base}/console")
    assert page.url == f"{console_server.base}/console/sign-in"


def test_a_write_without_the_csrf_token_is_refused(
    page: Any, console_server: ConsoleServer
) -> None:
    sign_in_with_key(page, console_server, console_server.owner.key)
    page.wait_for_url(f"{console_server.base}/console")
    # The session's cookie goes with it, as it would with a forged form from another page.
    forged = page.request.post(f"{console_server.base}/console/sign-out", form={"csrf": "nope"})
    assert forged.status == 403
    missing = page.request.post(f"{console_server.base}/console/sign-out", form={})
    assert missing.status == 403
    page.goto(f"{console_server.base}/console")
    assert page.url == f"{console_server.base}/console"
