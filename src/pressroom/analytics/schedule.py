"""When the metrics poller fetches a target's metrics, and how long it leaves a channel
alone after errors.

Metrics move fast right after publishing and hardly at all after a few weeks, so polls
decay with the target's age, on fixed slots counted from `publishedAt`:

    age < 1 hour     every 5 minutes  (5, 10, ... 60 min)
    age < 1 day      every hour       (2 h, 3 h, ... 24 h)
    age < 30 days    every day        (2 d, 3 d, ... 30 d)
    age >= 30 days   never again: the 30-day value is final

That is 12 + 23 + 29 = 64 fetches over a target's life. A target first seen late (an old
target on a new deployment) is fetched at once, then joins the slots.

A retryable provider error (rate limited, unavailable, timeout) pauses the whole channel:
1 minute after the first, doubling to at most 6 hours, or the provider's Retry-After if it
is longer (up to a day). Polls of a paused channel wait; the first success resets it."""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta
from typing import Final

POLL_STEPS: Final = (
    (timedelta(hours=1), timedelta(minutes=5)),
    (timedelta(days=1), timedelta(hours=1)),
    (timedelta(days=30), timedelta(days=1)),
)
POLL_HORIZON: Final = POLL_STEPS[-1][0]
FIRST_POLL_AFTER: Final = POLL_STEPS[0][1]

BACKOFF_FIRST: Final = timedelta(minutes=1)
BACKOFF_MAX: Final = timedelta(hours=6)
RETRY_AFTER_MAX: Final = timedelta(days=1)


def next_poll_at(published_at: datetime, now: datetime) -> datetime | None:
    """The first slot strictly after `now`, or None once the 30-day slot has passed."""
    age = now - published_at
    if age >= POLL_HORIZON:
        return None
    for horizon, step in POLL_STEPS:
        if age < horizon:
            slots = age // step + 1
            return min(published_at + slots * step, published_at + horizon)
    return None  # unreachable: the last horizon is POLL_HORIZON


def first_poll_at(published_at: datetime, now: datetime) -> datetime | None:
    """When a newly discovered target is fetched first: its 5-minute slot, or at once if
    that has passed (None if it is older than the horizon)."""
    if now - published_at >= POLL_HORIZON:
        return None
    return max(now, published_at + FIRST_POLL_AFTER)


def channel_pause(failures: int, retry_after: float | None) -> timedelta:
    """How long to leave a channel alone after its `failures`-th retryable error in a row."""
    doublings: int = max(0, min(failures - 1, 20))
    pause: timedelta = min(BACKOFF_MAX, BACKOFF_FIRST * (2**doublings))
    if retry_after is not None and retry_after > 0:
        pause = max(pause, min(timedelta(seconds=retry_after), RETRY_AFTER_MAX))
    return pause
