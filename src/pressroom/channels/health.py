"""Channel health checks: the `channel-health` loop asks each connected channel's network how
the account is, once a day and once soon after it is connected, and records what it hears.

A check calls the adapter's `check_health` (a refused token moves the channel to
`reconnect_required` with its event, anything else that fails makes it `degraded`, a working
one `healthy`) and, where the account's own server has limits of its own, reads them again
(`adapters.read_limits`: a Mastodon instance's character limit, which validation then applies
to the channel's targets). Channels are taken a batch at a time by marking them checked (SKIP
LOCKED on PostgreSQL, so several workers share the work); the network is asked outside any
transaction, each check within `CHECK_TIMEOUT_SECONDS`; the outcome is recorded in one short
transaction. A channel waiting for a reconnect is not checked: only a new connection helps it.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import timedelta
from typing import Any

from pressroom.channels import repository
from pressroom.channels import service
from pressroom.channels.adapters import adapter_for
from pressroom.channels.adapters import read_limits
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import ProviderError
from pressroom.runtime import Runtime

log = logging.getLogger(__name__)

# A channel is checked again this long after its last check.
CHECK_INTERVAL = timedelta(hours=24)
# Looking for due channels when idle.
POLL_INTERVAL = 60.0
BATCH_SIZE = 20
# One check: the health call and the limits read, each a request or two.
CHECK_TIMEOUT_SECONDS = 60.0


async def check_due_channels(runtime: Runtime) -> bool:
    """One pass of the `channel-health` loop: True if it checked any channel."""
    now = utcnow()
    async with unit_of_work(runtime.sessions) as session:
        due = await repository.claim_health_checks(
            session, checked_before=now - CHECK_INTERVAL, limit=BATCH_SIZE, now=now
        )
        contexts = []
        for channel in due:
            try:
                contexts.append(service.context_for(channel, runtime.box))
            except ValueError:
                # Credentials this server key cannot read: the publisher reports it when it
                # needs them (auth_expired); nothing to ask the network with here.
                continue
    found = await asyncio.gather(*(check_channel(context, runtime) for context in contexts))
    async with unit_of_work(runtime.sessions) as session:
        for context, (health, limits) in zip(contexts, found, strict=True):
            await service.record_health(
                session, runtime, channel_id=context.id, health=health, limits=limits
            )
    return bool(due)


async def check_channel(
    channel: ChannelContext, runtime: Runtime
) -> tuple[HealthResult, dict[str, Any] | None]:
    """Ask the network how the channel is, and what its account's server accepts (limits
    only from a healthy channel). Network: outside any transaction."""
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
            health = await adapter_for(channel, runtime).check_health(channel)
            if health.state != "healthy":
                return health, None
            return health, await read_limits(channel, runtime)
    except TimeoutError:
        return _degraded(channel.id, f"the check took more than {CHECK_TIMEOUT_SECONDS:g} s")
    except ProviderError as error:
        return HealthResult.failed(error), None
    except Exception as exc:
        # An adapter bug degrades nothing for good; only its type is logged (an unclassified
        # error's text may quote a request).
        return _degraded(channel.id, f"unexpected {type(exc).__name__}")


def _degraded(channel_id: uuid.UUID, why: str) -> tuple[HealthResult, None]:
    log.warning("channel health check failed", extra={"channelId": str(channel_id), "why": why})
    return HealthResult("degraded", f"The health check failed: {why}; it will be repeated."), None
