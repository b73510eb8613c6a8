"""Appending to and verifying the hash-chained audit ledger."""

from __future__ import annotations

import functools
import hashlib
import json
import uuid
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from typing import Any
from typing import NamedTuple

from sqlalchemy import Insert
from sqlalchemy import Select
from sqlalchemy import Update
from sqlalchemy import bindparam
from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.audit.models import AuditEntry
from pressroom.audit.models import AuditHead
from pressroom.audit.redaction import redact
from pressroom.db import dialect_name
from pressroom.db import table_of
from pressroom.kit.clock import utcnow
from pressroom.kit.ids import uuid7
from pressroom.kit.schema import format_utc
from pressroom.kit.sqlite_connection import write_behind

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
    return _digest_of(
        organization_id=entry.organization_id,
        sequence=entry.sequence,
        occurred_at=entry.occurred_at,
        member_id=entry.member_id,
        credential_id=entry.credential_id,
        credential_prefix=entry.credential_prefix,
        operation_id=entry.operation_id,
        resource_type=entry.resource_type,
        resource_id=entry.resource_id,
        request_id=entry.request_id,
        outcome_status=entry.outcome_status,
        changes=entry.changes,
        previous_digest=entry.previous_digest,
    )


def _digest_of(
    *,
    organization_id: uuid.UUID,
    sequence: int,
    occurred_at: datetime,
    member_id: uuid.UUID | None,
    credential_id: uuid.UUID | None,
    credential_prefix: str,
    operation_id: str,
    resource_type: str | None,
    resource_id: str | None,
    request_id: str | None,
    outcome_status: int,
    changes: dict[str, Any],
    previous_digest: str,
) -> str:
    material = {
        "organizationId": str(organization_id),
        "sequence": sequence,
        "occurredAt": format_utc(occurred_at),
        "memberId": str(member_id) if member_id else None,
        "credentialId": str(credential_id) if credential_id else None,
        "credentialPrefix": credential_prefix,
        "operationId": operation_id,
        "resourceType": resource_type,
        "resourceId": resource_id,
        "requestId": request_id,
        "outcomeStatus": outcome_status,
        "changes": changes,
        "previousDigest": previous_digest,
    }
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class _Statements(NamedTuple):
    lock_head: Select[tuple[int, str]]
    insert_entry: Insert
    move_head: Update
    insert_entry_and_move_head: Update


@functools.cache
def _statements() -> _Statements:
    """The append's statements, built once on first use (SQLAlchemy then reuses their
    compiled form; built lazily, every table's column types are resolved by then). Their
    parameters: `head_organization_id`, and the new entry's columns as `entry_<column>`."""
    heads = table_of(AuditHead)
    entries = table_of(AuditEntry)
    head_of = heads.c.organization_id == bindparam(
        "head_organization_id", type_=heads.c.organization_id.type
    )
    # The head's sequence and digest, its row locked until the commit (FOR UPDATE on
    # PostgreSQL; SQLite has one writer and renders no FOR UPDATE).
    lock_head = select(heads.c.sequence, heads.c.digest).where(head_of).with_for_update()
    insert_entry = insert(entries).values(
        {column.name: bindparam(f"entry_{column.name}", type_=column.type) for column in entries.c}
    )
    # The head moved to the new entry.
    move_head = (
        update(heads)
        .where(head_of)
        .values(
            sequence=bindparam("entry_sequence", type_=heads.c.sequence.type),
            digest=bindparam("entry_digest", type_=heads.c.digest.type),
        )
    )
    # On PostgreSQL both writes in one statement (a data-modifying WITH), one round trip.
    both = move_head.add_cte(insert_entry.cte("entry"))
    # On SQLite the two are sent with the commit (kit/sqlite_connection.py).
    return _Statements(lock_head, write_behind(insert_entry), write_behind(move_head), both)


async def _lock_head(session: AsyncSession, organization_id: uuid.UUID) -> tuple[int, str]:
    """Lock the organization's head row and read it, creating it on the first entry."""
    parameters = {"head_organization_id": organization_id}
    lock_head = _statements().lock_head
    row = (await session.execute(lock_head, parameters)).first()
    if row is None:
        # The organization's first entry: create the head, then lock it. A lock on a row
        # that does not exist yet would let two first appends both write entry 1; a
        # concurrent first append waits on the insert and then finds the row.
        insert_head = pg_insert if dialect_name(session) == "postgresql" else sqlite_insert
        await session.execute(
            insert_head(AuditHead)
            .values(organization_id=organization_id, sequence=0, digest=GENESIS)
            .on_conflict_do_nothing(index_elements=["organization_id"])
        )
        row = (await session.execute(lock_head, parameters)).one()
    return int(row.sequence), str(row.digest)


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
) -> None:
    """Append one entry in the caller's transaction.

    The head row is locked (FOR UPDATE on PostgreSQL; SQLite has one writer), so
    concurrent appends of one organization queue up and the chain never forks."""
    sequence, previous_digest = await _lock_head(session, organization_id)
    # Times are stored at microsecond precision but hashed at milliseconds: round first so
    # the digest recomputed from the stored row is identical.
    when = occurred_at or utcnow()
    when = when.replace(microsecond=(when.microsecond // 1000) * 1000)
    values: dict[str, Any] = {
        "organization_id": organization_id,
        "sequence": sequence + 1,
        "occurred_at": when,
        "member_id": actor.member_id,
        "credential_id": actor.credential_id,
        "credential_prefix": actor.credential_prefix,
        "operation_id": operation_id,
        "resource_type": resource_type,
        "resource_id": resource_id,
        "request_id": request_id,
        "outcome_status": outcome_status,
        "changes": redact(changes or {}),
        "previous_digest": previous_digest,
    }
    values["digest"] = _digest_of(**values)
    values["id"] = uuid7()
    parameters = {f"entry_{name}": value for name, value in values.items()}
    parameters["head_organization_id"] = organization_id
    statements = _statements()
    if dialect_name(session) == "postgresql":
        await session.execute(statements.insert_entry_and_move_head, parameters)
    else:
        await session.execute(statements.insert_entry, parameters)
        await session.execute(statements.move_head, parameters)


async def append_command_line(
    session: AsyncSession,
    organization_id: uuid.UUID,
    operation_id: str,
    resource_type: str,
    resource_id: object,
    changes: dict[str, Any],
) -> None:
    """Append the entry of a change made on the command line: no member or credential acted,
    and no HTTP status answered (outcome 0)."""
    await append(
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
