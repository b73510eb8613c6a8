"""The delivery queue in the database: claim due deliveries under a lease, record attempts,
and take back the leases of workers that died.

Rows are the queue. A claim marks deliveries `processing` with a lease (`lease_owner` is a
token unique to the claim, `lease_until` when another worker may take over); on PostgreSQL
`FOR UPDATE SKIP LOCKED` lets concurrent workers claim disjoint rows, on SQLite transactions
are serialized. A result is recorded only while the claim's token is still on the row, so a
worker that lost its lease (it was too slow, or presumed dead) never overwrites the newer
attempt of the worker that took over."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING
from typing import Any
from typing import TypedDict
from typing import Unpack

from sqlalchemy import Integer
from sqlalchemy import String
from sqlalchemy import Table
from sqlalchemy import bindparam
from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy import text
from sqlalchemy import update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.types import TypeEngine
from sqlalchemy.types import Uuid

from pressroom.db import UTCDateTime
from pressroom.db import unit_of_work
from pressroom.kit.ids import uuid7
from pressroom.kit.sqlite_connection import write_behind
from pressroom.webhooks.attempt import AttemptResult
from pressroom.webhooks.attempt import ClaimedDelivery
from pressroom.webhooks.attempt import NextState
from pressroom.webhooks.attempt import next_state
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import DeliveryAttempt
from pressroom.webhooks.models import Event
from pressroom.webhooks.models import WebhookEndpoint

if TYPE_CHECKING:
    from pressroom.runtime import Runtime

# Core tables: the worker's statements skip the ORM's per-row bookkeeping.
_deliveries: Table = Delivery.__table__  # type: ignore[assignment]
_attempts: Table = DeliveryAttempt.__table__  # type: ignore[assignment]
_endpoints: Table = WebhookEndpoint.__table__  # type: ignore[assignment]
_events: Table = Event.__table__  # type: ignore[assignment]


def _arrays(element: TypeEngine[Any], *names: str) -> list[BindParameter[Any]]:
    """PostgreSQL array parameters (the columns `unnest` reads), all of one element type."""
    return [bindparam(name, type_=ARRAY(element)) for name in names]


def lease_seconds(timeout: float, rounds: int) -> float:
    """How long a claim is held: `rounds` attempt times (a delivery may wait `rounds - 1` of
    them behind the endpoint's other held deliveries, then take one itself), plus room to
    record the result. A shorter lease would lapse under a slow endpoint's queue: the attempt
    would be sent again by whoever took the lease over, and its result discarded."""
    return rounds * timeout + 10


class ClaimArguments(TypedDict):
    """What a claim asks for; `claim` and `claim_due` take these as keywords."""

    now: datetime
    lease_until: datetime
    lease_owner: str
    limit: int
    room: Mapping[uuid.UUID, int]
    default_room: int
    full: Collection[uuid.UUID]


async def claim(runtime: Runtime, **arguments: Unpack[ClaimArguments]) -> list[ClaimedDelivery]:
    """Claim up to `limit` due deliveries of enabled endpoints, oldest due first; committed
    when this returns.

    Fair across endpoints: endpoints in `full` (this worker holds as many of theirs as it
    may) are skipped in the query, and no endpoint gets more than its `room` (else
    `default_room`) of this claim, so one endpoint's backlog never hides another's work.

    The claim is on the path from an event to its first attempt: on PostgreSQL it is one
    statement in autocommit (one round trip); on SQLite a short transaction."""
    autocommit = runtime.autocommit_writer
    if autocommit is not None:
        async with autocommit.connect() as connection:
            return await _claim_in_one_statement(connection, arguments)
    async with unit_of_work(runtime.sessions) as session:
        return await claim_due(session, **arguments)


# The PostgreSQL claim: lock due candidates (skipping rows other workers hold), rank each
# endpoint's in due order, keep as many of each as it has room for, mark those processing and
# return what their attempts need. Locks on candidates not kept end with the statement.
_CLAIM_SQL = text(
    """
WITH candidates AS (
    SELECT d.id, d.endpoint_id, d.next_attempt_at
    FROM webhook_deliveries AS d
    JOIN webhook_endpoints AS e ON e.id = d.endpoint_id
    WHERE d.status = 'pending'
      AND d.next_attempt_at <= :now
      AND d.expires_at > :now
      AND e.enabled
      AND d.endpoint_id <> ALL(:full)
    ORDER BY d.next_attempt_at
    LIMIT :limit
    FOR UPDATE OF d SKIP LOCKED
), chosen AS (
    SELECT ranked.id
    FROM (
        SELECT c.id, c.endpoint_id,
               row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at, c.id)
                   AS place
        FROM candidates AS c
    ) AS ranked
    LEFT JOIN unnest(:room_endpoints, :room_sizes) AS room (endpoint_id, size)
        ON room.endpoint_id = ranked.endpoint_id
    WHERE ranked.place <= coalesce(room.size, :default_room)
)
UPDATE webhook_deliveries AS d
SET status = 'processing', lease_owner = :lease_owner, lease_until = :lease_until,
    updated_at = :now
