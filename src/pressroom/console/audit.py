"""Audit: the organization's ledger, filterable by action, actor and time range, with a
"verify chain" action that recomputes the hash chain and shows the result.

The API has no ledger operation, so this screen reads the ledger itself, for owners and
admins only (the roles that manage the organization's webhooks and approvals); any other
member, or a key without `workspace:read`, is refused with 403. Entries are shown as
stored: already redacted, never a secret."""

from __future__ import annotations

import uuid
from datetime import date
from datetime import datetime
from datetime import time
from datetime import timedelta
from typing import Any

from fastapi import APIRouter
from fastapi import Request
from sqlalchemy import select
from starlette.responses import Response

from pressroom.audit import reading
from pressroom.audit import service as ledger
from pressroom.audit.models import AuditEntry
from pressroom.auth.models import Member
from pressroom.console.acting import Person
from pressroom.console.acting import form_fields
from pressroom.console.acting import query_text
from pressroom.console.rendering import render
from pressroom.console.rendering import time_zone
from pressroom.console.sessions import Visitor
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime

router = APIRouter(prefix="/console/audit", include_in_schema=False)
PAGE = 50
REFUSAL = (
    "The audit ledger is for owners and admins whose key (or sign-in) carries the "
    "workspace:read scope."
)


def _runtime(request: Request) -> Runtime:
    return request.app.state.runtime  # type: ignore[no-any-return]


def _refused(request: Request, person: Visitor) -> Response | None:
    if person.api.can("workspace:read", manager=True):
        return None
    return render(request, "error.html", {"error": REFUSAL}, person=person, status=403)


def _day(value: str) -> date | None:
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def _filter(
    request: Request, members: dict[uuid.UUID, str]
) -> tuple[reading.LedgerFilter, dict[str, str]]:
    """The filter the query asks for, and the form's values (a strange value is dropped)."""
    params = request.query_params
    zone = time_zone(request)
    actor = query_text(params.get("actor"), 64)
    member_id = None
    if actor not in ("", "cli"):
        try:
            member_id = uuid.UUID(actor)
        except ValueError:
            actor = ""
        if member_id not in members:
            actor, member_id = "", None
    first = _day(query_text(params.get("from"), 10))
    last = _day(query_text(params.get("to"), 10))
    before = query_text(params.get("before"), 12)
    wanted = reading.LedgerFilter(
        operation_id=query_text(params.get("action"), 64) or None,
        member_id=member_id,
        command_line=actor == "cli",
        since=datetime.combine(first, time.min, zone) if first else None,
        until=datetime.combine(last + timedelta(days=1), time.min, zone) if last else None,
        before=int(before) if before.isdigit() else None,
    )
    values = {
        "action": wanted.operation_id or "",
        "actor": actor,
        "from": first.isoformat() if first else "",
        "to": last.isoformat() if last else "",
    }
    return wanted, values


def _row(entry: AuditEntry, members: dict[uuid.UUID, str]) -> dict[str, Any]:
    if entry.credential_prefix == "cli":
        actor = "command line"
    else:
        actor = members.get(entry.member_id, str(entry.member_id)) if entry.member_id else ""
    return {
        "sequence": entry.sequence,
        "occurred_at": entry.occurred_at.isoformat(),
        "actor": actor,
        "credential": entry.credential_prefix,
        "operation": entry.operation_id,
        "resource": f"{entry.resource_type or ''} {entry.resource_id or ''}".strip(),
        "status": entry.outcome_status,
        "changes": entry.changes,
        "request_id": entry.request_id or "",
    }


async def _ledger_page(
    request: Request, person: Visitor, verified: ledger.VerifyResult | None = None
) -> Response:
    organization_id = person.api.principal.organization_id
    async with unit_of_work(_runtime(request).sessions) as session:
        found = await session.execute(
            select(Member.id, Member.email)
            .where(Member.organization_id == organization_id)
            .order_by(Member.email)
        )
        members = {row.id: row.email for row in found}
        wanted, values = _filter(request, members)
        rows = await reading.entries(session, organization_id, wanted, limit=PAGE + 1)
        actions = await reading.operations(session, organization_id)
    more = len(rows) > PAGE
    shown = [_row(entry, members) for entry in rows[:PAGE]]
    context = {
        "section": "audit",
        "entries": shown,
        "older": shown[-1]["sequence"] if more else None,
        "values": values,
        "members": members,
        "actions": actions,
        "verified": verified,
    }
    return render(request, "audit.html", context, person=person)


@router.get("")
async def audit_ledger(request: Request, person: Person) -> Response:
    """The ledger, newest first, filtered, fifty entries a page."""
    return _refused(request, person) or await _ledger_page(request, person)


@router.post("/verify")
async def verify_chain(request: Request, person: Person) -> Response:
    """Recompute the organization's whole chain and show what it found."""
    await form_fields(request, person)
    refusal = _refused(request, person)
    if refusal is not None:
        return refusal
    async with unit_of_work(_runtime(request).sessions) as session:
        result = await ledger.verify(session, person.api.principal.organization_id)
    return await _ledger_page(request, person, verified=result)
