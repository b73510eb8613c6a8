"""The channels domain's background loop: revoking disconnected channels' tokens at their
providers (contract section 7: "Disconnect revokes and erases stored credentials").

A disconnect moves the channel's credentials, still encrypted, into `credential_revocations`
in its own transaction. This loop claims due rows with a lease (SKIP LOCKED on PostgreSQL, so
several workers share the queue), calls the adapter's `revoke` outside any transaction, and
then, while it still holds the lease, deletes the row (revoked, nothing to revoke, not
revocable by Pressroom, or refused for good) or releases it for a later attempt (the provider
could not be told: unreachable, 5xx, rate limited). After `MAX_ATTEMPTS` the revocation is
given up and logged. A worker that dies mid-call loses nothing: its lease runs out and another
worker takes the row. Logs name the channel, the provider and the outcome, never a token.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import socket
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.channels import repository
from pressroom.channels.adapters import revoke_credentials
from pressroom.channels.models import CredentialRevocation
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import Revocation
from pressroom.runtime import Runtime

log = logging.getLogger(__name__)

WORKER_ID = f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"
MAX_ATTEMPTS = 5
# The pause after each failed attempt: the fifth and last attempt comes about an hour after
# the first (1 + 5 + 15 + 40 minutes).
RETRY_DELAYS_SECONDS = (60.0, 300.0, 900.0, 2400.0)
# A provider's Retry-After is honoured up to this long.
MAX_RETRY_AFTER_SECONDS = 3600.0
# One revocation may take two requests (X revokes two tokens) of up to 30 s each; the lease
# leaves room to record the outcome after the call's own limit.
CALL_TIMEOUT_SECONDS = 75.0
LEASE_SECONDS = 120.0
BATCH_SIZE = 20
POLL_INTERVAL = 30.0


@dataclass(frozen=True)
class Failure:
    code: str
    message: str
    retryable: bool
    retry_after: float | None = None


Outcome = Revocation | Failure


def retry_delay(attempts: int, retry_after: float | None) -> float:
    """The pause after failed attempt number `attempts` (1-based)."""
    delay = RETRY_DELAYS_SECONDS[min(attempts, len(RETRY_DELAYS_SECONDS)) - 1]
    if retry_after is not None:
        delay = max(delay, min(retry_after, MAX_RETRY_AFTER_SECONDS))
    return delay


async def revoke_disconnected_credentials(runtime: Runtime) -> bool:
    """One pass of the `credential-revoker` loop: True if it claimed any revocation."""
    async with unit_of_work(runtime.sessions) as session:
        claimed = await repository.claim_due_revocations(
            session,
            owner=WORKER_ID,
            lease_seconds=LEASE_SECONDS,
            limit=BATCH_SIZE,
            now=utcnow(),
        )
    if not claimed:
        return False
    outcomes = await asyncio.gather(*(_attempt(runtime, row) for row in claimed))
    now = utcnow()
    async with unit_of_work(runtime.sessions) as session:
        for row, outcome in zip(claimed, outcomes, strict=True):
            await _record(session, row, outcome, now)
    return True


async def _attempt(runtime: Runtime, row: CredentialRevocation) -> Outcome:
    try:
        credentials = json.loads(runtime.box.decrypt(row.credentials_encrypted))
    except Exception:
        # Encrypted with another server key (the key was replaced): nobody can read them.
        return Failure("invalid_request", "the stored credentials cannot be decrypted", False)
    channel = ChannelContext(
        id=row.channel_id,
        organization_id=row.organization_id,
        provider=row.provider,
        handle=None,
        simulated=False,
        credentials=credentials if isinstance(credentials, dict) else {},
    )
    try:
        return await asyncio.wait_for(
            revoke_credentials(channel, runtime), timeout=CALL_TIMEOUT_SECONDS
        )
    except ProviderError as error:
        return Failure(error.code, error.message, error.retryable, error.retry_after)
    except TimeoutError:
        return Failure("timeout", f"no answer within {CALL_TIMEOUT_SECONDS:.0f} s", True)
    except Exception as exc:
        # Only the type: an unclassified error's text may quote a request.
        return Failure("provider_unavailable", f"unexpected {type(exc).__name__}", True)


async def _record(
    session: AsyncSession, row: CredentialRevocation, outcome: Outcome, now: datetime
) -> None:
    where = {"channel_id": str(row.channel_id), "provider": row.provider, "attempt": row.attempts}
    if isinstance(outcome, Failure) and outcome.retryable and row.attempts < MAX_ATTEMPTS:
        delay = retry_delay(row.attempts, outcome.retry_after)
        kept = await repository.retry_revocation(
            session, row.id, WORKER_ID, now + timedelta(seconds=delay)
        )
        if kept:
            log.info(
                "credential revocation will be retried",
                extra={**where, "code": outcome.code, "reason": outcome.message, "delay": delay},
            )
        return
    if not await repository.finish_revocation(session, row.id, WORKER_ID):
        return  # the lease ran out meanwhile: the worker that took the row over decides
    if isinstance(outcome, Failure):
        log.warning(
            "credential revocation given up",
            extra={**where, "code": outcome.code, "reason": outcome.message},
        )
    else:
        log.info("credential revocation done", extra={**where, "outcome": outcome})
