"""Appending to and verifying the hash-chained audit ledger."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.audit.models import AuditEntry, AuditHead
from pressroom.audit.redaction import redact
from pressroom.db import dialect_name
from pressroom.kit.clock import utcnow
from pressroom.kit.schema import format_utc

GENESIS = "0" * 64


@dataclass
class Actor:
    """Who acted: a member through a credential, or the command line."""

    member_id: uuid.UUID | None
    credential_id: uuid.UUID | None
    credential_prefix: str


CLI_ACTOR = Actor(member_id=None, credential_id=None, credential_prefix="cli")


@dataclass
class AuditNote:
    """What a request changed, filled in by the route and written by the route layer."""

    resource_type: str | None = None
    resource_id: str | None = None
    changes: dict[str, Any] = field(default_factory=dict)

    def set(
        self, resource_type: str, resource_id: object, changes: dict[str, Any] | None = None
    ) -> None:
        self.resource_type = resource_type
        self.resource_id = str(resource_id)
        if changes is not None:
            self.changes = changes


def _digest(entry: AuditEntry) -> str:
    material = {
        "organizationId": str(entry.organization_id),
        "sequence": entry.sequence,
        "occurredAt": format_utc(entry.occurred_at),
        "memberId": str(entry.member_id) if entry.member_id else None,
        "credentialId": str(entry.credential_id) if entry.credential_id else None,
        "credentialPrefix": entry.credential_prefix,
        "operationId": entry.operation_id,
        "resourceType": entry.resource_type,
        "resourceId": entry.resource_id,
        "requestId": entry.request_id,
        "outcomeStatus": entry.outcome_status,
        "changes": entry.changes,
        "previousDigest": entry.previous_digest,
    }
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


async def append(
    session: AsyncSession,
    *,
    organization_id: uuid.UUID,
    actor: Actor,
    operation_id: str,
    outcome_status: int,
    resource_type: str | None = None,
    resource_id: str | None = None,
    request_id: str | None = None,
    changes: dict[str, Any] | None = None,
    occurred_at: datetime | None = None,
) -> AuditEntry:
    """Append one entry in the caller's transaction.

    The head row is locked (FOR UPDATE on PostgreSQL; SQLite has one writer), so
    concurrent appends of one organization queue up and the chain never forks."""
    # Create the head if this is the organization's first entry; a lock on a row that
    # does not exist yet would let two first appends both write entry 1.
    insert = pg_insert if dialect_name(session) == "postgresql" else sqlite_insert
    await session.execute(
        insert(AuditHead)
        .values(organization_id=organization_id, sequence=0, digest=GENESIS)
        .on_conflict_do_nothing(index_elements=["organization_id"])
    )
    head = (
        await session.execute(
            select(AuditHead)
            .where(AuditHead.organization_id == organization_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
    ).scalar_one()
    # Times are stored at microsecond precision but hashed at milliseconds: round first so
    # the digest recomputed from the stored row is identical.
    when = occurred_at or utcnow()
    when = when.replace(microsecond=(when.microsecond // 1000) * 1000)
    entry = AuditEntry(
        organization_id=organization_id,
        sequence=head.sequence + 1,
        occurred_at=when,
        member_id=actor.member_id,
        credential_id=actor.credential_id,
        credential_prefix=actor.credential_prefix,
        operation_id=operation_id,
        resource_type=resource_type,
        resource_id=resource_id,
        request_id=request_id,
        outcome_status=outcome_status,
        changes=redact(changes or {}),
        previous_digest=head.digest,
    )
    entry.digest = _digest(entry)
    session.add(entry)
    head.sequence = entry.sequence
    head.digest = entry.digest
    await session.flush()
    return entry


async def append_command_line(
    session: AsyncSession,
    organization_id: uuid.UUID,
    operation_id: str,
    resource_type: str,
    resource_id: object,
    changes: dict[str, Any],
) -> AuditEntry:
    """Append the entry of a change made on the command line: no member or credential acted,
    and no HTTP status answered (outcome 0)."""
    return await append(
        session,
        organization_id=organization_id,
        actor=CLI_ACTOR,
        operation_id=operation_id,
        outcome_status=0,
        resource_type=resource_type,
        resource_id=str(resource_id),
        changes=changes,
    )


@dataclass
class VerifyResult:
    entries: int
    ok: bool
    problems: list[str]


async def verify(session: AsyncSession, organization_id: uuid.UUID) -> VerifyResult:
    """Recompute the chain: an edited entry breaks its digest, a removed one breaks the
    sequence and the next entry's link, a removed tail disagrees with the head."""
    problems: list[str] = []
    previous = GENESIS
    expected_sequence = 1
    count = 0
    rows = await session.stream_scalars(
        select(AuditEntry)
        .where(AuditEntry.organization_id == organization_id)
        .order_by(AuditEntry.sequence)
    )
    async for entry in rows:
        count += 1
        if entry.sequence != expected_sequence:
            problems.append(
                f"entry {expected_sequence} is missing (next present is {entry.sequence})"
            )
        if entry.previous_digest != previous:
            problems.append(f"entry {entry.sequence} does not link to the entry before it")
        if _digest(entry) != entry.digest:
            problems.append(f"entry {entry.sequence} was altered (digest mismatch)")
        previous = entry.digest
        expected_sequence = entry.sequence + 1
    head = await session.get(AuditHead, organization_id)
    head_sequence = head.sequence if head else 0
    head_digest = head.digest if head else GENESIS
    if head_sequence != expected_sequence - 1 or head_digest != previous:
        problems.append(
            f"the ledger ends at entry {expected_sequence - 1} but its head records "
            f"entry {head_sequence}: entries were removed from the end"
        )
    return VerifyResult(entries=count, ok=not problems, problems=problems)
