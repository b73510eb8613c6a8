"""`orgs list`, `members list` and `keys list`: what exists, never a key (only digests are
stored, and not even those are shown)."""

from __future__ import annotations

import json
from typing import Annotated
from typing import Any

import typer

from pressroom.auth import service as auth
from pressroom.cli import JsonFlag
from pressroom.cli import OrgOption
from pressroom.cli import _run
from pressroom.cli import _uuid
from pressroom.cli import keys_app
from pressroom.cli import members_app
from pressroom.cli import orgs_app
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from pressroom.tenant import service as tenant


def _emit_items(as_json: bool, items: list[dict[str, Any]], columns: tuple[str, ...]) -> None:
    """A listing: `{"items": [...]}` under --json, else one line per item (`-` for none)."""
    if as_json:
        typer.echo(json.dumps({"items": items}))
        return
    for item in items:
        values = (item[column] for column in columns)
        typer.echo("  ".join("-" if value is None else str(value) for value in values))


def _time(value: Any) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


@orgs_app.command("list")
def orgs_list(as_json: JsonFlag = False) -> None:
    """List organizations: id, created, name."""

    async def work(runtime: Runtime) -> list[dict[str, Any]]:
        async with unit_of_work(runtime.sessions) as session:
            return [
                {"id": str(o.id), "name": o.name, "createdAt": _time(o.created_at)}
                for o in await tenant.organizations(session)
            ]

    _emit_items(as_json, _run(work), ("id", "createdAt", "name"))


@members_app.command("list")
def members_list(org: OrgOption, as_json: JsonFlag = False) -> None:
    """List an organization's members: id, role, email."""

    async def work(runtime: Runtime) -> list[dict[str, Any]]:
        async with unit_of_work(runtime.sessions) as session:
            members = await tenant.members_of(session, _uuid(org, "--org"))
            return [
                {
                    "id": str(m.id),
                    "email": m.email,
                    "role": m.role,
                    "createdAt": _time(m.created_at),
                }
                for m in members
            ]

    _emit_items(as_json, _run(work), ("id", "role", "email"))


@keys_app.command("list")
def keys_list(
    org: OrgOption,
    member: Annotated[
        str | None, typer.Option("--member", metavar="MEMBER", help="Only this member's keys.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """List an organization's keys (revoked and expired too): id, prefix, created, expires,
    revoked, name, scopes. Never the keys: they are stored only as digests."""

    async def work(runtime: Runtime) -> list[dict[str, Any]]:
        async with unit_of_work(runtime.sessions) as session:
            org_id = _uuid(org, "--org")
            await tenant.require_organization(session, org_id)
            member_id = _uuid(member, "--member") if member is not None else None
            return [
                {
                    "id": str(k.id),
                    "name": k.name,
                    "prefix": k.prefix,
                    "scopes": list(k.scopes.get("scopes", [])),
                    "memberId": str(k.member_id),
                    "createdAt": _time(k.created_at),
                    "expiresAt": _time(k.expires_at),
                    "revokedAt": _time(k.revoked_at),
                }
                for k in await auth.keys_of(session, org_id, member_id)
            ]

    items = _run(work)
    if not as_json:
        for item in items:
            item["scopes"] = ",".join(item["scopes"])
    columns = ("id", "prefix", "createdAt", "expiresAt", "revokedAt", "name", "scopes")
    _emit_items(as_json, items, columns)
