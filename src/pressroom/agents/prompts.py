"""The prompt an assistant offers as "schedule a campaign"."""

from __future__ import annotations

from typing import Any

import mcp_types as types

CAMPAIGN = types.Prompt(
    name="schedule-campaign",
    title="Schedule a campaign",
    description="Plan and schedule a series of posts across the organization's channels.",
    arguments=[
        types.PromptArgument(name="goal", description="What the campaign is for.", required=True),
        types.PromptArgument(name="start", description="When it starts (ISO 8601)."),
        types.PromptArgument(name="end", description="When it ends (ISO 8601)."),
        types.PromptArgument(name="posts", description="How many posts to schedule."),
        types.PromptArgument(name="tag", description="A campaign tag to label every post."),
    ],
)

_STEPS = """You are scheduling a social media campaign with Pressroom.

Goal: {goal}
Window: {start} to {end}. Posts: {posts}. Tag every post with: {tag}.

1. Call getTenant and listChannels; use only channels whose health is `healthy`.
2. Read the resource pressroom://providers for each channel's network: text limits (counted
   the network's way), media and options.
3. Draft the posts, spread over the window, each fitted to every target's limits.
4. Preflight each draft (the preflight tool, when listed) and fix every problem it reports.
5. Show the person the plan. For each post call createPost with `scheduledAt` and the tag:
   it answers a preview and a confirmationToken; call createPost again with the same
   arguments and the token only once the person has approved that post.
6. Finish with listPosts filtered by the tag, and report what is scheduled when."""


def campaign_messages(name: str, arguments: dict[str, Any]) -> types.GetPromptResult:
    if name != CAMPAIGN.name:
        raise ValueError(f"no prompt named {name!r}")
    values = {
        "goal": arguments.get("goal") or "(ask the person)",
        "start": arguments.get("start") or "(ask)",
        "end": arguments.get("end") or "(ask)",
        "posts": arguments.get("posts") or "(as the goal needs)",
        "tag": arguments.get("tag") or "(a short campaign name)",
    }
    text = _STEPS.format(**values)
    return types.GetPromptResult(
        description=CAMPAIGN.description,
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
    )
