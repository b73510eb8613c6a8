"""The audit screen in a real browser: the ledger, filtered by action, actor and time range;
"verify chain" reports an intact chain, then the altered entry once one is edited; members who
are not owners or admins are refused."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy import update

from pressroom.audit.models import AuditEntry
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.runtime import Runtime
from tests.browser.harness import ConsoleServer
from tests.browser.harness import assert_no_secret
from tests.browser.operations import look_at
from tests.browser.operations import sign_in
from tests.factories import Tenant
from tests.factories import add_member_with_key

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def entry_count(server: ConsoleServer) -> int:
    async def count(runtime: Runtime) -> int:
        async with unit_of_work(runtime.sessions) as session:
            found = await session.scalar(
                select(func.count()).where(
                    AuditEntry.organization_id == server.owner.organization_id
                )
            )
        return int(found or 0)

    return server.with_runtime(count)


def shown_actions(page: Any) -> list[str]:
    return [text.strip() for text in page.locator("tr.entry td:nth-child(4)").all_inner_texts()]


def test_the_ledger_filters_and_its_chain_verifies(
    page: Any, console_server: ConsoleServer
) -> None:
    for _ in range(2):
        sign_in(page, console_server, console_server.owner.key)
        page.get_by_role("button", name="Sign out").click()
    sign_in(page, console_server, console_server.owner.key)
    page.get_by_role("link", name="Audit").click()
    page.get_by_role("heading", name="Audit ledger").wait_for()
    actions = shown_actions(page)
    assert actions[:3] == ["console.signIn", "console.signOut", "console.signIn"]
    assert len(actions) == entry_count(console_server)
    assert_no_secret(page, console_server.owner.key)
    look_at(page, "audit")

    page.get_by_label("Action").select_option("console.signOut")
    page.get_by_role("button", name="Filter").click()
    assert shown_actions(page) == ["console.signOut", "console.signOut"]
    page.get_by_label("Action").select_option("")
    page.get_by_label("Actor").select_option("cli")
    page.get_by_role("button", name="Filter").click()
    assert page.get_by_text("No entry matches.").is_visible()
    page.get_by_label("Actor").select_option("")
    tomorrow = (utcnow() + timedelta(days=2)).date().isoformat()
    page.get_by_label("From (day, UTC)").fill(tomorrow)
    page.get_by_role("button", name="Filter").click()
    assert page.get_by_text("No entry matches.").is_visible()
    page.goto(f"{console_server.base}/console/audit?from=nonsense&actor=x&before=-1")
    assert len(shown_actions(page)) == entry_count(console_server)

    page.get_by_role("button", name="Verify chain").click()
    verified = page.get_by_role("status").inner_text()
    assert verified == f"The chain is intact: {entry_count(console_server)} entries verified."

    async def tamper(runtime: Runtime) -> None:
        async with unit_of_work(runtime.sessions) as session:
            await session.execute(
                update(AuditEntry)
                .where(
                    AuditEntry.organization_id == console_server.owner.organization_id,
                    AuditEntry.sequence == 2,
                )
                .values(changes={"via": "forged"})
            )

    console_server.with_runtime(tamper)
    page.goto(f"{console_server.base}/console/audit")
    page.get_by_role("button", name="Verify chain").click()
    alert = page.get_by_role("alert").inner_text()
    assert "The chain is broken" in alert and "entry 2 was altered (digest mismatch)" in alert
    look_at(page, "audit-broken")


def test_a_member_who_is_not_an_owner_or_admin_is_refused(
    page: Any, console_server: ConsoleServer
) -> None:
    async def member(runtime: Runtime) -> Tenant:
        return await add_member_with_key(
            runtime, console_server.owner.organization_id, role="member"
        )

    editor = console_server.with_runtime(member)
    sign_in(page, console_server, editor.key)
    assert page.get_by_role("link", name="Audit").count() == 0
    answer = page.goto(f"{console_server.base}/console/audit")
    assert answer is not None and answer.status == 403
    assert "for owners and admins" in page.get_by_role("alert").inner_text()
    token = page.evaluate("() => document.body.dataset.csrf")
    posted = page.request.post(f"{console_server.base}/console/audit/verify", form={"csrf": token})
    assert posted.status == 403