FROM chosen, webhook_endpoints AS e, events AS ev
WHERE d.id = chosen.id AND e.id = d.endpoint_id AND ev.id = d.event_id
RETURNING d.id, d.endpoint_id, d.event_id, d.attempt_count, d.next_trigger, d.expires_at,
          d.next_attempt_at, e.url, e.secret_encrypted, e.previous_secret_encrypted,
          e.previous_expires_at, ev.body
"""
).bindparams(
    bindparam("now", type_=UTCDateTime()),
    bindparam("lease_until", type_=UTCDateTime()),
    bindparam("lease_owner", type_=String()),
    bindparam("limit", type_=Integer()),
    bindparam("default_room", type_=Integer()),
    *_arrays(Uuid(), "full", "room_endpoints"),
    *_arrays(Integer(), "room_sizes"),
)


async def _claim_in_one_statement(
    connection: AsyncConnection, arguments: ClaimArguments
) -> list[ClaimedDelivery]:
    room = arguments["room"]
    rows = await connection.execute(
        _CLAIM_SQL,
        {
            "now": arguments["now"],
            "lease_until": arguments["lease_until"],
            "lease_owner": arguments["lease_owner"],
            "limit": arguments["limit"],
            "default_room": arguments["default_room"],
            "full": list(arguments["full"]),
            "room_endpoints": list(room),
            "room_sizes": [max(0, size) for size in room.values()],
        },
    )
    return _claimed(rows, arguments["lease_owner"])


def _claimed(rows: Any, lease_owner: str) -> list[ClaimedDelivery]:
    return [
        ClaimedDelivery(
            delivery_id=row.id,
            endpoint_id=row.endpoint_id,
            event_id=row.event_id,
            number=row.attempt_count + 1,
            trigger=row.next_trigger,
            expires_at=row.expires_at,
            lease_owner=lease_owner,
            url=row.url,
            body=row.body.encode(),
            secret_encrypted=row.secret_encrypted,
            previous_secret_encrypted=row.previous_secret_encrypted,
            previous_expires_at=row.previous_expires_at,
        )
        for row in sorted(rows, key=lambda r: (r.next_attempt_at, r.id))
    ]


async def claim_due(
    session: AsyncSession, **arguments: Unpack[ClaimArguments]
) -> list[ClaimedDelivery]:
    """`claim` in the caller's transaction, with portable statements (any database)."""
    now, lease_owner, full = arguments["now"], arguments["lease_owner"], arguments["full"]
    candidates = (
        select(_deliveries.c.id, _deliveries.c.endpoint_id)
        .join(_endpoints, _endpoints.c.id == _deliveries.c.endpoint_id)
        .where(
            _deliveries.c.status == "pending",
            _deliveries.c.next_attempt_at <= now,
            _deliveries.c.expires_at > now,
            # Deliveries of a disabled endpoint are held: left pending, not sent.
            _endpoints.c.enabled.is_(True),
        )
        .order_by(_deliveries.c.next_attempt_at)
        .limit(arguments["limit"])
        .with_for_update(skip_locked=True, of=_deliveries)
    )
    if full:
        candidates = candidates.where(_deliveries.c.endpoint_id.not_in(list(full)))
    taken: Counter[uuid.UUID] = Counter()
    chosen: list[uuid.UUID] = []
    for delivery_id, endpoint_id in (await session.execute(candidates)).all():
        if taken[endpoint_id] < arguments["room"].get(endpoint_id, arguments["default_room"]):
            taken[endpoint_id] += 1
            chosen.append(delivery_id)
    if not chosen:
        return []
    columns = (
        _deliveries.c.id,
        _deliveries.c.endpoint_id,
        _deliveries.c.event_id,
        _deliveries.c.attempt_count,
        _deliveries.c.next_trigger,
        _deliveries.c.expires_at,
        _deliveries.c.next_attempt_at,
        _endpoints.c.url,
        _endpoints.c.secret_encrypted,
        _endpoints.c.previous_secret_encrypted,
        _endpoints.c.previous_expires_at,
        _events.c.body,
    )
    # On SQLite the claim's write travels with the read after it (kit/sqlite_connection.py).
    await session.execute(
        write_behind(update(_deliveries))
        .where(_deliveries.c.id.in_(chosen))
        .values(
            status="processing",
            lease_owner=lease_owner,
            lease_until=arguments["lease_until"],
            updated_at=now,
        )
    )
    rows = await session.execute(
        select(*columns)
        .join(_endpoints, _endpoints.c.id == _deliveries.c.endpoint_id)
        .join(_events, _events.c.id == _deliveries.c.event_id)
        .where(_deliveries.c.id.in_(chosen))
    )
    return _claimed(rows, lease_owner)


