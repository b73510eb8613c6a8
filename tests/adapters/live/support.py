"""Opt-in live tests: each publishes one real post and deletes it again. They run only when the
provider's credentials are in the environment (never in CI, which has no network)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

from pressroom.providers.adapter import MediaItem


async def no_media(item: MediaItem) -> AsyncIterator[bytes]:
    raise AssertionError("the live tests publish text only")
    yield b""  # pragma: no cover - makes this an async generator


def live_text(provider: str) -> str:
    # Unique, so X's duplicate-content check never refuses a second run.
    return f"Pressroom {provider} adapter live test {uuid.uuid4().hex[:12]} (deleted at once)"
