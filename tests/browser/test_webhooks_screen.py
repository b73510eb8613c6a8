"""The webhooks screen in a real browser: an endpoint created with its secret shown once, a
delivery that failed (a local receiver answering 500) replayed from its log (then 200), secret
rotation, enabling, disabling and deletion; a member whose role may not manage webhooks is not
offered the actions and is refused if they post anyway."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pressroom.runtime import Runtime
from tests.browser.harness import ConsoleServer
from tests.browser.harness import assert_no_secret
from tests.browser.operations import csrf_of
from tests.browser.operations import eventually
from tests.browser.operations import look_at
from tests.browser.operations import sign_in
from tests.factories import Tenant
from tests.factories import add_member_with_key
from tests.webhooks.receiver import WebhookReceiver

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver("hooks.example.com") as started:
        yield started


@pytest.fixture(scope="module")
def console_env(receiver: WebhookReceiver) -> dict[str, str]:
    """Deliveries go to the local receiver (no name is resolved); one quick retry, so a
    delivery answered 500 twice is exhausted within a second."""
    return {
        "PRESSROOM_WEBHOOK_RESOLVE": receiver.resolve_setting,
        "PRESSROOM_WEBHOOK_CA_BUNDLE": receiver.ca_bundle_path,
        "PRESSROOM_WEBHOOK_RETRY_SCHEDULE": "0.2",
        "PRESSROOM_WEBHOOK_TIMEOUT_SECONDS": "3",
    }


def create_endpoint(page: Any, server: ConsoleServer, url: str) -> tuple[str, str]:
    """Create an endpoint through the form; its id and the secret shown once."""
    page.goto(f"{server.base}/console/webhooks")
    page.get_by_label("Destination URL").fill(url)
    page.get_by_label("Description (optional)").fill("Console test")
    page.get_by_role("button", name="Add the endpoint").click()
    page.get_by_role("heading", name="Endpoint created").wait_for()
    secret: str = page.get_by_label("Signing secret").input_value()
    assert secret.startswith("whsec_")
    page.get_by_role("link", name="I have stored it: back to the endpoint").click()
    page.get_by_role("heading", name="Delivery log").wait_for()
    endpoint_id = page.url.rstrip("/").rpartition("/")[2]
    return endpoint_id, secret


def delivery_status(page: Any) -> str:
    page.reload()
    badge = page.locator("li.delivery .badge").first
    return str(badge.inner_text()) if badge.count() else ""


def test_a_failed_delivery_is_replayed_from_its_log(
    page: Any, console_server: ConsoleServer, receiver: WebhookReceiver
) -> None:
    sign_in(page, console_server, console_server.owner.key)
    page.get_by_role("link", name="Webhooks").click()
    page.get_by_role("heading", name="Webhooks", exact=True).wait_for()
    look_at(page, "webhooks")

    receiver.reset()
    receiver.respond(500, times=2, path="/failing")
    _, secret = create_endpoint(page, console_server, receiver.url_for("/failing"))
    page.get_by_role("button", name="Send test").click()
    assert "A test event was queued" in page.get_by_role("status").inner_text()
    eventually(lambda: delivery_status(page) == "exhausted", "the delivery's exhaustion")
    attempts = page.locator("li.delivery tr.attempt")
    assert attempts.count() == 2
    for row in range(2):
        cells = attempts.nth(row).locator("td").all_inner_texts()
        assert cells[0] == str(row + 1)
        assert cells[1] == ("test" if row == 0 else "scheduled")
        assert cells[3] == "500"
        assert cells[4].endswith(" ms")
        assert cells[5] == "failed"
        assert cells[6].startswith("http_error")
    look_at(page, "webhook-log")
    assert_no_secret(page, secret)

    page.get_by_role("button", name="Replay").click()
    assert "queued again" in page.get_by_role("status").inner_text()
    eventually(lambda: delivery_status(page) == "succeeded", "the replay's success")
    # A delivery that succeeded shows its attempts when its summary is opened.
    page.locator("li.delivery summary").first.press("Enter")
    third = page.locator("li.delivery tr.attempt").nth(2).locator("td").all_inner_texts()
    assert third[0] == "3" and third[1] == "replay" and third[3] == "200"
    assert third[5] == "succeeded"
    requests = [r for r in receiver.requests if r.path == "/failing"]
    assert len(requests) == 3
    assert len({r.headers["webhook-id"] for r in requests}) == 1
    assert page.get_by_role("button", name="Replay").count() == 0
    assert_no_secret(page, secret)


def test_rotation_shows_the_new_secret_once_then_disable_and_delete(
    page: Any, console_server: ConsoleServer, receiver: WebhookReceiver
) -> None:
    sign_in(page, console_server, console_server.owner.key)
    endpoint_id, first_secret = create_endpoint(page, console_server, receiver.url_for("/rot"))
    page.get_by_label("Old secret keeps signing for").select_option("3600")
    page.get_by_role("button", name="Rotate secret").click()
    page.get_by_role("heading", name="Secret rotated").wait_for()
    rotated = page.get_by_label("Signing secret").input_value()
    assert rotated.startswith("whsec_") and rotated != first_secret
    assert "The replaced secret still signs until" in page.content()
    look_at(page, "webhook-secret")
    for path in ("/console/webhooks", f"/console/webhooks/{endpoint_id}", "/console"):
        page.goto(console_server.base + path)
        assert_no_secret(page, first_secret, rotated)
    page.goto(f"{console_server.base}/console/webhooks/{endpoint_id}")
    assert f"whsec_…{rotated[-4:]}" in page.content()

    page.get_by_role("button", name="Disable").click()
    assert "is disabled" in page.get_by_role("status").inner_text()
    assert page.get_by_role("button", name="Send test").count() == 0
    page.get_by_role("button", name="Enable").click()
    assert "is enabled" in page.get_by_role("status").inner_text()

    page.get_by_role("link", name="Delete…").click()
    page.get_by_role("heading", name="Delete this webhook endpoint?").wait_for()
    look_at(page, "webhook-delete")
    page.get_by_role("button", name="Delete the endpoint").click()
    page.wait_for_url(f"{console_server.base}/console/webhooks?done=deleted")
    assert receiver.url_for("/rot") not in page.content()


def test_a_member_without_the_role_is_not_offered_and_is_refused(
    page: Any, console_server: ConsoleServer, receiver: WebhookReceiver
) -> None:
    sign_in(page, console_server, console_server.owner.key)
    endpoint_id, _ = create_endpoint(page, console_server, receiver.url_for("/member"))
    page.get_by_role("button", name="Sign out").click()

    async def member(runtime: Runtime) -> Tenant:
        return await add_member_with_key(
            runtime, console_server.owner.organization_id, role="member"
        )

    editor = console_server.with_runtime(member)
    sign_in(page, console_server, editor.key)
    page.goto(f"{console_server.base}/console/webhooks")
    assert page.get_by_role("button", name="Add the endpoint").count() == 0
    assert "may read webhooks but not manage them" in page.content()
    page.goto(f"{console_server.base}/console/webhooks/{endpoint_id}")
    page.get_by_role("heading", name="Delivery log").wait_for()
    for action in ("Send test", "Disable", "Rotate secret", "Replay"):
        assert page.get_by_role("button", name=action).count() == 0
    assert page.get_by_role("link", name="Delete…").count() == 0
    look_at(page, "webhooks-member")

    # Posted anyway, with the session's own CSRF token: the API refuses the role.
    token = csrf_of(page)
    base = f"{console_server.base}/console/webhooks"
    for path in (f"/{endpoint_id}/test", f"/{endpoint_id}/rotate", f"/{endpoint_id}/delete", ""):
        answer = page.request.post(base + path, form={"csrf": token, "url": "https://x.example"})
        assert answer.status == 403, (path, answer.status)
        assert "owner or admin" in answer.text() or "role" in answer.text()
    page.goto(f"{console_server.base}/console/webhooks/{endpoint_id}")
    assert page.get_by_role("heading", name="Delivery log").is_visible()
