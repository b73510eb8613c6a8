"""The composer's live counts: each chosen channel's text counted the way its network counts
it, against the channel's limit."""

from __future__ import annotations

from typing import Any

from pressroom.console.api import ConsoleApi
from pressroom.providers.declarations import DECLARATIONS
from pressroom.providers.validation.text import describe_length, overrun


async def live_counts(
    api: ConsoleApi, values: dict[str, Any], channels: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """One row per chosen channel: `{channel, count, limit, unit, problem}`."""
    rows = []
    for channel_id in values["channels"]:
        channel = channels.get(channel_id)
        declaration = DECLARATIONS.get(channel["provider"]) if channel else None
        if channel is None or declaration is None:
            continue
        text = str(values["overrides"].get(channel_id) or values["text"] or "")
        rule = declaration.content_kinds[0].text
        count, unit = describe_length(text, rule)
        rows.append(
            {
                "channel": channel["name"],
                "count": count,
                "limit": rule.max_length,
                "unit": unit,
                "problem": overrun(text, rule, channel["provider"]),
            }
        )
    return rows
