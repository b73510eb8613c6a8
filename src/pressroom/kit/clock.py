"""The service's notion of now: always timezone-aware UTC."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def utc_minute(moment: float) -> str:
    """A Unix time as `2026-11-22 09:30 UTC`, for messages."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M UTC")
