"""How far a publish has got, kept per process so that a retry resumes instead of starting over.

Threads has no idempotency key. What it has are media containers: created first, published
later, and kept by Threads for 24 hours (a container not published by then is `EXPIRED`,
https://developers.facebook.com/docs/threads/troubleshooting). A publish is a sequence of
steps (the post, each follow-up of a thread, the first comment), and for each this records the
container it created and, once published, the post's id. A retry of the same publish (same
channel, same idempotency key) in the same process therefore polls the container it already
made, publishes it if it is ready, and skips what is already published: a video still
processing when an attempt ran out of time is not uploaded twice, and a thread interrupted
after its second post does not post the first two again.

A retry in another process (the first one crashed) finds nothing here; the adapter then looks
for what the earlier attempt published among the account's recent posts (recovery.py).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

# A container Threads has not published within 24 hours is expired: no use remembering it.
CONTAINER_LIFETIME_SECONDS = 24 * 3600.0


@dataclass
class StepProgress:
    # When the step's first container was made (0: none yet).
    started_at: float = 0.0
    # A carousel's item containers, in media order.
    items: list[str] = field(default_factory=list)
    # The container to publish.
    container_id: str | None = None
    # The published post's media id.
    media_id: str | None = None

    def restart(self, now: float) -> None:
        """Forget containers Threads no longer keeps; the step starts over at `now`."""
        self.started_at, self.items, self.container_id = now, [], None


@dataclass
class PublishProgress:
    steps: dict[int, StepProgress] = field(default_factory=dict)
    touched_at: float = 0.0

    def step(self, index: int) -> StepProgress:
        return self.steps.setdefault(index, StepProgress())


class ProgressBook:
    """Every unfinished publish of this process, by channel and idempotency key."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._entries: dict[tuple[uuid.UUID, str], PublishProgress] = {}

    def open(self, channel_id: uuid.UUID, idempotency_key: str) -> PublishProgress:
        """The progress of this publish (empty for a first attempt). Entries untouched for a
        container's lifetime are dropped on the way."""
        now = self._clock()
        for key in [
            k for k, e in self._entries.items() if now - e.touched_at > CONTAINER_LIFETIME_SECONDS
        ]:
            del self._entries[key]
        progress = self._entries.setdefault((channel_id, idempotency_key), PublishProgress())
        progress.touched_at = now
        return progress

    def close(self, channel_id: uuid.UUID, idempotency_key: str) -> None:
        """The publish is over (published, or failed for good): nothing left to resume."""
        self._entries.pop((channel_id, idempotency_key), None)


PROCESS_PROGRESS = ProgressBook()
