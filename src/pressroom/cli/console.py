"""`members login-link`: a one-time link that signs a member in to the console."""

from __future__ import annotations

import uuid
from typing import Annotated

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.audit import service as audit
from pressroom.auth import signin
from pressroom.cli import Change
from pressroom.cli import JsonFlag
from pressroom.cli import OrgOption
from pressroom.cli import _emit
from pressroom.cli import _run_recorded
from pressroom.cli import _uuid
from pressroom.cli import members_app
from pressroom.runtime import Runtime


def link_url(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/console/sign-in/link?token={token}"


async def issue_demo_link(
    session: AsyncSession, organization_id: uuid.UUID, member_id: uuid.UUID
) -> signin.IssuedLink:
    """A new link for the demo owner, and its audit entry (never the token)."""
    issued = await signin.issue_link(session, organization_id=organization_id, member_id=member_id)
    await audit.append_command_line(
        session,
        organization_id,
        "cli.members.loginLink",
        "signInLink",
        issued.id,
        {"memberId": str(member_id), "expiresAt": issued.expires_at.isoformat()},
    )
    return issued


@members_app.command("login-link")
def members_login_link(
    org: OrgOption,
    member: Annotated[
        str, typer.Option("--member", metavar="MEMBER", help="Member id (the person).")
    ],
    as_json: JsonFlag = False,
) -> None:
    """Print a one-time console sign-in link for a member: it works once, within 15 minutes,
    and is stored only as a digest."""

    async def work(session: AsyncSession, runtime: Runtime) -> tuple[tuple[str, str], Change]:
        org_id = _uuid(org, "--org")
        member_id = _uuid(member, "--member")
        issued = await signin.issue_link(session, organization_id=org_id, member_id=member_id)
        url = link_url(runtime.settings.public_url, issued.token)
        details = {"memberId": str(member_id), "expiresAt": issued.expires_at.isoformat()}
        expires = issued.expires_at.isoformat().replace("+00:00", "Z")
        return (url, expires), Change(org_id, "signInLink", issued.id, details)

    url, expires = _run_recorded("cli.members.loginLink", work)
    _emit(
        as_json,
        {"url": url, "expiresAt": expires},
        f"{url}\n(works once, until {expires}: open it in a browser)",
    )
