"""The composer's live counts: the form's post checked by preflightPost (createPost's own
checks, creating nothing), shown as each target's count against its network's limit and every
problem createPost would refuse the post for."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from pressroom.console.api import ConsoleApi
from pressroom.providers.validation.text import UNIT_NAMES


@dataclass
class Preflight:
    """What the counts region shows."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    # Problems of the post as a whole (its schedule, tags, media...): field and message.
    problems: list[tuple[str, str]] = field(default_factory=list)


def _row(target: dict[str, Any], channels: dict[str, dict[str, Any]]) -> dict[str, Any]:
    channel = channels.get(str(target["channelId"])) or {}
    length = target.get("length")
    unit = ""
    if length is not None:
        singular, plural = UNIT_NAMES.get(length["unit"], (length["unit"], length["unit"]))
        unit = singular if length["limit"] == 1 else plural
    return {
        "channel": channel.get("name", target.get("provider") or "unknown channel"),
        "length": length,
        "unit": unit,
        # `targets[0].text` -> `text`: the row already names the target.
        "problems": [
            f"{error['field'].partition('.')[2] or 'target'}: {error['message']}"
            for error in target["errors"]
        ],
        "ok": target["ok"],
    }


async def live_counts(
    api: ConsoleApi, body: dict[str, Any], channels: dict[str, dict[str, Any]]
) -> Preflight:
    if not body["targets"]:
        return Preflight()
    answer = await api.call("POST", "/posts/preflight", json=body)
    if not answer.ok:
        # A body preflightPost cannot read at all (a 400 of its own): its reason, as it is.
        return Preflight(
            problems=[(field, message) for field, message in answer.field_errors.items()]
            or [("post", answer.detail)]
        )
    checked = answer.body
    rows = [_row(target, channels) for target in checked["targets"]]
    problems = [
        (error["field"], error["message"])
        for error in checked["errors"]
        if not error["field"].startswith("targets[")
    ]
    return Preflight(rows=rows, problems=problems)
