"""Not posting twice when a publish is retried.

The Graph API takes no idempotency key, and Pressroom's adapters keep no state between attempts.
What Facebook offers is the Page's own recent content, with its text:

- feed and photo posts: `GET /{page-id}/published_posts?fields=id,message,created_time`
  (https://developers.facebook.com/docs/graph-api/reference/page/published_posts/);
- feed videos: `GET /{page-id}/videos?fields=id,description,created_time`;
- Reels: `GET /{page-id}/video_reels?fields=id,description,created_time` (a reel's description
  is set by its finish step, so an upload abandoned before it never matches).

So a retried publish (`attempt > 1`: an earlier attempt may have published before failing or
timing out) first looks among the Page's latest items of its kind, created within the last
`RECOVERY_WINDOW`, for one with the same text, and returns it instead of publishing again. A
first attempt never looks: the same text published by other means is not ours. Stories carry
no text and cannot be recognised: a retried story may be published twice. A post without text
cannot be recognised either and is published again.

When the Page's items cannot be read, a retryable failure fails the retry (it comes back later)
rather than risk posting twice; a permanent one (the permission is missing) lets the publish go
ahead, since no later attempt could check either.
"""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta

from pressroom.providers.adapter import ProviderError
from pressroom.providers.facebook.page import PageApi
from pressroom.providers.graph import graph_time

RECOVERY_WINDOW = timedelta(hours=24)
RECENT_ITEMS = "25"
# content kind -> (edge, the field holding the text)
RECENT_EDGES = {
    "post": ("published_posts", "message"),
    "video": ("videos", "description"),
    "reel": ("video_reels", "description"),
}


def same_text(left: str, right: str) -> bool:
    """Texts compared as Facebook keeps them: surrounding and repeated whitespace aside."""
    return " ".join(left.split()) == " ".join(right.split())


async def find_published(api: PageApi, kind: str, text: str, now: datetime) -> str | None:
    """The id of the Page's recent `kind` ("post", "video" or "reel") with `text`, if any."""
    if not text.strip() or kind not in RECENT_EDGES:
        return None
    edge, field = RECENT_EDGES[kind]
    try:
        body = await api.get(
            f"{api.page_id}/{edge}",
            "looking for the post an earlier attempt made",
            {"fields": f"id,{field},created_time", "limit": RECENT_ITEMS},
        )
    except ProviderError as error:
        if error.retryable:
            raise
        return None
    items = body.get("data")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        created = graph_time(item.get("created_time"))
        if created is None or now - created > RECOVERY_WINDOW:
            continue
        said = item.get(field)
        if isinstance(said, str) and same_text(said, text):
            found: str = item["id"]
            return found
    return None
