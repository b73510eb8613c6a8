"""The console's sessions in process: one-time links, key sign-in, cookies, CSRF, and the
audit ledger naming the member and the session's credential for what the console does."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy import update

from pressroom.app import create_app
from pressroom.audit.models import AuditEntry
from pressroom.auth import service as auth
from pressroom.auth import signin
from pressroom.auth.models import ConsoleSession
from pressroom.auth.models import SignInLink
from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.factories import add_member_with_key

BASE = "http://testserver"


async def issue(runtime: Runtime, person: Tenant) -> str:
    async with unit_of_work(runtime.sessions) as session:
        link = await signin.issue_link(
            session, organization_id=person.organization_id, member_id=person.member_id
        )
    return link.token


async def sign_in_by_link(client: httpx.AsyncClient, token: str) -> httpx.Response:
    return await client.post(f"/console/sign-in/link?token={token}")


def csrf_of(page: str) -> str:
    match = re.search(r'data-csrf="([^"]+)"', page)
    assert match, "the page carries no CSRF token"
    return match.group(1)


async def test_a_link_is_stored_only_as_a_digest_and_works_once(
    runtime: Runtime, tenant: Tenant, client: httpx.AsyncClient
) -> None:
    token = await issue(runtime, tenant)
    async with unit_of_work(runtime.sessions) as session:
        stored = (await session.scalars(select(SignInLink.digest))).all()
    assert token not in stored and all(len(digest) == 64 for digest in stored)
    first = await sign_in_by_link(client, token)
    assert first.status_code == 303 and first.headers["location"] == "/console"
    again = await sign_in_by_link(
        httpx.AsyncClient(transport=client._transport, base_url=BASE), token
    )
    assert again.status_code == 400
    assert "already been used" in again.text


async def test_an_expired_link_is_refused(
    runtime: Runtime, tenant: Tenant, client: httpx.AsyncClient
) -> None:
    token = await issue(runtime, tenant)
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(update(SignInLink).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert (await sign_in_by_link(client, token)).status_code == 400
    assert (await client.get("/console")).headers["location"] == "/console/sign-in"


async def test_the_session_cookie_is_http_only_same_site_and_scoped(
    tenant: Tenant, client: httpx.AsyncClient
) -> None:
    answer = await client.post("/console/sign-in", data={"key": tenant.key})
    assert answer.status_code == 303
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/console" in cookie
    assert "Secure" not in cookie
    assert tenant.key not in cookie


async def test_the_cookie_is_secure_behind_an_https_public_url(
    database_url: str, tmp_path: Path, tenant: Tenant
) -> None:
    settings = Settings(
        database_url=database_url,
        data_dir=tmp_path,
        secret_key="BavhibUOnsFgB3EjUUux2oLhBctTeRpr9Av6xaRSzTE",
        public_url="https://pressroom.example.com",
    )
    runtime = Runtime.build(settings)
    try:
        app: FastAPI = create_app(runtime=runtime)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
            answer = await client.post("/console/sign-in", data={"key": tenant.key})
        assert "Secure" in answer.headers["set-cookie"]
    finally:
        await runtime.close()


async def test_a_session_ends_with_its_key(
    runtime: Runtime, tenant: Tenant, client: httpx.AsyncClient
) -> None:
    await client.post("/console/sign-in", data={"key": tenant.key})
    assert (await client.get("/console")).status_code == 200
    async with unit_of_work(runtime.sessions) as session:
        await auth.revoke_key(session, tenant.key_id, runtime.notifier)
    assert (await client.get("/console")).headers["location"] == "/console/sign-in"


async def test_a_session_idle_past_the_setting_is_signed_out(
    runtime: Runtime, tenant: Tenant, client: httpx.AsyncClient
) -> None:
    await client.post("/console/sign-in", data={"key": tenant.key})
    idle = runtime.settings.console_idle_seconds
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(ConsoleSession).values(last_seen_at=utcnow() - timedelta(seconds=idle + 1))
        )
    assert (await client.get("/console")).headers["location"] == "/console/sign-in"


async def test_writes_without_the_csrf_token_or_from_another_origin_are_403(
    runtime: Runtime, tenant: Tenant, client: httpx.AsyncClient
) -> None:
    channel = await connect_channel(runtime, tenant.organization_id)
    await client.post("/console/sign-in", data={"key": tenant.key})
    csrf = csrf_of((await client.get("/console/compose")).text)
    form = {"text": "hello", "channel": str(channel), "when": "draft"}
    assert (await client.post("/console/compose", data=form)).status_code == 403
    wrong = {**form, "csrf": csrf[:-2] + "xx"}
    assert (await client.post("/console/compose", data=wrong)).status_code == 403
    elsewhere = await client.post(
        "/console/compose", data={**form, "csrf": csrf}, headers={"Origin": "https://evil.example"}
    )
    assert elsewhere.status_code == 403
    made = await client.post("/console/compose", data={**form, "csrf": csrf})
    assert made.status_code == 303 and made.headers["location"].startswith("/console/posts/")


@pytest.mark.parametrize("by", ["link", "key"])
async def test_a_console_write_is_audited_as_the_member_and_the_sessions_credential(
    runtime: Runtime, tenant: Tenant, client: httpx.AsyncClient, by: str
) -> None:
    member = await add_member_with_key(runtime, tenant.organization_id, role="admin")
    channel = await connect_channel(runtime, tenant.organization_id)
    if by == "link":
        await sign_in_by_link(client, await issue(runtime, member))
    else:
        await client.post("/console/sign-in", data={"key": member.key})
    csrf = csrf_of((await client.get("/console/compose")).text)
    form = {"csrf": csrf, "text": "audited", "channel": str(channel), "when": "draft"}
    made = await client.post("/console/compose", data=form)
    post_id = made.headers["location"].rpartition("/")[2]
    async with unit_of_work(runtime.sessions) as session:
        entry = (
            await session.scalars(
                select(AuditEntry)
                .where(AuditEntry.operation_id == "createPost")
                .where(AuditEntry.resource_id == post_id)
            )
        ).one()
        console_session = (
            await session.scalars(
                select(ConsoleSession).where(ConsoleSession.member_id == member.member_id)
            )
        ).one()
    assert entry.member_id == member.member_id and entry.outcome_status == 201
    if by == "link":
        assert entry.credential_id == console_session.id
        assert entry.credential_prefix == "console"
    else:
        assert entry.credential_id == member.key_id
        assert entry.credential_prefix == member.key[:12]


async def test_no_page_shows_the_key_it_was_opened_with(
    tenant: Tenant, client: httpx.AsyncClient
) -> None:
    signed = await client.post("/console/sign-in", data={"key": tenant.key})
    cookie = client.cookies["pressroom_console"]
    for path in ("/console", "/console/posts", "/console/posts/list", "/console/compose"):
        page = await client.get(path)
        assert page.status_code == 200, path
        assert tenant.key not in page.text and cookie not in page.text, path
    assert tenant.key not in signed.text


async def test_stale_links_and_sessions_are_purged_a_day_after_they_end(
    runtime: Runtime, tenant: Tenant, client: httpx.AsyncClient
) -> None:
    await issue(runtime, tenant)  # expires in 15 minutes: kept
    old = await issue(runtime, tenant)
    await client.post("/console/sign-in", data={"key": tenant.key})  # live: kept
    await sign_in_by_link(httpx.AsyncClient(transport=client._transport, base_url=BASE), old)
    idle = timedelta(seconds=runtime.settings.console_idle_seconds)
    long_ago = utcnow() - timedelta(days=1, seconds=1)
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(SignInLink)
            .where(SignInLink.organization_id == tenant.organization_id)
            .where(SignInLink.used_at.is_not(None))
            .values(expires_at=long_ago)
        )
        await session.execute(
            update(ConsoleSession)
            .where(ConsoleSession.organization_id == tenant.organization_id)
            .where(ConsoleSession.api_key_id.is_(None))
            .values(last_seen_at=long_ago - idle)
        )
    async with unit_of_work(runtime.sessions) as session:
        assert await signin.purge_stale(session, idle=idle) == 2
    mine = SignInLink.organization_id == tenant.organization_id
    async with unit_of_work(runtime.sessions) as session:
        assert len((await session.scalars(select(SignInLink).where(mine))).all()) == 1
        (kept,) = (
            await session.scalars(
                select(ConsoleSession).where(
                    ConsoleSession.organization_id == tenant.organization_id
                )
            )
        ).all()
    assert kept.api_key_id == tenant.key_id
    assert (await client.get("/console")).status_code == 200


@pytest.mark.parametrize(
    ("path", "scope"),
    [
        ("/console/channels", "channels:read"),
        ("/console/webhooks", "webhooks:read"),
        ("/console/media", "media:read"),
    ],
)
async def test_a_screen_whose_collection_the_key_may_not_read_shows_the_refusal(
    runtime: Runtime, tenant: Tenant, client: httpx.AsyncClient, path: str, scope: str
) -> None:
    others = ["workspace:read", "posts:read", "channels:read", "webhooks:read", "media:read"]
    member = await add_member_with_key(
        runtime,
        tenant.organization_id,
        role="admin",
        scopes=[name for name in others if name != scope],
    )
    await client.post("/console/sign-in", data={"key": member.key})
    page = await client.get(path)
    assert page.status_code == 403
    assert scope in page.text
    allowed = httpx.AsyncClient(transport=client._transport, base_url=BASE)
    await allowed.post("/console/sign-in", data={"key": tenant.key})
    assert (await allowed.get(path)).status_code == 200
