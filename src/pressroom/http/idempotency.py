"""Idempotency-Key: claim, replay, store (contract section 6).

A claim is a row inserted in its own short transaction; the unique constraint on
(organization, key) decides between concurrent requests. The winner's response is
stored in the same transaction as its effect, so a stored response always describes
a committed change and a committed change always has its stored response.

A claim holds a short lease that the request renews while it runs. A request whose process
died stops renewing, so its claim lapses within CLAIM_LEASE and the client's retry runs; a
long request (a large upload) keeps its claim however long it takes."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import uuid
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from functools import cache
from typing import Any
from typing import cast

from sqlalchemy import Table
from sqlalchemy import bindparam
from sqlalchemy import delete
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.ext.asyncio import async_sessionmaker
from starlette.responses import Response

from pressroom.db import dialect_name
from pressroom.db import unit_of_work
from pressroom.http.idempotency_models import IdempotencyRecord
from pressroom.kit.clock import utcnow
from pressroom.kit.crypto import SecretBox
from pressroom.kit.errors import PressroomError
from pressroom.kit.errors import field_error
from pressroom.kit.sqlite_connection import write_behind

HEADER = "idempotency-key"
# How long a claim lasts unless its request renews it: a crashed node's claim is taken over
# at most this long after its last renewal (README "Idempotency").
CLAIM_LEASE = timedelta(seconds=30)
# How often a running request renews its claim: a third of the lease leaves two renewals'
# worth of slack for a slow database.
CLAIM_RENEWAL_SECONDS = 10.0

log = logging.getLogger(__name__)

IDEMPOTENT_OPERATIONS = frozenset(
    {
        "disconnectChannel",
        "createPost",
        "updatePost",
        "deletePost",
        "uploadMedia",
        "createWebhookEndpoint",
        "updateWebhookEndpoint",
        "deleteWebhookEndpoint",
        "rotateWebhookEndpointSecret",
        "sendWebhookTest",
    }
)


def check_key(value: str) -> str:
    if not 1 <= len(value) <= 255 or not all(0x21 <= ord(c) <= 0x7E for c in value):
        raise field_error(
            "Idempotency-Key", "invalid", "must be 1-255 printable ASCII characters without spaces"
        )
    return value


def canonical_json(body: bytes) -> bytes:
    """JSON compared parsed: key order and spacing do not matter. Other bytes as they are."""
    if not body.strip():
        return b""
    try:
        parsed = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return body
    return json.dumps(parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def fingerprint(operation_id: str, method: str, path: str, canonical_body: bytes) -> str:
    digest = hashlib.sha256()
    for part in (operation_id.encode(), method.encode(), path.encode()):
        digest.update(part + b"\0")
    digest.update(canonical_body)
    return digest.hexdigest()


@dataclass
class Claim:
    record_id: uuid.UUID
    # Renews the lease while the claiming request runs; stopped by store() and release(),
    # and when the task that claimed ends however it ends.
    renewal: asyncio.Task[None] | None = None

    def stop_renewing(self) -> None:
        if self.renewal is not None:
            self.renewal.cancel()


def _renewing(sessions: async_sessionmaker[AsyncSession], record_id: uuid.UUID) -> Claim:
    """A claim of the current task, renewed until that task ends."""
    claimed = Claim(record_id)
    owner = asyncio.current_task()
    claimed.renewal = asyncio.create_task(_renew(sessions, record_id))
    if owner is not None:
        owner.add_done_callback(lambda _: claimed.stop_renewing())
    return claimed


async def _renew(sessions: async_sessionmaker[AsyncSession], record_id: uuid.UUID) -> None:
    while True:
        await asyncio.sleep(CLAIM_RENEWAL_SECONDS)
        try:
            async with unit_of_work(sessions) as session:
                await session.execute(
                    update(IdempotencyRecord)
                    .where(
                        IdempotencyRecord.id == record_id,
                        IdempotencyRecord.state == "in_progress",
                    )
                    .values(locked_until=utcnow() + CLAIM_LEASE)
                )
        except asyncio.CancelledError:
            raise
        except Exception:
            # The next renewal may succeed; until the lease ends the claim still holds.
            log.warning("could not renew an idempotency claim", exc_info=True)


def in_progress(locked_until: datetime, now: datetime) -> PressroomError:
    """409 `idempotency_key_in_progress`, with Retry-After: the seconds until the running
    request's claim lapses unless renewed. By then the first request has finished (the retry
    gets its stored response), is still running (another 409), or its process died (the retry
    runs)."""
    seconds = math.ceil((locked_until - now).total_seconds())
    lease = int(CLAIM_LEASE.total_seconds())
    return PressroomError(
        "idempotency_key_in_progress",
        detail="The first request with this Idempotency-Key is still running; retry after "
        "Retry-After seconds.",
        headers={"Retry-After": str(min(max(seconds, 1), lease))},
    )


@dataclass
class Stored:
    status_code: int
    body: bytes
    content_type: str | None
    location: str | None
    secret: bool

    def response(self) -> Response:
        headers = {"Idempotent-Replayed": "true"}
        if self.location:
            headers["Location"] = self.location
        if self.secret:
            headers["Cache-Control"] = "no-store"
        return Response(
            content=self.body,
            status_code=self.status_code,
            media_type=self.content_type,
            headers=headers,
        )


_RECORDS = cast(Table, IdempotencyRecord.__table__)
_CLAIMED = (
    "id",
    "organization_id",
    "key",
    "operation_id",
    "fingerprint",
    "created_at",
    "locked_until",
)


@cache
def _claim_statement(dialect: str) -> Any:
    """INSERT of a new claim unless the key has one, returning its id: one statement per
    database, built once and bound by name (each request's own, built anew, cost as much
    as running it)."""
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    columns = _RECORDS.c
    return (
        insert(_RECORDS)
        .values(
            {
                **{name: bindparam(name, type_=columns[name].type) for name in _CLAIMED},
                "state": "in_progress",
                "body_encrypted": False,
            }
        )
        .on_conflict_do_nothing(index_elements=["organization_id", "key"])
        .returning(columns.id)
    )


# Sent with the transaction's next statement on SQLite (kit/sqlite_connection.py).
_STORE = write_behind(
    update(_RECORDS)
    .where(_RECORDS.c.id == bindparam("record_id", type_=_RECORDS.c.id.type))
    .values(
        state="done",
        **{
            name: bindparam(name, type_=_RECORDS.c[name].type)
            for name in ("status_code", "body", "body_encrypted", "content_type", "location")
        },
    )
)


def _claim_row(claimed: dict[str, Any], now: datetime) -> dict[str, Any]:
    """The values of a new claim row for `claimed` (organization, key, operation, fingerprint)."""
    return {**claimed, "id": uuid.uuid4(), "created_at": now, "locked_until": now + CLAIM_LEASE}


async def _claim_new_key(autocommit: AsyncEngine, claimed: dict[str, Any]) -> uuid.UUID | None:
    """The id of a new claim, inserted by one statement that commits on its own, without a
    session or a transaction's BEGIN and COMMIT around it (a claim took 1.12 ms of CPU that
    way, 0.85 ms this way, bench/README.md); None if the key has a claim already."""
    async with autocommit.connect() as connection:
        statement = _claim_statement(connection.dialect.name)
        result = await connection.execute(statement, _claim_row(claimed, utcnow()))
        return cast("uuid.UUID | None", result.scalar_one_or_none())


async def claim(
    sessions: async_sessionmaker[AsyncSession],
    box: SecretBox,
    *,
    organization_id: uuid.UUID,
    key: str,
    operation_id: str,
    fingerprint_value: str,
    retention: timedelta,
    autocommit: AsyncEngine | None = None,
) -> Claim | Stored:
    """Claim the key for this request, or return the stored outcome to replay. With
    `autocommit` (PostgreSQL), a key not seen before is claimed in one round trip."""
    claimed = {
        "organization_id": organization_id,
        "key": key,
        "operation_id": operation_id,
        "fingerprint": fingerprint_value,
    }
    if autocommit is not None:
        inserted = await _claim_new_key(autocommit, claimed)
        if inserted is not None:
            return _renewing(sessions, inserted)
    for _ in range(3):
        async with unit_of_work(sessions) as session:
            now = utcnow()
            inserted = (
                await session.execute(
                    _claim_statement(dialect_name(session)), _claim_row(claimed, now)
                )
            ).scalar_one_or_none()
            if inserted is not None:
                return _renewing(sessions, inserted)
            record = (
                await session.execute(
                    select(IdempotencyRecord)
                    .where(
                        IdempotencyRecord.organization_id == organization_id,
                        IdempotencyRecord.key == key,
                    )
                    .with_for_update()
                )
            ).scalar_one_or_none()
            if record is None:
                continue  # released between our insert and select: try again
            if record.created_at <= now - retention:
                await session.delete(record)
                continue
            if record.fingerprint != fingerprint_value:
                raise PressroomError(
                    "idempotency_key_reused",
                    detail="This Idempotency-Key was used for a different request "
                    f"({record.operation_id}); use a new key.",
                )
            if record.state == "in_progress":
                if record.locked_until > now:
                    raise in_progress(record.locked_until, now)
                # Abandoned: its request stopped renewing (its process died). Take it over.
                record.locked_until = now + CLAIM_LEASE
                return _renewing(sessions, record.id)
            body = record.body or ""
            if record.body_encrypted:
                body = box.decrypt(body)
            return Stored(
                status_code=record.status_code or 200,
                body=body.encode(),
                content_type=record.content_type,
                location=record.location,
                secret=record.body_encrypted,
            )
    raise PressroomError(
        "idempotency_key_in_progress", detail="Retry the request.", headers={"Retry-After": "1"}
    )


async def store(
    session: AsyncSession, box: SecretBox, claimed: Claim, response: Response, *, secret: bool
) -> None:
    """Record the outcome in the caller's transaction (the one holding the effect)."""
    claimed.stop_renewing()
    body = bytes(response.body).decode()
    await session.execute(
        _STORE,
        {
            "record_id": claimed.record_id,
            "status_code": response.status_code,
            "body": box.encrypt(body) if secret else body,
            "body_encrypted": secret,
            "content_type": response.headers.get("content-type"),
            "location": response.headers.get("location"),
        },
    )


async def release(sessions: async_sessionmaker[AsyncSession], claimed: Claim) -> None:
    """Forget a claim whose request failed with a 5xx, so a retry can run."""
    claimed.stop_renewing()
    async with unit_of_work(sessions) as session:
        await session.execute(
            delete(IdempotencyRecord).where(
                IdempotencyRecord.id == claimed.record_id,
                IdempotencyRecord.state == "in_progress",
            )
        )


async def purge_expired(session: AsyncSession, retention: timedelta) -> int:
    result = await session.execute(
        delete(IdempotencyRecord).where(IdempotencyRecord.created_at <= utcnow() - retention)
    )
    return int(getattr(result, "rowcount", 0) or 0)
