"""A published media's insights, in the canonical metric keys.

Instagram Media Insights (https://developers.facebook.com/docs/instagram-platform/reference/instagram-media/insights):
`GET /{ig-media-id}/insights?metric=...` -> `{"data": [{"name", "period", "values": [{"value"}]}]}`
(or a `total_value: {"value"}`). Which metrics a media answers depends on its
`media_product_type` (read first with `GET /{ig-media-id}?fields=media_product_type`): a feed
post or carousel (FEED) and a reel (REELS) give `reach`, `views`, `likes`, `comments`, `saved`
and `shares`; a story gives `reach`, `views` and `shares` (its `replies` are direct messages, not
comments). `impressions` and `plays` were retired in v22.0 in favour of `views`. Asking for a
metric the media type does not support fails the whole call, hence the per-type lists.

A story seen by fewer than five accounts answers code 10 "Not enough viewers for the media to
show insights": that is no metrics yet, not a refusal. Data can lag up to 48 hours.
"""

from __future__ import annotations

from typing import Any

from pressroom.providers.http import response_json
from pressroom.providers.instagram.errors import classify
from pressroom.providers.instagram.errors import graph_error
from pressroom.providers.instagram.session import InstagramSession

_INTERACTIONS = ("reach", "views", "likes", "comments", "saved", "shares")
METRICS_BY_PRODUCT = {
    "FEED": _INTERACTIONS,
    "REELS": _INTERACTIONS,
    "STORY": ("reach", "views", "shares"),
}
# Instagram's name -> the canonical key; the others are the same on both sides.
CANONICAL = {"saved": "saves"}


async def media_metrics(session: InstagramSession, media_id: str) -> dict[str, int]:
    media = await session.get(media_id, "reading the media", {"fields": "media_product_type"})
    product = media.get("media_product_type")
    metrics = METRICS_BY_PRODUCT.get(str(product), METRICS_BY_PRODUCT["FEED"])
    action = "reading the media's insights"
    response = await session.send(
        "GET", f"{media_id}/insights", action, params={"metric": ",".join(metrics)}
    )
    if not response.is_success:
        error = graph_error(response)
        if error.code == 10 and "not enough viewers" in error.message.lower():
            return {}
        raise classify(response, action, (session.token,))
    return _values(response_json(response).get("data"))


def _values(data: Any) -> dict[str, int]:
    values: dict[str, int] = {}
    for entry in data if isinstance(data, list) else []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            continue
        value = _value(entry)
        if value is not None:
            values[CANONICAL.get(name, name)] = value
    return values


def _value(entry: dict[str, Any]) -> int | None:
    total = entry.get("total_value")
    if isinstance(total, dict):
        return _count(total.get("value"))
    series = entry.get("values")
    if isinstance(series, list) and series and isinstance(series[-1], dict):
        return _count(series[-1].get("value"))
    return None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
