"""Target options the real adapters share: a thread's follow-up texts, a first comment and
media alt texts.

- `options.thread`: a list of texts, posted in order as a reply chain under the main post.
- `options.firstComment`: a text the account comments under its own post once it is live
  (`comment_refusal` turns a refusal into what is recorded on the published target).
- `options.altTexts`: alternative text for the target's media, either a list in media order
  (`null` or "" for none) or an object keyed by media id.

Targets are validated against their provider's declaration before they are scheduled; these
checks only turn a malformed value that slipped through into a permanent, explained error
instead of a crash.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError

log = logging.getLogger(__name__)


def thread_texts(options: dict[str, Any]) -> list[str]:
    value = options.get("thread")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) and t.strip() for t in value):
        raise ProviderError("invalid_request", "options.thread must be a list of non-empty texts.")
    return list(value)


def first_comment(options: dict[str, Any]) -> str | None:
    """`options.firstComment`: the comment to post under the published post, or None."""
    value = options.get("firstComment")
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not value.strip():
        raise ProviderError("invalid_request", "options.firstComment must be a non-empty text.")
    return value


async def comment_refusal(
    provider: str, target_id: uuid.UUID, send: Callable[[], Awaitable[object]]
) -> ProviderError | None:
    """Post the first comment with `send`, once the post is live: a refusal is returned (to be
    recorded on the published target), never raised, so a live post is never reported failed
    nor retried into a second copy."""
    try:
        await send()
    except ProviderError as error:
        log.warning(
            "first comment not posted",
            extra={"provider": provider, "targetId": str(target_id), "code": error.code},
        )
        return ProviderError(
            error.code,
            f"The post was published but its first comment was not: {error.message}",
            retryable=error.retryable,
        )
    return None


def alt_texts(options: dict[str, Any], media: Sequence[MediaItem]) -> list[str | None]:
    """One alt text (or None) per media item, in the media's order."""
    value = options.get("altTexts")
    if value is None:
        return [None] * len(media)
    if isinstance(value, list):
        if len(value) > len(media) or not all(t is None or isinstance(t, str) for t in value):
            raise ProviderError(
                "invalid_request",
                "options.altTexts must list at most one text (or null) per media item.",
            )
        texts: list[str | None] = [t or None for t in value]
        return texts + [None] * (len(media) - len(texts))
    if isinstance(value, dict):
        if not all(isinstance(t, str) for t in value.values()):
            raise ProviderError("invalid_request", "options.altTexts values must be texts.")
        return [value.get(str(item.id)) or None for item in media]
    raise ProviderError(
        "invalid_request", "options.altTexts must be a list or an object keyed by media id."
    )
