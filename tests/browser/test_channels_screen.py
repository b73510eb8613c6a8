"""The channels screen in a real browser: channels with their health; connecting one sends the
browser to the provider's authorization page (intercepted here: no request leaves the
machine) with a connection whose return is this screen; a refused start names the field;
disconnecting asks first."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import pytest
from sqlalchemy import select

from pressroom.audit.models import AuditEntry
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from tests.browser.harness import ConsoleServer
from tests.browser.operations import csrf_of
from tests.browser.operations import look_at
from tests.browser.operations import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def console_env() -> dict[str, str]:
    # X's app settings (placeholders: nothing is sent to X).
    return {"PRESSROOM_X_CLIENT_ID": "console-test-client", "PRESSROOM_X_CLIENT_SECRET": "s3cr3t"}


@pytest.fixture
def sandbox(console_server: ConsoleServer) -> str:
    printed = console_server.cli(
        "channels",
        "connect",
        "sandbox",
        "--org",
        str(console_server.owner.organization_id),
        "--name",
        "Team sandbox",
        "--json",
    )
    return str(json.loads(printed)["id"])


def start_entry(server: ConsoleServer) -> dict[str, Any]:
    async def latest(runtime: Runtime) -> dict[str, Any]:
        async with unit_of_work(runtime.sessions) as session:
            entry = await session.scalar(
                select(AuditEntry)
                .where(AuditEntry.operation_id == "startChannelConnection")
                .order_by(AuditEntry.sequence.desc())
            )
        assert entry is not None
        return {"status": entry.outcome_status, **entry.changes}

    return server.with_runtime(latest)


def test_connect_goes_to_the_provider_and_disconnect_asks_first(
    page: Any, console_server: ConsoleServer, sandbox: str
) -> None:
    sent_away: list[str] = []

    def provider_page(route: Any) -> None:
        sent_away.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<title>X</title>authorize?")

    page.route(re.compile(r"^https://"), provider_page)
    sign_in(page, console_server, console_server.owner.key)
    page.get_by_role("link", name="Channels").click()
    page.get_by_role("heading", name="Channels", exact=True).wait_for()
    row = page.locator(f'tr.channel-row[data-channel="{sandbox}"]')
    assert "Team sandbox" in row.inner_text() and "sandbox" in row.inner_text()
    assert row.locator(".badge").inner_text() == "healthy"
    look_at(page, "channels")

    # X (its app settings are given) and Mastodon (an app is registered per instance).
    offered = page.get_by_label("Network").locator("option").all_inner_texts()
    assert sorted(offered) == ["mastodon", "x"]
    page.get_by_label("Network").select_option("x")
    page.get_by_label("Name", exact=True).fill("Brand on X")
    page.get_by_role("button", name="Connect").click()
    page.wait_for_url(re.compile(r"^https://"))
    (url,) = sent_away
    query = parse_qs(urlsplit(url).query)
    assert query["client_id"] == ["console-test-client"]
    assert query["redirect_uri"] == [f"{console_server.base}/connect/x/callback"]
    assert len(query["state"][0]) >= 32
    started = start_entry(console_server)
    assert started["status"] == 201 and started["name"] == "Brand on X"
    assert started["redirectUri"] == f"{console_server.base}/console/channels"

    page.goto(f"{console_server.base}/console/channels")
    page.get_by_role("link", name="Disconnect Team sandbox").click()
    page.get_by_role("heading", name="Disconnect this channel?").wait_for()
    assert "Team sandbox (sandbox)" in page.content()
    look_at(page, "channel-disconnect")
    page.get_by_role("button", name="Disconnect the channel").click()
    page.wait_for_url(f"{console_server.base}/console/channels?done=disconnected")
    assert page.get_by_role("status").inner_text() == "The channel was disconnected."
    assert page.locator(f'tr.channel-row[data-channel="{sandbox}"]').count() == 0


def test_a_refused_start_names_the_field(page: Any, console_server: ConsoleServer) -> None:
    sign_in(page, console_server, console_server.owner.key)
    page.goto(f"{console_server.base}/console/channels")
    token = csrf_of(page)
    answer = page.request.post(
        f"{console_server.base}/console/channels/connect",
        form={"csrf": token, "provider": "x", "name": "   "},
        max_redirects=0,
    )
    assert answer.status == 400
    assert re.search(r"Not started: name: [^<]+", answer.text())
    unknown = page.request.post(
        f"{console_server.base}/console/channels/connect",
        form={"csrf": token, "provider": "myspace", "name": "Old"},
        max_redirects=0,
    )
    assert unknown.status == 400 and "choose a provider from the list" in unknown.text()
    forged = page.request.post(
        f"{console_server.base}/console/channels/connect",
        form={"provider": "x", "name": "No token"},
        max_redirects=0,
    )
    assert forged.status == 403
