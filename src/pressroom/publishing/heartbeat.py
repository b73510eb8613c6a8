"""The publisher's heartbeat: the leases of targets whose publish is in flight are renewed
while it lasts.

A lease (`PRESSROOM_PUBLISHER_LEASE_SECONDS`, 60 s) is how long a silent worker keeps its
targets; a publish may last much longer (a video a network processes for minutes). So while a
worker's publishes are in flight, it extends their leases every third of a lease, in one short
transaction for all of them: a live worker's target is never taken over, however slow the
network, and a dead worker's heartbeat stops with it, so its leases lapse and another worker
takes its targets over as before. A renewal that finds a target no longer held (another worker
took it over after a stall longer than the lease) stops renewing it; the publish's outcome is
then dropped when it is recorded, as for any lease lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from types import TracebackType

from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.publishing import queue
from pressroom.runtime import Runtime

log = logging.getLogger(__name__)

# Renewals per lease: two may fail (a busy database) before the lease runs out.
BEATS_PER_LEASE = 3


class Heartbeat:
    """Renews the leases of the targets `hold` names until `release`; an async context
    manager that beats while it is open."""

    def __init__(self, runtime: Runtime, owner: str) -> None:
        self._runtime = runtime
        self._owner = owner
        self._lease = runtime.settings.publisher_lease_seconds
        self._held: set[uuid.UUID] = set()
        self._task: asyncio.Task[None] | None = None

    @property
    def interval(self) -> float:
        return self._lease / BEATS_PER_LEASE

    @property
    def held(self) -> frozenset[uuid.UUID]:
        """The targets whose leases it renews."""
        return frozenset(self._held)

    def hold(self, target_id: uuid.UUID) -> None:
        self._held.add(target_id)

    def release(self, target_id: uuid.UUID) -> None:
        self._held.discard(target_id)

    async def __aenter__(self) -> Heartbeat:
        self._task = asyncio.create_task(self._beat(), name="publisher-heartbeat")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            if self._held:
                await self.renew()

    async def renew(self) -> None:
        """Extend every held lease now; stop holding those another worker took over."""
        held = sorted(self._held)
        try:
            async with unit_of_work(self._runtime.sessions) as session:
                kept = await queue.renew_leases(
                    session,
                    owner=self._owner,
                    target_ids=held,
                    lease_seconds=self._lease,
                    now=utcnow(),
                )
        except Exception:
            # The next beat tries again; the lease has two more beats of room.
            log.warning("publisher lease renewal failed", exc_info=True)
            return
        # A target released meanwhile (its publish answered) is not lost, whatever was read.
        lost = [target for target in held if target not in kept and target in self._held]
        if lost:
            self._held.difference_update(lost)
            log.warning(
                "publisher lease lost mid-publish: its outcome will not be recorded",
                extra={"targets": [str(target) for target in lost]},
            )