@dataclass(frozen=True)
class Recorded:
    result: AttemptResult
    state: NextState


async def record(
    runtime: Runtime,
    results: Sequence[AttemptResult],
    *,
    delays: Sequence[float],
    now: datetime,
    release_lapsed: bool = False,
) -> tuple[list[Recorded], int]:
    """Record finished attempts, for the deliveries whose lease this worker still holds, and
    with `release_lapsed` take back lapsed leases; committed when this returns: (what was
    recorded, how many leases were taken back).

    The worker records after every few sends, so this is kept to one round trip: on
    PostgreSQL one statement in autocommit (and one more to take back leases); on SQLite a
    short transaction."""
    if runtime.engine.dialect.name != "postgresql":
        async with unit_of_work(runtime.sessions) as session:
            recorded = await record_results(session, results, delays=delays, now=now)
            released = await release_lapsed_leases(session, now) if release_lapsed else 0
        return recorded, released
    recorded = []
    released = 0
    async with runtime.reader.connect() as connection:  # autocommit, as for the claim
        if results:
            recorded = await _record_in_one_statement(connection, results, delays, now)
        if release_lapsed:
            released = await release_lapsed_leases(connection, now)
    return recorded, released


# The PostgreSQL record: lock the deliveries still leased by the claims that made these
# attempts, in id order (as `record_results` does, so recorders and replays never deadlock),
# write their new state, and add an attempt row for each delivery updated; the attempts
# returned are the ones recorded. One statement, so it commits or fails as a whole.
_RECORD_SQL = text(
    """
WITH outcome AS (
    SELECT *
    FROM unnest(:ids, :owners, :statuses, :next_attempts, :response_statuses, :latencies,
                :numbers)
        AS o (id, lease_owner, status, next_attempt_at, response_status, latency_ms, number)
), held AS (
    SELECT d.id
    FROM webhook_deliveries AS d
    JOIN outcome AS o ON o.id = d.id AND o.lease_owner = d.lease_owner
    WHERE d.status = 'processing'
    ORDER BY d.id
    FOR UPDATE OF d
), updated AS (
    UPDATE webhook_deliveries AS d
    SET status = o.status, next_attempt_at = o.next_attempt_at,
        response_status = o.response_status, latency_ms = o.latency_ms,
        attempt_count = o.number, next_trigger = 'scheduled', lease_owner = NULL,
        lease_until = NULL, updated_at = :now
    FROM held, outcome AS o
    WHERE d.id = held.id AND o.id = held.id
    RETURNING d.id
)
INSERT INTO webhook_delivery_attempts
    (id, delivery_id, number, trigger, started_at, response_status, latency_ms, outcome,
     error_code, error_message)
SELECT a.id, a.delivery_id, a.number, a.trigger, a.started_at, a.response_status,
       a.latency_ms, a.outcome, a.error_code, a.error_message
FROM unnest(:attempt_ids, :ids, :numbers, :triggers, :started, :response_statuses,
            :latencies, :outcomes, :error_codes, :error_messages)
    AS a (id, delivery_id, number, trigger, started_at, response_status, latency_ms, outcome,
          error_code, error_message)
JOIN updated AS u ON u.id = a.delivery_id
RETURNING delivery_id
"""
).bindparams(
    bindparam("now", type_=UTCDateTime()),
    *_arrays(Uuid(), "ids", "attempt_ids"),
    *_arrays(
        String(), "owners", "statuses", "triggers", "outcomes", "error_codes", "error_messages"
    ),
    *_arrays(Integer(), "response_statuses", "latencies", "numbers"),
    *_arrays(UTCDateTime(), "next_attempts", "started"),
)


