"""The overview, posts and composer screens in a real browser: live counts before submitting,
schedule then see it published in the calendar (in a chosen, remembered time zone), uploads
with progress, failures with the network's message, approvals only for those allowed."""

from __future__ import annotations

import json
import re
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from pressroom.runtime import Runtime
from tests.browser.harness import ConsoleServer
from tests.browser.harness import assert_no_secret
from tests.browser.harness import check_accessibility
from tests.browser.harness import screenshot_both_widths
from tests.factories import Tenant
from tests.factories import add_member_with_key
from tests.media.factories import jpeg_bytes

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def channels(console_server: ConsoleServer) -> dict[str, str]:
    """A sandbox channel and a simulated Bluesky one: {name: id}."""
    org = str(console_server.owner.organization_id)
    found = {}
    for name, provider in (("Sandbox", ["sandbox"]), ("Bluesky", ["bluesky", "--simulated"])):
        printed = console_server.cli(
            "channels", "connect", *provider, "--org", org, "--name", name, "--json"
        )
        found[name] = json.loads(printed)["id"]
    return found


def person(server: ConsoleServer, role: str, scopes: list[str] | None = None) -> Tenant:
    async def add(runtime: Runtime) -> Tenant:
        return await add_member_with_key(
            runtime, server.owner.organization_id, role=role, scopes=scopes
        )

    return server.with_runtime(add)


def sign_in(page: Any, server: ConsoleServer, key: str) -> None:
    page.goto(f"{server.base}/console/sign-in")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{server.base}/console")


def look(page: Any, name: str, *secrets: str) -> None:
    """Every screen: no critical axe violation, both widths readable, no secret in it."""
    check_accessibility(page)
    screenshot_both_widths(page, name)
    cookie = next(c for c in page.context.cookies() if c["name"] == "pressroom_console")
    assert_no_secret(page, cookie["value"], *secrets)


def test_a_text_over_the_limit_is_counted_before_submitting(
    console_server: ConsoleServer, channels: dict[str, str], page: Any
) -> None:
    sign_in(page, console_server, console_server.owner.key)
    page.get_by_role("link", name="Compose").click()
    page.get_by_label("Bluesky (bluesky)").check()
    count = page.locator("#counts li.count", has_text="Bluesky")
    expect(count.locator(".target-count")).to_have_text("Bluesky: 0 / 300 graphemes")
    page.get_by_label("Text", exact=True).press_sequentially("é" * 20)
    expect(count.locator(".target-count")).to_have_text("Bluesky: 20 / 300 graphemes")
    expect(count.locator(".problems")).to_have_count(0)
    page.get_by_label("Text", exact=True).fill("é" * 301)
    expect(count.locator(".target-count")).to_have_text("Bluesky: 301 / 300 graphemes")
    # The problem exactly as createPost would name it, before anything is submitted.
    expect(count.locator(".problems")).to_have_text("text: has 301 graphemes; bluesky allows 300")
    expect(count).to_have_class(re.compile(r"\bover\b"))
    # Shorter again: the count follows the typing.
    page.get_by_label("Text", exact=True).fill("é" * 300)
    expect(count.locator(".target-count")).to_have_text("Bluesky: 300 / 300 graphemes")
    expect(count.locator(".problems")).to_have_count(0)
    # A schedule in the past is named live too.
    page.get_by_label("Schedule").check()
    page.get_by_label(re.compile("Date and time")).fill("2020-01-01T09:00:00")
    expect(page.locator("#counts")).to_contain_text("scheduledAt: ")
    page.get_by_label("Save as a draft").check()
    look(page, "compose", console_server.owner.key)
    # Submitted anyway (with the text over the limit), the API's field error is shown.
    page.get_by_label("Text", exact=True).fill("é" * 301)
    page.get_by_role("button", name="Create post").click()
    alert = page.get_by_role("alert")
    assert "targets[0].text" in alert.inner_text()
    assert "has 301 graphemes; bluesky allows 300" in alert.inner_text()


