"""The overview: channels and their health, the next scheduled posts, recent failures."""

from __future__ import annotations

from typing import Annotated
from typing import Any

from fastapi import APIRouter
from fastapi import Depends
from fastapi import Request
from starlette.responses import Response

from pressroom.console.api import ConsoleApi
from pressroom.console.rendering import render
from pressroom.console.sessions import Visitor
from pressroom.console.sessions import visitor

router = APIRouter(prefix="/console", include_in_schema=False)
Person = Annotated[Visitor, Depends(visitor)]

# What a person can do about a failed target, by its error code (posts schema `TargetError`).
ADVICE = {
    "auth_expired": "Reconnect the channel: the network no longer accepts its sign-in.",
    "rate_limited": "The network's quota was used up; publish again once it resets.",
    "media_rejected": "Check the media against the network's rules (type, size, length).",
    "text_rejected": "Edit the text: the network refused it as written.",
    "provider_unavailable": "The network was unavailable; publish again later.",
    "duplicate_content": "The network refuses an identical post: change the text.",
    "permission_denied": "Reconnect the channel with the permissions publishing needs.",
    "not_found": "The account or post is gone at the network; check the channel.",
    "invalid_request": "The network refused the request; check the post's options.",
    "channel_disconnected": "The channel was disconnected: connect it again, then reschedule.",
    "timeout": "The network took too long; publish again.",
}


async def channel_names(api: ConsoleApi) -> dict[str, dict[str, Any]]:
    if not api.can("channels:read"):
        return {}
    return {channel["id"]: channel for channel in await api.items("/channels")}


async def next_scheduled(api: ConsoleApi, count: int = 5) -> list[dict[str, Any]]:
    posts = await api.items("/posts", status="scheduled")
    return sorted(posts, key=lambda post: post["scheduledAt"] or "")[:count]


async def recent_failures(api: ConsoleApi, count: int = 10) -> list[dict[str, Any]]:
    """Failed targets of failed and partly published posts, the latest first."""
    failures = []
    for status in ("failed", "partially_published"):
        for post in await api.items("/posts", limit=25, status=status):
            for target in post["targets"]:
                if target["status"] == "failed" and target["error"]:
                    code = target["error"]["code"]
                    failures.append(
                        {"post": post, "target": target, "advice": ADVICE.get(code, "")}
                    )
    failures.sort(key=lambda failure: failure["post"]["updatedAt"], reverse=True)
    return failures[:count]


@router.get("")
async def overview(request: Request, person: Person) -> Response:
    """Channels and their health, what goes out next, and what failed."""
    api = person.api
    reads_posts = api.can("posts:read")
    context = {
        "channels": await channel_names(api),
        "scheduled": await next_scheduled(api) if reads_posts else [],
        "failures": await recent_failures(api) if reads_posts else [],
        "section": "overview",
    }
    return render(request, "overview.html", context, person=person)