async def _record_in_one_statement(
    connection: AsyncConnection,
    results: Sequence[AttemptResult],
    delays: Sequence[float],
    now: datetime,
) -> list[Recorded]:
    # One result per delivery: a lease is claimed once and attempted once.
    unique = list({result.claimed.delivery_id: result for result in results}.values())
    outcomes = [Recorded(result, next_state(result, delays, now)) for result in unique]
    claims = [item.result.claimed for item in outcomes]
    rows = await connection.execute(
        _RECORD_SQL,
        {
            "now": now,
            "ids": [c.delivery_id for c in claims],
            "owners": [c.lease_owner for c in claims],
            "statuses": [item.state.status for item in outcomes],
            "next_attempts": [item.state.next_attempt_at for item in outcomes],
            "response_statuses": [r.response_status for r in unique],
            "latencies": [r.latency_ms for r in unique],
            "numbers": [c.number for c in claims],
            "attempt_ids": [uuid7() for _ in claims],
            "triggers": [c.trigger for c in claims],
            "started": [r.started_at for r in unique],
            "outcomes": ["succeeded" if r.succeeded else "failed" for r in unique],
            "error_codes": [r.error_code for r in unique],
            "error_messages": [r.error_message for r in unique],
        },
    )
    written = {row.delivery_id for row in rows}
    return [item for item in outcomes if item.result.claimed.delivery_id in written]


async def record_results(
    session: AsyncSession,
    results: Sequence[AttemptResult],
    *,
    delays: Sequence[float],
    now: datetime,
) -> list[Recorded]:
    """`record` in the caller's transaction, with portable statements (any database): write
    each attempt and its delivery's new state, for the deliveries whose lease this worker
    still holds; the others were taken over and are left alone."""
    if not results:
        return []
    ids = sorted({result.claimed.delivery_id for result in results})
    # Locked in id order, so two recorders (or a recorder and a replay) never deadlock.
    held = dict(
        (
            await session.execute(
                select(_deliveries.c.id, _deliveries.c.lease_owner)
                .where(_deliveries.c.id.in_(ids), _deliveries.c.status == "processing")
                .order_by(_deliveries.c.id)
                .with_for_update()
            )
        ).all()
    )
    recorded: list[Recorded] = []
    changes: list[dict[str, Any]] = []
    attempts: list[dict[str, Any]] = []
    for result in results:
        claimed = result.claimed
        if held.get(claimed.delivery_id) != claimed.lease_owner:
            continue
        state = next_state(result, delays, now)
        recorded.append(Recorded(result, state))
        changes.append(
            {
                "b_id": claimed.delivery_id,
                "b_status": state.status,
                "b_next_attempt_at": state.next_attempt_at,
                "b_response_status": result.response_status,
                "b_latency_ms": result.latency_ms,
                "b_attempt_count": claimed.number,
            }
        )
        attempts.append(
            {
                "id": uuid7(),
                "delivery_id": claimed.delivery_id,
                "number": claimed.number,
                "trigger": claimed.trigger,
                "started_at": result.started_at,
                "response_status": result.response_status,
                "latency_ms": result.latency_ms,
                "outcome": "succeeded" if result.succeeded else "failed",
                "error_code": result.error_code,
                "error_message": result.error_message,
            }
        )
    if changes:
        # On SQLite both writes travel with the commit (kit/sqlite_connection.py).
        await session.execute(
            write_behind(update(_deliveries))
            .where(_deliveries.c.id == bindparam("b_id"))
            .values(
                status=bindparam("b_status"),
                next_attempt_at=bindparam("b_next_attempt_at"),
                response_status=bindparam("b_response_status"),
                latency_ms=bindparam("b_latency_ms"),
                attempt_count=bindparam("b_attempt_count"),
                # Whatever queued this attempt (a test, a replay) is done with.
                next_trigger="scheduled",
                lease_owner=None,
                lease_until=None,
                updated_at=now,
            ),
            changes,
        )
        await session.execute(write_behind(insert(_attempts)), attempts)
    return recorded


async def release_claims(session: AsyncSession, claims: Sequence[ClaimedDelivery]) -> None:
    """Give back claimed deliveries that were never attempted (a worker shutting down)."""
    for owner in {claim.lease_owner for claim in claims}:
        await session.execute(
            update(_deliveries)
            .where(
                _deliveries.c.id.in_([c.delivery_id for c in claims if c.lease_owner == owner]),
                _deliveries.c.lease_owner == owner,
                _deliveries.c.status == "processing",
            )
            .values(status="pending", lease_owner=None, lease_until=None)
        )


async def release_lapsed_leases(
    session: AsyncSession | AsyncConnection, now: datetime, batch: int = 500
) -> int:
    """Put deliveries whose worker's lease ran out back in the queue (their next_attempt_at
    is kept, so they go first). The worker, if it still lives, can no longer record."""
    lapsed = (
        select(_deliveries.c.id)
        .where(_deliveries.c.status == "processing", _deliveries.c.lease_until <= now)
        .limit(batch)
        .with_for_update(skip_locked=True)
    )
    result = await session.execute(
        update(_deliveries)
        .where(_deliveries.c.id.in_(lapsed.scalar_subquery()))
        .values(status="pending", lease_owner=None, lease_until=None, updated_at=now)
    )
    return int(getattr(result, "rowcount", 0) or 0)