def test_a_scheduled_post_is_published_in_the_calendar_in_the_chosen_zone(
    console_server: ConsoleServer, channels: dict[str, str], browser: Any
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="UTC")
    page = context.new_page()
    try:
        sign_in(page, console_server, console_server.owner.key)
        page.goto(f"{console_server.base}/console/posts?view=week")
        page.get_by_label("Time zone").select_option("Asia/Tokyo")
        page.get_by_role("button", name="Show").click()
        page.goto(f"{console_server.base}/console/compose")
        assert page.get_by_text("Date and time (Asia/Tokyo)").is_visible()
        tokyo = ZoneInfo("Asia/Tokyo")
        due = (datetime.now(tokyo) + timedelta(seconds=8)).replace(microsecond=0)
        page.get_by_label("Text", exact=True).fill("Launch day, scheduled from the console")
        page.get_by_label("Sandbox (sandbox)").check()
        page.get_by_label("Schedule").check()
        page.get_by_label("Date and time (Asia/Tokyo)").fill(due.strftime("%Y-%m-%dT%H:%M:%S"))
        page.get_by_role("button", name="Create post").click()
        page.wait_for_url(re.compile(r"/console/posts/[0-9a-f-]{36}$"))
        assert page.locator("h1 .badge").inner_text() == "scheduled"
        assert page.get_by_text(due.strftime("%a %d %b %Y, %H:%M")).is_visible()
        look(page, "post-scheduled", console_server.owner.key)

        # The calendar remembers the view and the zone (Tokyo's day, Tokyo's time).
        page.goto(f"{console_server.base}/console/posts")
        assert page.get_by_label("Time zone").input_value() == "Asia/Tokyo"
        day = page.locator(f".day[data-date='{due.date().isoformat()}']")
        entry = day.get_by_role("link", name=re.compile("Launch day"))
        assert due.strftime("%H:%M") in entry.inner_text()
        deadline = datetime.now(tokyo) + timedelta(seconds=60)
        while "published" not in entry.inner_text() and datetime.now(tokyo) < deadline:
            page.wait_for_timeout(1000)
            page.reload()
        assert entry.locator(".badge").inner_text() == "published"
        look(page, "posts-week", console_server.owner.key)
        page.get_by_role("link", name="Month", exact=True).click()
        assert page.get_by_role("link", name=re.compile("Launch day")).is_visible()
        look(page, "posts-month", console_server.owner.key)
        page.goto(f"{console_server.base}/console/posts")
        assert page.get_by_role("heading", name=re.compile(r"^\w+ \d{4}")).is_visible()

        entry = page.get_by_role("link", name=re.compile("Launch day"))
        entry.click()
        link = page.get_by_role("link", name="Published post")
        assert link.get_attribute("href").startswith("https://sandbox.invalid/p/")
        look(page, "post-published", console_server.owner.key)
    finally:
        context.close()


def test_an_upload_shows_its_progress_and_joins_the_post(
    console_server: ConsoleServer, channels: dict[str, str], page: Any, tmp_path: Path
) -> None:
    picture = tmp_path / "harbour.jpg"
    picture.write_bytes(jpeg_bytes((1600, 1200), noise=True))
    sign_in(page, console_server, console_server.owner.key)
    page.goto(f"{console_server.base}/console/compose")
    page.evaluate(
        """() => {
        window.uploadStates = [];
        const status = document.querySelector('[data-upload-status]');
        new MutationObserver(() => window.uploadStates.push(status.textContent))
            .observe(status, {childList: true, characterData: true, subtree: true});
    }"""
    )
    page.get_by_label("Upload images or videos").set_input_files(str(picture))
    page.get_by_role("button", name="Upload", exact=True).click()
    page.get_by_text("Uploaded.").wait_for()
    states = page.evaluate("() => window.uploadStates")
    assert any(re.fullmatch(r"Uploading: \d+%", state) for state in states), states
    assert page.locator("progress").evaluate("bar => bar.value") == 100
    choice = page.get_by_label("harbour.jpg")
    assert choice.is_checked()
    thumbnail = page.locator("#media-choices img").last
    thumbnail.wait_for()
    assert thumbnail.evaluate("img => img.complete && img.naturalWidth") == 1600
    look(page, "compose-media", console_server.owner.key)
    page.get_by_label("Text", exact=True).fill("With a picture")
    page.get_by_label("Sandbox (sandbox)").check()
    page.get_by_role("button", name="Create post").click()
    page.wait_for_url(re.compile(r"/console/posts/[0-9a-f-]{36}$"))
    assert page.locator("h1 .badge").inner_text() == "draft"


