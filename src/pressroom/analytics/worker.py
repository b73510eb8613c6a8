"""The metrics poller: a worker loop that fetches the metrics of recently published targets
from their providers' adapters, on the decaying schedule of analytics/schedule.py.

One batch: in one short transaction, follow newly published targets and lease the due
polls of channels that are not paused; then fetch outside any transaction (at most
`CONCURRENCY` calls in flight, one at a time per channel, each bounded by a timeout); then
record the snapshots, the next slots and the channels' backoff in one transaction.

Errors: a retryable one (rate limited, unavailable, timeout) pauses the channel with
exponential backoff (its remaining polls wait, unfetched); `auth_expired` moves the channel
to `reconnect_required` (through the channels service, which emits the event) and stops its
polling until the channel changes (reconnected); any other error is about that post (the
network deleted it, say) and ends its polling."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.analytics import polls
from pressroom.analytics.polls import DuePoll
from pressroom.analytics.recording import Observation
from pressroom.analytics.recording import clean_values
from pressroom.analytics.recording import record
from pressroom.analytics.schedule import POLL_HORIZON
from pressroom.channels import service as channels
from pressroom.channels.adapters import adapter_for
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import ProviderAdapter
from pressroom.providers.adapter import ProviderError
from pressroom.runtime import Runtime

log = logging.getLogger(__name__)

WORKER_ID = f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"
# Polls leased per batch, calls in flight, and the bound on one call. The lease outlasts
# the slowest batch (BATCH / CONCURRENCY calls in a row, each up to FETCH_TIMEOUT).
BATCH = 32
CONCURRENCY = 8
FETCH_TIMEOUT = 20.0
LEASE = timedelta(minutes=5)
# New targets are looked for among those published in the last hour on each batch (cheap,
# indexed), and among the whole 30-day window once an hour (late commits, restarts).
RECENT_WINDOW = timedelta(hours=1)
FULL_SCAN_EVERY = timedelta(hours=1)
# Idle workers look for due polls this often (slots are minutes apart).
POLL_INTERVAL = 15.0

AdapterFactory = Callable[[ChannelContext, Runtime], ProviderAdapter]


@dataclass
class Fetch:
    poll: DuePoll
    values: dict[str, int] | None = None
    captured_at: datetime | None = None
    error: ProviderError | None = None
    # Not attempted: its channel failed earlier in this batch.
    skipped: bool = False


class MetricsPoller:
    """The loop's `run_once`; holds when it last scanned the whole discovery window."""

    def __init__(
        self,
        *,
        adapters: AdapterFactory = adapter_for,
        clock: Callable[[], datetime] = utcnow,
        owner: str = WORKER_ID,
        batch: int = BATCH,
    ) -> None:
        self._adapters = adapters
        self._clock = clock
        self._owner = owner
        self._batch = batch
        self._last_full_scan: datetime | None = None

    async def __call__(self, runtime: Runtime) -> bool:
        now = self._clock()
        contexts: dict[uuid.UUID, ChannelContext | ProviderError] = {}
        async with unit_of_work(runtime.sessions) as session:
            full = self._last_full_scan is None or now - self._last_full_scan >= FULL_SCAN_EVERY
            if full:
                await polls.retire(session, now)
                self._last_full_scan = now
            discovered = await polls.discover(
                session, now, since=now - (POLL_HORIZON if full else RECENT_WINDOW)
            )
            if discovered >= polls.DISCOVERY_LIMIT:
                self._last_full_scan = None  # more are waiting: the whole window again
            claimed = await polls.claim_due(
                session, owner=self._owner, now=now, lease=LEASE, limit=self._batch
            )
            if claimed:
                found = await channels.by_ids(session, {poll.channel_id for poll in claimed})
                for channel_id, channel in found.items():
                    try:
                        contexts[channel_id] = channels.context_for(channel, runtime.box)
                    except ValueError:
                        contexts[channel_id] = ProviderError(
                            "auth_expired",
                            "The channel's stored credentials cannot be read with this "
                            "server key; reconnect the channel.",
                        )
        if not claimed:
            return False
        fetches = await self._fetch_all(runtime, claimed, contexts)
        await self._record(runtime, fetches)
        return True

    async def _fetch_all(
        self,
        runtime: Runtime,
        claimed: list[DuePoll],
        contexts: dict[uuid.UUID, ChannelContext | ProviderError],
    ) -> list[Fetch]:
        by_channel: dict[uuid.UUID, list[Fetch]] = {}
        for poll in claimed:
            by_channel.setdefault(poll.channel_id, []).append(Fetch(poll))
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one_channel(channel_id: uuid.UUID, queue: list[Fetch]) -> None:
            context = contexts.get(channel_id)
            if not isinstance(context, ChannelContext):
                for fetch in queue:
                    fetch.error = context or ProviderError(
                        "channel_disconnected", "The channel no longer exists."
                    )
                return
            adapter = self._adapters(context, runtime)
            for index, fetch in enumerate(queue):
                async with gate:
                    await self._fetch(adapter, context, fetch)
                if fetch.error is not None and _channel_wide(fetch.error):
                    # Calling again now would only repeat the failure (or worsen a limit).
                    for rest in queue[index + 1 :]:
                        rest.skipped = True
                    return

        await asyncio.gather(*(one_channel(cid, queue) for cid, queue in by_channel.items()))
        return [fetch for queue in by_channel.values() for fetch in queue]

    async def _fetch(self, adapter: ProviderAdapter, context: ChannelContext, fetch: Fetch) -> None:
        poll = fetch.poll
        try:
            values = await asyncio.wait_for(
                adapter.fetch_metrics(context, poll.provider_post_id, poll.published_at),
                FETCH_TIMEOUT,
            )
        except ProviderError as error:
            fetch.error = error
        except TimeoutError:
            fetch.error = ProviderError(
                "timeout", f"{context.provider} did not answer within {FETCH_TIMEOUT:g} seconds."
            )
        except Exception:
            # An adapter bug must not kill the batch; the channel backs off like on an outage.
            log.exception(
                "metrics fetch failed unexpectedly", extra={"targetId": str(poll.target_id)}
            )
            fetch.error = ProviderError(
                "provider_unavailable", "The metrics fetch failed unexpectedly.", retryable=True
            )
        else:
            fetch.values = clean_values(values)
            fetch.captured_at = self._clock()

    async def _record(self, runtime: Runtime, fetches: list[Fetch]) -> None:
        owner = self._owner
        async with unit_of_work(runtime.sessions) as session:
            done = [f for f in fetches if f.values is not None and f.captured_at is not None]
            await record(
                session,
                [
                    Observation(
                        organization_id=f.poll.organization_id,
                        target_id=f.poll.target_id,
                        published_at=f.poll.published_at,
                        captured_at=f.captured_at,
                        values=f.values,
                        source="poller",
                    )
                    for f in done
                    if f.values and f.captured_at is not None
                ],
            )
            for fetch in done:
                assert fetch.captured_at is not None
                await polls.mark_polled(session, owner, fetch.poll, fetch.captured_at)
            await polls.channel_succeeded(session, {f.poll.channel_id for f in done})

            by_channel: dict[uuid.UUID, list[Fetch]] = {}
            for fetch in fetches:
                if fetch.values is None:
                    by_channel.setdefault(fetch.poll.channel_id, []).append(fetch)
            for channel_id, failed in by_channel.items():
                await self._channel_outcome(runtime, session, channel_id, failed)

    async def _channel_outcome(
        self, runtime: Runtime, session: AsyncSession, channel_id: uuid.UUID, failed: list[Fetch]
    ) -> None:
        owner = self._owner
        wide = next(
            (f.error for f in failed if f.error is not None and _channel_wide(f.error)), None
        )
        for fetch in failed:
            if fetch.error is not None and not _channel_wide(fetch.error):
                await polls.stop_polling(session, owner, fetch.poll, fetch.error.code)
        waiting = [
            f.poll for f in failed if f.skipped or (f.error is not None and _channel_wide(f.error))
        ]
        if wide is None:
            await polls.release(session, owner, waiting, None)
            return
        organization_id = failed[0].poll.organization_id
        log.warning(
            "metrics fetch failed for a channel",
            extra={"channelId": str(channel_id), "code": wide.code},
        )
        if wide.code == "auth_expired":
            await channels.mark_reconnect_required(
                session, runtime, channel_id=channel_id, reason=wide.message
            )
            await polls.channel_failed(
                session,
                channel_id=channel_id,
                organization_id=organization_id,
                # Compared with the channel's own `updated_at`, so on the same clock: the
                # reconnection that ends the stop is a change after this moment.
                now=utcnow(),
                code=wide.code,
                stopped=True,
            )
            await polls.release(session, owner, waiting, None)
            return
        paused_until = await polls.channel_failed(
            session,
            channel_id=channel_id,
            organization_id=organization_id,
            now=self._clock(),
            code=wide.code,
            retry_after=wide.retry_after,
        )
        await polls.release(session, owner, waiting, paused_until)


def _channel_wide(error: ProviderError) -> bool:
    """Whether an error is about the channel (pause or stop it) rather than one post."""
    return error.retryable or error.code == "auth_expired"
