"""The publisher: a worker loop that publishes due post targets through their adapters.

A run claims due targets with a lease (short transactions), publishes them concurrently
outside any transaction (at most `PRESSROOM_PUBLISHER_CONCURRENCY` in flight), and records
each group of outcomes in one transaction while the next publishes are on their way. Woken
by NOTIFY when a post becomes due now; when idle it looks again at least once a second, and
sleeps only until the next scheduled target is due, so scheduled posts go out on time rather
than up to a poll interval late.

While publishes are in flight, their leases are renewed (heartbeat.py), so a slow network
(minutes of video processing) never lets another worker take a target whose first attempt may
still succeed; each publish is bounded by `PRESSROOM_PUBLISHER_PUBLISH_TIMEOUT_SECONDS` instead.

A target is `published` only after its adapter returned a provider post id. Retryable errors
come back after the configured backoff (at least the provider's Retry-After); the last allowed
attempt, or a permanent error, ends in `failed` with the error. An authentication failure
moves the channel to `reconnect_required`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.channels import service as channels
from pressroom.channels.adapters import adapter_for
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.kit.notify import wait_for_work
from pressroom.media import service as media
from pressroom.metrics.instruments import record_publish_outcome
from pressroom.posts.service import PUBLISHER_CHANNEL
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.publishing import queue
from pressroom.publishing.heartbeat import Heartbeat
from pressroom.publishing.queue import ClaimedTarget
from pressroom.publishing.queue import Outcome
from pressroom.runtime import Runtime

log = logging.getLogger(__name__)

# Who holds a lease: this process, recognisable in the database when debugging.
WORKER_ID = f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"
# Idle: sleep until the next due target if it falls due within this many seconds.
_LOOKAHEAD_SECONDS = 1.0
# One run keeps claiming for this long at most, then returns to the loop (which can stop).
_RUN_SECONDS = 5.0
# While busy but short of work, look for newly due targets this often.
_RECLAIM_SECONDS = 0.25
# After the first publish of a group answers, how long to wait for the others.
_COLLECT_SECONDS = 0.02


@dataclass
class Job:
    target: ClaimedTarget
    channel: ChannelContext | None = None
    request: PublishRequest | None = None
    # Decided without calling the provider (channel gone, attempts used up, media missing).
    error: ProviderError | None = None


async def publish_due_targets(runtime: Runtime) -> bool:
    """One run of the publisher loop: publish what is due, at most
    `PRESSROOM_PUBLISHER_CONCURRENCY` at a time. True if it found work (or waited for some),
    False when idle."""
    # Listen before looking, so a post made due while we look is not missed.
    waiter = runtime.notifier.waiter(PUBLISHER_CHANNEL)
    try:
        jobs, next_due = await _claim(runtime, runtime.settings.publisher_concurrency)
        if not jobs:
            if next_due is None:
                return False
            wait = (next_due - utcnow()).total_seconds()
            if wait > _LOOKAHEAD_SECONDS:
                return False
            if wait > 0:
                await wait_for_work(waiter, wait)
            return True
    finally:
        runtime.notifier.forget(PUBLISHER_CHANNEL, waiter)
    await _publish_pipelined(runtime, jobs)
    return True


async def _claim(runtime: Runtime, limit: int) -> tuple[list[Job], datetime | None]:
    """Lease up to `limit` due targets (one short transaction); when there are none, when
    the next one falls due."""
    async with unit_of_work(runtime.sessions) as session:
        claimed = await queue.claim_due_targets(
            session,
            owner=WORKER_ID,
            lease_seconds=runtime.settings.publisher_lease_seconds,
            limit=limit,
            now=utcnow(),
        )
        if not claimed:
            return [], await queue.next_due_at(session)
        return await _prepare(session, runtime, claimed), None


async def _publish_pipelined(runtime: Runtime, first: list[Job]) -> None:
    """Keep publishes in flight while recording finished ones: the provider's round trip
    overlaps our own bookkeeping. Claims more whenever half the slots are free, for a few
    seconds at most (then the loop comes round again, and can stop between runs)."""
    async with Heartbeat(runtime, WORKER_ID) as heartbeat:
        await _pipeline(runtime, first, heartbeat)


async def _pipeline(runtime: Runtime, first: list[Job], heartbeat: Heartbeat) -> None:
    limit = runtime.settings.publisher_concurrency
    in_flight: dict[asyncio.Task[Outcome], Job] = {}

    def start(jobs: Sequence[Job]) -> None:
        for job in jobs:
            heartbeat.hold(job.target.id)
            in_flight[asyncio.create_task(_attempt(runtime, job))] = job

    start(first)
    more = len(first) == limit
    last_claim = time.monotonic()
    ends = last_claim + _RUN_SECONDS
    try:
        while in_flight:
            # Wake on an answer, or in time to look for newly due targets: slow publishes
            # must not hold back what falls due meanwhile.
            await asyncio.wait(
                in_flight, timeout=_RECLAIM_SECONDS, return_when=asyncio.FIRST_COMPLETED
            )
            if any(task.done() for task in in_flight):
                # Publishes sent together answer together: wait a moment for the rest, so
                # that one transaction records them all.
                await asyncio.wait(in_flight, timeout=_COLLECT_SECONDS)
            done = [task for task in in_flight if task.done()]
            for task in done:
                heartbeat.release(in_flight.pop(task).target.id)
            now = time.monotonic()
            free = limit - len(in_flight)
            worth_it = free >= limit // 2 and more
            if free and now < ends and (worth_it or now - last_claim >= _RECLAIM_SECONDS):
                # Refill first: the new publishes travel while we record the finished ones.
                jobs, _ = await _claim(runtime, free)
                more, last_claim = len(jobs) == free, time.monotonic()
                start(jobs)
            if done:
                await _record(runtime, [task.result() for task in done])
    finally:
        # Only on an error: abandon what is in flight; its leases expire and another run
        # re-sends the same idempotency keys.
        for task in in_flight:
            task.cancel()
        await asyncio.gather(*in_flight, return_exceptions=True)


async def _prepare(
    session: AsyncSession, runtime: Runtime, claimed: Sequence[ClaimedTarget]
) -> list[Job]:
    found = await channels.by_ids(session, {target.channel_id for target in claimed})
    items: dict[uuid.UUID, MediaItem] = {}
    for organization_id in {target.organization_id for target in claimed}:
        wanted = [m for t in claimed if t.organization_id == organization_id for m in t.media_ids]
        items.update(await media.media_items(session, organization_id, wanted))
    max_attempts = len(runtime.settings.publisher_retry_delays) + 1
    jobs = []
    for target in claimed:
        job = Job(target)
        jobs.append(job)
        if target.post_deleted:
            # Taken over from a worker that died mid-publish after the post was deleted: it
            # must not reach the network again (the outcome cancels it).
            continue
        channel = found.get(target.channel_id)
        job.error = channels.publish_refusal(channel) or _exhausted(target, max_attempts)
        if job.error is not None or channel is None:
            continue
        missing = [m for m in target.media_ids if m not in items]
        if missing:
            job.error = ProviderError(
                "media_rejected", f"Media {missing[0]} no longer exists; replace it."
            )
            continue
        try:
            job.channel = channels.context_for(channel, runtime.box)
        except ValueError:
            job.error = ProviderError(
                "auth_expired",
                "The channel's stored credentials cannot be read with this server key; "
                "reconnect the channel.",
            )
            continue
        job.request = PublishRequest(
            channel=job.channel,
            target_id=target.id,
            content_kind=target.content_kind,
            text=target.text,
            media=tuple(items[m] for m in target.media_ids),
            options=target.options,
            idempotency_key=target.idempotency_key,
            attempt=target.attempt,
        )
    return jobs


def _exhausted(target: ClaimedTarget, max_attempts: int) -> ProviderError | None:
    """A target taken over from workers that never answered, once too often."""
    if target.abandoned and target.attempt > max_attempts:
        return ProviderError(
            "timeout",
            f"No outcome after {max_attempts} attempts: the publishing worker stopped or the "
            "provider did not answer in time.",
        )
    return None


async def _attempt(runtime: Runtime, job: Job) -> Outcome:
    if job.error is not None or job.request is None or job.channel is None:
        return Outcome(job.target, error=job.error)
    adapter = adapter_for(job.channel, runtime)
    timeout = runtime.settings.publisher_publish_timeout_seconds
    try:
        result = await asyncio.wait_for(adapter.publish(job.request), timeout)
    except ProviderError as error:
        return Outcome(job.target, error=error)
    except TimeoutError:
        return Outcome(
            job.target,
            error=ProviderError(
                "timeout", f"{job.channel.provider} did not answer within {timeout:g} seconds."
            ),
        )
    except Exception:
        # An adapter bug must not look like success, nor kill the batch.
        log.exception("adapter failed unexpectedly", extra={"targetId": str(job.target.id)})
        return Outcome(
            job.target,
            error=ProviderError(
                "provider_unavailable",
                "The publish failed unexpectedly; it will be retried.",
                retryable=True,
            ),
        )
    if not result.provider_post_id:
        return Outcome(
            job.target,
            error=ProviderError(
                "provider_unavailable", "The provider answered without a post id.", retryable=True
            ),
        )
    return Outcome(job.target, result=result)


async def _record(runtime: Runtime, outcomes: Sequence[Outcome]) -> None:
    # Every authentication failure, from the provider or from credentials this server cannot
    # read, means the channel must be reconnected (a no-op for one that already must).
    refused = {
        outcome.target.channel_id: outcome.error.message
        for outcome in outcomes
        if outcome.error is not None and outcome.error.code == "auth_expired"
    }
    async with unit_of_work(runtime.sessions) as session:
        # Channels before posts, the lock order used everywhere.
        for channel_id in sorted(refused):
            await channels.mark_reconnect_required(
                session, runtime, channel_id=channel_id, reason=refused[channel_id]
            )
        now = utcnow()
        recorded = await queue.record_outcomes(
            session, runtime, owner=WORKER_ID, outcomes=outcomes, now=now
        )
    _count(outcomes, recorded, now)
    if recorded.lost:
        log.warning(
            "publish outcomes dropped: lease lost",
            extra={"targets": [str(t) for t in recorded.lost]},
        )


def _count(outcomes: Sequence[Outcome], recorded: queue.Recorded, now: datetime) -> None:
    """The publisher's metrics, for the outcomes that were recorded (committed)."""
    published, retrying = set(recorded.published), set(recorded.retrying)
    settled = published | retrying | set(recorded.failed)
    for outcome in outcomes:
        target = outcome.target
        if target.id not in settled:
            continue
        due = target.due_at
        record_publish_outcome(
            target.provider,
            published=target.id in published,
            lateness=(now - due).total_seconds() if due is not None else None,
            code=outcome.error.code if outcome.error else None,
            retrying=target.id in retrying,
        )
