"""A Facebook Page post's metrics, as Pressroom's canonical keys.

- Engagement: `GET /{post-id}?fields=reactions.limit(0).summary(total_count),
  comments.limit(0).summary(total_count),shares`
  (https://developers.facebook.com/docs/graph-api/reference/post/): every reaction counts as a
  like, `comments.summary.total_count` as comments, `shares.count` as shares (absent: none).
- Insights: `GET /{post-id}/insights?metric=post_media_view,post_total_media_view_unique,
  post_clicks` (https://developers.facebook.com/docs/graph-api/reference/insights/, needs
  `read_insights`): `post_media_view` -> views, `post_total_media_view_unique` -> reach,
  `post_clicks` -> clicks. Meta retired the impressions metrics (`post_impressions*`) for views
  in 2025 (https://developers.facebook.com/docs/platforminsights/page/deprecated-metrics), so
  Facebook reports no `impressions` and no `saves`.

Videos and Reels are published under a video id; their insights live on the Page post that
carries them (`GET /{video-id}?fields=post_id`). A video whose post Facebook has not created yet
has no metrics yet. Insights are only kept for Pages with enough followers, a metric Meta has
retired fails the whole request with code 100, and a channel connected without `read_insights`
is refused them: the engagement counts are then still returned. Stories have no metrics here.
"""

from __future__ import annotations

import logging

from pressroom.providers.adapter import ProviderError
from pressroom.providers.facebook.page import PageApi
from pressroom.providers.graph import canonical_metrics
from pressroom.providers.graph import insight_values

log = logging.getLogger(__name__)

INSIGHTS = {
    "views": ("post_media_view",),
    "reach": ("post_total_media_view_unique",),
    "clicks": ("post_clicks",),
}
ENGAGEMENT_FIELDS = (
    "reactions.limit(0).summary(total_count),comments.limit(0).summary(total_count),shares"
)


async def post_metrics(api: PageApi, provider_post_id: str) -> dict[str, int]:
    post_id = await _post_id(api, provider_post_id)
    if post_id is None:
        return {}
    body = await api.get(
        post_id, "reading the post's reactions, comments and shares", {"fields": ENGAGEMENT_FIELDS}
    )
    metrics = {
        "likes": _summary_total(body.get("reactions")),
        "comments": _summary_total(body.get("comments")),
        "shares": _shares(body.get("shares")),
    }
    names = ",".join(name for names in INSIGHTS.values() for name in names)
    try:
        insights = await api.get(
            f"{post_id}/insights", "reading the post's insights", {"metric": names}
        )
    except ProviderError as error:
        # A retired metric (code 100) or a channel connected without read_insights: the
        # engagement counts are still worth keeping. Anything else concerns the whole call.
        if error.code not in ("invalid_request", "permission_denied"):
            raise
        log.warning("facebook post insights unavailable: %s", error.message)
        return metrics
    metrics.update(canonical_metrics(insight_values(insights), INSIGHTS))
    return metrics


async def _post_id(api: PageApi, provider_post_id: str) -> str | None:
    # Page post ids are "{page-id}_{post-id}"; a bare id is a video's or a reel's.
    if "_" in provider_post_id:
        return provider_post_id
    body = await api.get(provider_post_id, "finding the video's post", {"fields": "post_id"})
    post_id = body.get("post_id")
    return post_id if isinstance(post_id, str) and post_id else None


def _summary_total(edge: object) -> int:
    summary = edge.get("summary") if isinstance(edge, dict) else None
    total = summary.get("total_count") if isinstance(summary, dict) else None
    return total if isinstance(total, int) and not isinstance(total, bool) and total > 0 else 0


def _shares(value: object) -> int:
    count = value.get("count") if isinstance(value, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0
