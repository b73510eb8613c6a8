"""A LinkedIn post's numbers, in Pressroom's canonical metric names.

- A Page's post: `GET /rest/organizationalEntityShareStatistics?q=organizationalEntity
  &organizationalEntity={org}&shares=List({urn})` (or `ugcPosts=List(...)` for a
  `urn:li:ugcPost`), whose `totalShareStatistics` holds `impressionCount`,
  `uniqueImpressionsCount`, `likeCount`, `commentCount`, `shareCount` and `clickCount`
  (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/organizations/
  share-statistics). Needs `r_organization_social`.
- A member's post: LinkedIn gives third parties no impressions of member posts; its social
  actions summary `GET /rest/socialActions/{urn}` has `likesSummary.totalLikes` and
  `commentsSummary.aggregatedTotalComments` (.../community-management/shares/
  network-update-social-actions).
"""

from __future__ import annotations

from typing import Any

from pressroom.providers.linkedin.session import LinkedInSession
from pressroom.providers.linkedin.session import encoded

SHARE_STATISTICS = {
    "impressionCount": "impressions",
    "uniqueImpressionsCount": "reach",
    "likeCount": "likes",
    "commentCount": "comments",
    "shareCount": "shares",
    "clickCount": "clicks",
}


def _count(value: object) -> int | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    return None


async def post_metrics(session: LinkedInSession, urn: str) -> dict[str, int]:
    if session.author.startswith("urn:li:organization:"):
        return await _organization_post(session, urn)
    return await _member_post(session, urn)


async def _organization_post(session: LinkedInSession, urn: str) -> dict[str, int]:
    # Rest.li 2.0 lists: List(...) with each element percent-encoded, the parentheses not.
    kind = "ugcPosts" if urn.startswith("urn:li:ugcPost:") else "shares"
    query = (
        f"q=organizationalEntity&organizationalEntity={encoded(session.author)}"
        f"&{kind}=List({encoded(urn)})"
    )
    body = await session.call(
        "GET", f"/rest/organizationalEntityShareStatistics?{query}", "reading the post's statistics"
    )
    elements = body.get("elements")
    first = elements[0] if isinstance(elements, list) and elements else {}
    totals: Any = first.get("totalShareStatistics") if isinstance(first, dict) else None
    metrics: dict[str, int] = {}
    for field, name in SHARE_STATISTICS.items():
        value = _count(totals.get(field)) if isinstance(totals, dict) else None
        if value is not None:
            metrics[name] = value
    return metrics


async def _member_post(session: LinkedInSession, urn: str) -> dict[str, int]:
    body = await session.call(
        "GET", f"/rest/socialActions/{encoded(urn)}", "reading the post's likes and comments"
    )
    likes, comments = body.get("likesSummary"), body.get("commentsSummary")
    metrics: dict[str, int] = {}
    if isinstance(likes, dict) and (total := _count(likes.get("totalLikes"))) is not None:
        metrics["likes"] = total
    if (
        isinstance(comments, dict)
        and (total := _count(comments.get("aggregatedTotalComments"))) is not None
    ):
        metrics["comments"] = total
    return metrics