def test_a_failure_shows_the_networks_message_and_what_to_do(
    console_server: ConsoleServer, channels: dict[str, str], page: Any
) -> None:
    import httpx

    created = httpx.post(
        f"{console_server.base}/api/v1/posts",
        headers=console_server.owner.headers,
        json={
            "text": "This one fails",
            "publishNow": True,
            "targets": [
                {"channelId": channels["Sandbox"], "options": {"simulate": "text_rejected"}}
            ],
        },
    )
    assert created.status_code == 201, created.text
    sign_in(page, console_server, console_server.owner.key)
    failure = page.locator(".failure").first
    deadline = datetime.now() + timedelta(seconds=60)
    while not failure.count() and datetime.now() < deadline:
        page.wait_for_timeout(1000)
        page.reload()
    assert "text_rejected" in failure.inner_text()
    assert "What to do: Edit the text" in failure.inner_text()
    look(page, "overview-failure", console_server.owner.key)
    page.goto(f"{console_server.base}/console/posts/list?status=failed")
    rows = page.locator("tbody tr")
    assert rows.count() == 1 and "This one fails" in rows.first.inner_text()
    look(page, "posts-list", console_server.owner.key)


def test_a_member_is_not_offered_approval_and_is_refused_it(
    console_server: ConsoleServer, channels: dict[str, str], page: Any
) -> None:
    member = person(console_server, "member")
    sign_in(page, console_server, member.key)
    page.goto(f"{console_server.base}/console/compose")
    page.get_by_label("Text", exact=True).fill("Needs a yes")
    page.get_by_label("Sandbox (sandbox)").check()
    page.get_by_label("Publish now").check()
    page.get_by_label("Needs approval by an owner or admin").check()
    page.get_by_role("button", name="Create post").click()
    page.wait_for_url(re.compile(r"/console/posts/[0-9a-f-]{36}$"))
    post_url = page.url
    assert page.locator("h1 .badge").inner_text() == "pending approval"
    assert page.get_by_role("button", name="Approve").count() == 0
    assert page.get_by_text("Waiting for an owner or admin").is_visible()
    look(page, "post-pending", member.key)
    # The form is not offered; sent anyway (with the session's CSRF token), the API refuses.
    csrf = page.locator("body").get_attribute("data-csrf")
    forged = page.request.post(f"{post_url}/approval", form={"csrf": csrf, "decision": "approve"})
    assert forged.status == 403
    assert "requires an organization owner or admin" in forged.text()

    owner_page = page.context.browser.new_page()
    try:
        sign_in(owner_page, console_server, console_server.owner.key)
        owner_page.goto(post_url)
        owner_page.get_by_role("button", name="Approve").click()
        owner_page.wait_for_url(post_url)
        assert owner_page.locator("h1 .badge").inner_text() in ("publishing", "published")
    finally:
        owner_page.close()


def test_a_key_without_posts_write_is_not_offered_the_composer(
    console_server: ConsoleServer, channels: dict[str, str], page: Any
) -> None:
    reader = person(console_server, "owner", scopes=["posts:read", "channels:read"])
    sign_in(page, console_server, reader.key)
    assert page.get_by_role("link", name="Compose").count() == 0
    page.goto(f"{console_server.base}/console/compose")
    assert "needs the scope posts:write" in page.get_by_role("alert").inner_text()
    csrf = page.locator("body").get_attribute("data-csrf")
    forged = page.request.post(
        f"{console_server.base}/console/compose",
        form={"csrf": csrf, "text": "no", "channel": channels["Sandbox"], "when": "now"},
    )
    assert forged.status == 403
