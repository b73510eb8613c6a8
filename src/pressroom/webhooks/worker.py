"""The delivery worker: a loop of the worker runner that keeps deliveries flowing.

Each `run_once` records the attempts that finished, takes back lapsed leases now and then, and
claims due deliveries up to this worker's room. Claimed deliveries wait in a short queue per
endpoint and are sent as that endpoint's in-flight slots free up, so one slow endpoint holds at
most its own slots while every other endpoint keeps being served; the claim itself skips
endpoints whose queue is full. Finished attempts wake the loop (batched over a few
milliseconds) so results are recorded, and room refilled, with one transaction for many
deliveries. Nothing is sent while a transaction is open.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import math
import os
import secrets
import socket
import time
import uuid
from collections import Counter
from collections import OrderedDict
from collections import deque
from datetime import datetime
from datetime import timedelta
from typing import TYPE_CHECKING

from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.kit.crypto import SecretBox
from pressroom.kit.ids import uuid7_seconds
from pressroom.kit.notify import Signal
from pressroom.kit.outbound.destination import parse_resolve_overrides
from pressroom.kit.outbound.transport import DeliveryClient
from pressroom.kit.outbound.transport import make_delivery_client
from pressroom.metrics.instruments import WEBHOOK_ATTEMPT_DURATION
from pressroom.metrics.instruments import WEBHOOK_DELIVERIES
from pressroom.metrics.instruments import WEBHOOK_FIRST_ATTEMPT_DELAY
from pressroom.webhooks import queue
from pressroom.webhooks.attempt import AttemptResult
from pressroom.webhooks.attempt import ClaimedDelivery
from pressroom.webhooks.attempt import internal_failure
from pressroom.webhooks.attempt import perform_attempt
from pressroom.webhooks.outbox import DELIVERIES_CHANNEL

if TYPE_CHECKING:
    from pressroom.runtime import Runtime

log = logging.getLogger(__name__)

# Idle workers look for due deliveries at least this often (and wake at once on new ones).
POLL_INTERVAL_SECONDS = 1.0
# Requests in flight to one endpoint from one worker process.
IN_FLIGHT_PER_ENDPOINT = 8
# Deliveries of one endpoint a worker holds at once (in flight plus queued behind them).
HELD_PER_ENDPOINT = 32
# Deliveries a worker holds at once, all endpoints together.
MAX_HELD = 512
# Rows looked at per claim.
CLAIM_BATCH = 128
# Finished attempts are recorded together, at most this long after the first of them.
RECORD_DELAY_SECONDS = 0.05
RECORD_BATCH = 64
LEASE_CHECK_SECONDS = 2.0
# On SQLite a worker's claims are at least this far apart. One connection of one process
# writes at a time there: under a steady trickle of events, a claim per event took the
# file's write lock from the API about as often as the API created them. Spaced, a claim
# takes what arrived meanwhile, at most this much later; an idle worker claims at once.
SQLITE_CLAIM_SPACING_SECONDS = 0.02
_SECRET_CACHE_SIZE = 1024


class DeliveryWorker:
    """Sends webhook deliveries; one instance per worker process (it holds the HTTP pool)."""

    def __init__(
        self,
        *,
        in_flight_per_endpoint: int = IN_FLIGHT_PER_ENDPOINT,
        held_per_endpoint: int = HELD_PER_ENDPOINT,
        max_held: int = MAX_HELD,
    ) -> None:
        self.in_flight_per_endpoint = in_flight_per_endpoint
        self.held_per_endpoint = max(held_per_endpoint, in_flight_per_endpoint)
        self.max_held = max_held
        # Identifies this worker's claims in the lease column; never shown to anyone.
        self._name = f"{socket.gethostname()[:24]}:{os.getpid()}"
        self._runtime: Runtime | None = None
        self._client: DeliveryClient | None = None
        self._waiting: dict[uuid.UUID, deque[ClaimedDelivery]] = {}
        self._active: Counter[uuid.UUID] = Counter()
        self._held: Counter[uuid.UUID] = Counter()
        self._tasks: set[asyncio.Task[None]] = set()
        self._finished: list[AttemptResult] = []
        self._closing = False
        self._record_timer: asyncio.TimerHandle | None = None
        self._retry_timer: tuple[float, asyncio.TimerHandle] | None = None
        self._retries_due: list[float] = []
        self._next_lease_check = 0.0
        self._recorder: asyncio.Task[None] | None = None
        # Finished attempts wait to be recorded (set by this worker; wakes its loop).
        self.results_ready = Signal()
        # Deliveries were announced on the channel since the last run (see _worth_claiming).
        self._new_work = False
        self._maybe_more: dict[uuid.UUID, bool] = {}
        # An endpoint with more due work runs low on claimed deliveries: claim on the next run.
        self._refill = False
        self._secrets: OrderedDict[str, str] = OrderedDict()
        self._last_claim = -math.inf

    # the loop

    async def run_once(self, runtime: Runtime) -> bool:
        """Claim what there is room for and start sending it, then record the attempts that
        finished; True if the claim was full (more may be due right now).

        The claim commits first, on its own, so new work goes out without waiting for the
        bookkeeping of old work; the recording then overlaps with the sends."""
        if self._runtime is not runtime:
            self._runtime = runtime
            runtime.notifier.subscribe(DELIVERIES_CHANNEL, self._on_notified)
        room = 0 if self._closing else self.max_held - sum(self._held.values())
        limit = min(room, CLAIM_BATCH)
        claimed: list[ClaimedDelivery] = []
        room_before = {e: self.held_per_endpoint - n for e, n in self._held.items()}
        if limit > 0 and self._worth_claiming():
            await self._space_claims(runtime)
            now = utcnow()
            claimed = await queue.claim(
                runtime,
                now=now,
                lease_until=now + self.lease(runtime.settings.webhook_timeout_seconds),
                lease_owner=f"{self._name}:{secrets.token_hex(8)}",
                limit=limit,
                room=room_before,
                default_room=self.held_per_endpoint,
                full=[e for e, n in self._held.items() if n >= self.held_per_endpoint],
            )
        if claimed:
            client = self._client_for(runtime)
            for delivery in claimed:
                self._held[delivery.endpoint_id] += 1
                self._waiting.setdefault(delivery.endpoint_id, deque()).append(delivery)
            for endpoint_id, taken in Counter(d.endpoint_id for d in claimed).items():
                # Took all it had room for: there is probably more, so refill as soon as its
                # local queue runs low rather than at the next record wake.
                self._maybe_more[endpoint_id] = (
                    taken >= room_before.get(endpoint_id, self.held_per_endpoint)
                    or len(claimed) >= limit
                )
                self._start_waiting(endpoint_id, client, runtime)
        self._start_recorder(runtime)
        return limit > 0 and len(claimed) >= limit

    async def _space_claims(self, runtime: Runtime) -> None:
        """On SQLite, wait until the last claim is `SQLITE_CLAIM_SPACING_SECONDS` old."""
        if runtime.engine.dialect.name == "postgresql":
            return
        wait = self._last_claim + SQLITE_CLAIM_SPACING_SECONDS - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        self._last_claim = time.monotonic()

    def _worth_claiming(self) -> bool:
        """Whether this run should look for due work.

        Always, unless the only reason to run is this worker's own attempts finishing: then
        only once an endpoint with more due work runs low (see `_attempt`), or some endpoint
        has sent everything it holds locally, so a busy endpoint is refilled in batches rather
        than one claim per finished attempt."""
        results_ready = self.results_ready.consume()
        own_wake_only = results_ready and not self._new_work
        refill, self._refill = self._refill, False
        self._new_work = False
        if not own_wake_only or refill:
            return True
        return any(n <= self.in_flight_per_endpoint for n in self._held.values()) or not self._held

    def _on_notified(self) -> None:
        # Called for every wake of the channel: new events, enabled endpoints, replays, retries.
        self._new_work = True

    def _start_recorder(self, runtime: Runtime) -> None:
        """Record finished attempts in a task of their own, on another connection, so the
        next claim never waits for the bookkeeping of the last sends."""
        due = self._finished or time.monotonic() >= self._next_lease_check
        if due and (self._recorder is None or self._recorder.done()):
            self._recorder = asyncio.create_task(self._record_all(runtime))

    async def _record_all(self, runtime: Runtime) -> None:
        try:
            await self._record(runtime, release_lapsed=time.monotonic() >= self._next_lease_check)
            # What finished meanwhile is recorded at once only if it fills a batch or nothing
            # else is under way; otherwise a little later, together with what follows it.
            while self._finished and self._record_now():
                await self._record(runtime)
        except Exception:
            # The results were kept; the next run tries again (and a dead database shows up
            # in the claim, which backs the loop off).
            log.exception("could not record webhook attempts; will retry")
            return
        if self._finished:
            self._arm_record_timer()

    def lease(self, timeout: float) -> timedelta:
        """The lease of a claim: long enough for every delivery this worker may hold for one
        endpoint to be attempted, `in_flight_per_endpoint` at a time, each within `timeout`."""
        rounds = math.ceil(self.held_per_endpoint / self.in_flight_per_endpoint)
        return timedelta(seconds=queue.lease_seconds(timeout, rounds))

    async def close(self, runtime: Runtime) -> None:
        """On shutdown: finish the attempts under way, record them, give back the rest."""
        self._closing = True
        if self._tasks:
            _, late = await asyncio.wait(
                set(self._tasks), timeout=runtime.settings.webhook_timeout_seconds + 5
            )
            for task in late:
                task.cancel()  # their leases lapse and another worker sends them
            await asyncio.gather(*late, return_exceptions=True)
        unsent = [d for waiting in self._waiting.values() for d in waiting]
        self._waiting.clear()
        if self._recorder is not None:
            await asyncio.gather(self._recorder, return_exceptions=True)
        try:
            await self._record(runtime)
        except Exception:
            log.exception("could not record the last attempts; their leases will lapse")
        try:
            if unsent:
                async with unit_of_work(runtime.sessions) as session:
                    await queue.release_claims(session, unsent)
        except Exception:
            log.exception("could not give back unsent deliveries; their leases will lapse")
        for timer in (self._record_timer, self._retry_timer[1] if self._retry_timer else None):
            if timer is not None:
                timer.cancel()
        self._record_timer = self._retry_timer = None
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # sending

    def _client_for(self, runtime: Runtime) -> DeliveryClient:
        if self._client is None:
            settings = runtime.settings
            self._client = make_delivery_client(
                timeout=settings.webhook_timeout_seconds,
                ca_bundle=settings.webhook_ca_bundle,
                overrides=parse_resolve_overrides(settings.webhook_resolve),
                # Never a wait for a pooled connection: that would eat the attempt's timeout.
                max_connections_per_host=self.max_held,
            )
        return self._client

    def _start_waiting(
        self, endpoint_id: uuid.UUID, client: DeliveryClient, runtime: Runtime
    ) -> None:
        waiting = self._waiting.get(endpoint_id)
        while waiting and self._active[endpoint_id] < self.in_flight_per_endpoint:
            if self._closing:
                return
            delivery = waiting.popleft()
            self._active[endpoint_id] += 1
            task = asyncio.create_task(self._attempt(delivery, client, runtime))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        if waiting is not None and not waiting:
            del self._waiting[endpoint_id]

    async def _attempt(
        self, delivery: ClaimedDelivery, client: DeliveryClient, runtime: Runtime
    ) -> None:
        started_at = utcnow()
        if delivery.number == 1 and delivery.trigger == "scheduled":
            # Event ids are UUIDv7s made when the event was written to the outbox.
            waited = started_at.timestamp() - uuid7_seconds(delivery.event_id)
            WEBHOOK_FIRST_ATTEMPT_DELAY.observe(max(0.0, waited))
        try:
            signing = self._signing_secrets(delivery, runtime.box)
            with WEBHOOK_ATTEMPT_DURATION.time():
                result = await perform_attempt(
                    client, delivery, signing, runtime.settings.webhook_timeout_seconds
                )
        except Exception:
            log.exception(
                "webhook attempt failed unexpectedly",
                extra={"deliveryId": str(delivery.delivery_id)},
            )
            result = internal_failure(delivery, started_at)
        finally:
            endpoint_id = delivery.endpoint_id
            self._active[endpoint_id] -= 1
            self._held[endpoint_id] -= 1
            if not self._held[endpoint_id]:
                del self._held[endpoint_id]
                del self._active[endpoint_id]
        self._finished.append(result)
        self._start_waiting(endpoint_id, client, runtime)
        # Refill while one round of sends is still queued, so the claim's round trip overlaps
        # with sending instead of leaving the endpoint's slots idle until it returns.
        low = len(self._waiting.get(endpoint_id, ())) <= self.in_flight_per_endpoint
        if low and self._maybe_more.pop(endpoint_id, False):
            self._refill = True
            self.results_ready.set()
        self._wake_to_record()

    def _signing_secrets(self, delivery: ClaimedDelivery, box: SecretBox) -> list[str]:
        """The current secret, and the previous one while its rotation grace lasts."""
        signing = [self._decrypt(box, delivery.secret_encrypted)]
        previous = delivery.previous_secret_encrypted
        expires = delivery.previous_expires_at
        if previous is not None and expires is not None and expires > utcnow():
            signing.append(self._decrypt(box, previous))
        return signing

    def _decrypt(self, box: SecretBox, ciphertext: str) -> str:
        # A rotation changes the ciphertext, so a cached entry is never stale.
        secret = self._secrets.get(ciphertext)
        if secret is None:
            secret = box.decrypt(ciphertext)
            self._secrets[ciphertext] = secret
            if len(self._secrets) > _SECRET_CACHE_SIZE:
                self._secrets.popitem(last=False)
        else:
            self._secrets.move_to_end(ciphertext)
        return secret

    # recording

    def _wake(self) -> None:
        """Wake the loop to record finished attempts (not, by itself, to claim)."""
        self._record_timer = None
        self.results_ready.set()

    def _record_now(self) -> bool:
        """Whether the finished attempts are worth a record right away: a full batch, or
        nothing else under way that could join them (the calling attempt aside)."""
        return (
            len(self._finished) >= RECORD_BATCH
            or self._closing
            or not self._tasks - {asyncio.current_task()}
        )

    def _wake_to_record(self) -> None:
        """Wake the loop soon, so finished attempts are recorded together."""
        if self._record_now():
            if self._record_timer is not None:
                self._record_timer.cancel()
            self._wake()
        else:
            self._arm_record_timer()

    def _arm_record_timer(self) -> None:
        if self._record_timer is None:
            self._record_timer = asyncio.get_running_loop().call_later(
                RECORD_DELAY_SECONDS, self._wake
            )

    async def _record(self, runtime: Runtime, *, release_lapsed: bool = False) -> None:
        """Record the finished attempts (and, now and then, take back lapsed leases)."""
        finished, self._finished = self._finished, []
        if not finished and not release_lapsed:
            return
        try:
            recorded, released = await queue.record(
                runtime,
                finished,
                delays=runtime.settings.retry_delays,
                now=utcnow(),
                release_lapsed=release_lapsed,
            )
        except BaseException:
            # Keep them for the next run: the leases stay ours until they lapse.
            self._finished[:0] = finished
            raise
        if release_lapsed:
            self._next_lease_check = time.monotonic() + LEASE_CHECK_SECONDS
            if released:
                log.info("took back deliveries of lapsed leases", extra={"count": released})
        self._after_recording(finished, recorded)

    def _after_recording(
        self, finished: list[AttemptResult], recorded: list[queue.Recorded]
    ) -> None:
        lost = len(finished) - len(recorded)
        if lost:
            log.warning(
                "attempt results not recorded: their leases were taken over",
                extra={"count": lost},
            )
        for item in recorded:
            status = item.state.status
            WEBHOOK_DELIVERIES.labels("retrying" if status == "pending" else status).inc()
            if status == "exhausted":
                log.info(
                    "webhook delivery exhausted",
                    extra={
                        "deliveryId": str(item.result.claimed.delivery_id),
                        "endpointId": str(item.result.claimed.endpoint_id),
                        "errorCode": item.result.error_code,
                        "responseStatus": item.result.response_status,
                    },
                )
            elif item.state.next_attempt_at is not None:
                self._wake_for_retry(item.state.next_attempt_at)

    def _wake_for_retry(self, when: datetime) -> None:
        """A retry due before the next poll gets a timer, so short schedules are kept."""
        delay = (when - utcnow()).total_seconds()
        if delay >= POLL_INTERVAL_SECONDS:
            return
        loop = asyncio.get_running_loop()
        # A hair late rather than early: the claim compares with the database's idea of due.
        heapq.heappush(self._retries_due, loop.time() + max(0.0, delay) + 0.002)
        self._arm_retry_timer()

    def _arm_retry_timer(self) -> None:
        if not self._retries_due:
            return
        earliest = self._retries_due[0]
        if self._retry_timer is not None:
            if self._retry_timer[0] <= earliest:
                return
            self._retry_timer[1].cancel()
        loop = asyncio.get_running_loop()
        self._retry_timer = (earliest, loop.call_at(earliest, self._wake_retry))

    def _wake_retry(self) -> None:
        self._retry_timer = None
        now = asyncio.get_running_loop().time()
        while self._retries_due and self._retries_due[0] <= now:
            heapq.heappop(self._retries_due)
        if self._runtime is not None:
            self._runtime.notifier.wake(DELIVERIES_CHANNEL)
        self._arm_retry_timer()
