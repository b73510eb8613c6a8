"""What a retried publish finds of an earlier attempt, so that it never posts twice.

Instagram takes no idempotency key, and a container, once published, cannot be told apart from a
new one by the next attempt (the ids are lost with the attempt that made them). What it offers is
the account's own media: `GET /{ig-user-id}/media?fields=id,caption,media_product_type,timestamp,
permalink` (IG User Media, newest first) and a media's comments, `GET /{ig-media-id}/comments?
fields=text,username` (Comment Moderation). A retried publish looks there for a post of the same
kind with the same caption, published within the last day, and returns it instead of publishing
again; a retried first comment looks for the same text by the same account.

Captions are compared without `@` (Instagram may leave it out of captions it returns) and with
whitespace collapsed. A post without a caption, and a story, cannot be recognised this way: a
retry after an attempt that failed once Instagram had published it can post them twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta

from pressroom.providers.graph import graph_time
from pressroom.providers.instagram.session import InstagramSession

RECENT_MEDIA = 25
RECOVERY_WINDOW = timedelta(hours=24)
PRODUCT_TYPES = {"post": "FEED", "carousel": "FEED", "reel": "REELS"}


@dataclass(frozen=True)
class PublishedMedia:
    id: str
    permalink: str | None


def recognisable(kind: str, text: str) -> bool:
    """Whether a retry could find this publish among the account's media."""
    return kind in PRODUCT_TYPES and bool(comparable(text))


def comparable(text: str) -> str:
    return " ".join(text.replace("@", "").split())


async def find_published(
    session: InstagramSession, kind: str, text: str, now: datetime
) -> PublishedMedia | None:
    """The account's post of `kind` with caption `text` from the last day, if any."""
    if not recognisable(kind, text):
        return None
    body = await session.get(
        f"{session.user_id}/media",
        "looking for the post an earlier attempt made",
        {"fields": "id,caption,media_product_type,timestamp,permalink", "limit": str(RECENT_MEDIA)},
    )
    wanted = comparable(text)
    media = body.get("data")
    for entry in media if isinstance(media, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        if entry.get("media_product_type") != PRODUCT_TYPES[kind]:
            continue
        if comparable(str(entry.get("caption") or "")) != wanted:
            continue
        published = graph_time(entry.get("timestamp"))
        if published is None or now - published > RECOVERY_WINDOW:
            continue
        permalink = entry.get("permalink")
        return PublishedMedia(entry["id"], permalink if isinstance(permalink, str) else None)
    return None


async def has_comment(session: InstagramSession, media_id: str, text: str) -> bool:
    """Whether the account already commented `text` under the media."""
    body = await session.get(
        f"{media_id}/comments",
        "looking for the first comment an earlier attempt made",
        {"fields": "text,username"},
    )
    username = session.credentials.get("username")
    comments = body.get("data")
    for comment in comments if isinstance(comments, list) else []:
        if not isinstance(comment, dict) or comment.get("text") != text:
            continue
        if not username or comment.get("username") in (None, username):
            return True
    return False
