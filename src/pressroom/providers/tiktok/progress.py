"""Publish ids of this process's unfinished TikTok posts, so that a retry waits for the post an
earlier attempt started instead of posting it twice.

TikTok has no idempotency key and no way to list an account's private posts, and what it
accepted is posted once its processing ends: there is nothing to undo and nothing to look up.
What a retry can do is remember. Once an init has answered a `publish_id` (and, for a file
upload, every chunk was sent), the id is kept under the channel and the target's idempotency
key; a retry of that publish in the same process polls the same id. A retry after a crash finds
nothing and posts again: TikTok gives no means to tell.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

# TikTok keeps a publish's status to fetch for about a day; nothing is resumed past it.
KEEP_SECONDS = 24 * 3600.0


class PendingPublishes:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._ids: dict[tuple[uuid.UUID, str], tuple[str, float]] = {}

    def get(self, channel_id: uuid.UUID, key: str) -> str | None:
        now = self._clock()
        self._ids = {k: v for k, v in self._ids.items() if now - v[1] <= KEEP_SECONDS}
        kept = self._ids.get((channel_id, key))
        return kept[0] if kept else None

    def keep(self, channel_id: uuid.UUID, key: str, publish_id: str) -> None:
        self._ids[(channel_id, key)] = (publish_id, self._clock())

    def forget(self, channel_id: uuid.UUID, key: str) -> None:
        self._ids.pop((channel_id, key), None)


PROCESS_PENDING = PendingPublishes()
