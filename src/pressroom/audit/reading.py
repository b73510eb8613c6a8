"""Reading the audit ledger: an organization's entries, newest first, filtered."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import distinct
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.audit.models import AuditEntry


@dataclass(frozen=True)
class LedgerFilter:
    """Entries of one operation, by one member (or the command line, `cli`), in a time
    range (inclusive start, exclusive end), older than a sequence number (the next page)."""

    operation_id: str | None = None
    member_id: uuid.UUID | None = None
    command_line: bool = False
    since: datetime | None = None
    until: datetime | None = None
    before: int | None = None


async def entries(
    session: AsyncSession, organization_id: uuid.UUID, wanted: LedgerFilter, limit: int = 50
) -> list[AuditEntry]:
    query = select(AuditEntry).where(AuditEntry.organization_id == organization_id)
    if wanted.operation_id:
        query = query.where(AuditEntry.operation_id == wanted.operation_id)
    if wanted.member_id is not None:
        query = query.where(AuditEntry.member_id == wanted.member_id)
    if wanted.command_line:
        query = query.where(AuditEntry.credential_prefix == "cli")
    if wanted.since is not None:
        query = query.where(AuditEntry.occurred_at >= wanted.since)
    if wanted.until is not None:
        query = query.where(AuditEntry.occurred_at < wanted.until)
    if wanted.before is not None:
        query = query.where(AuditEntry.sequence < wanted.before)
    query = query.order_by(AuditEntry.sequence.desc()).limit(limit)
    return list((await session.scalars(query)).all())


async def operations(session: AsyncSession, organization_id: uuid.UUID) -> list[str]:
    """The operations the ledger holds entries of, for a filter's choices."""
    query = (
        select(distinct(AuditEntry.operation_id))
        .where(AuditEntry.organization_id == organization_id)
        .order_by(AuditEntry.operation_id)
    )
    return list((await session.scalars(query)).all())
