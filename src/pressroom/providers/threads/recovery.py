"""Finding what an interrupted earlier attempt of a publish already posted.

Used on a retry (`attempt > 1`) for a step this process knows nothing about (progress.py): the
earlier attempt may have published it before it crashed or lost its answer. Threads takes no
idempotency key, so the step is looked for among what the account posted:

- the post: `GET /{threads-user-id}/threads?fields=id,text,media_type,timestamp&since=...`
  (https://developers.facebook.com/docs/threads/reference, "Retrieve a Threads user's posts"),
  the account's posts of the last `RECOVERY_WINDOW_SECONDS`, newest first: one with the same
  text (spacing aside) and the same media type is taken for the earlier attempt's.
- a reply (a thread's follow-up, the first comment), only under a post an earlier attempt made:
  `GET /{threads-media-id}/replies?fields=id,text,is_reply_owned_by_me`
  (.../retrieve-and-manage-replies/replies-and-conversations), the post's direct replies: the
  account's own with the same text.

Only the first page of each is read. A lookup Threads refuses fails the publish (retryable or
not, as classified) rather than risk posting twice.
"""

from __future__ import annotations

from typing import Any

from pressroom.providers.threads.containers import POST_MEDIA_TYPES
from pressroom.providers.threads.containers import Step
from pressroom.providers.threads.session import DAY
from pressroom.providers.threads.session import ThreadsSession

# How far back an earlier attempt's post is looked for: retries of a publish come within hours
# (the publisher caps a wait at one hour), and Threads keeps a container 24 hours at most.
RECOVERY_WINDOW_SECONDS = DAY
RECENT_POSTS = 25
_ACTION = "looking for what an earlier attempt published"


def same_text(left: str, right: str) -> bool:
    return " ".join(left.split()) == " ".join(right.split())


async def find_published_post(session: ThreadsSession, step: Step) -> str | None:
    body = await session.call(
        "GET",
        f"/{session.user_id}/threads",
        _ACTION,
        params={
            "fields": "id,text,media_type,timestamp",
            "since": str(int(session.clock() - RECOVERY_WINDOW_SECONDS)),
            "limit": str(RECENT_POSTS),
        },
    )
    media_type = POST_MEDIA_TYPES[step.media_type]
    for post in _entries(body):
        if post.get("media_type") == media_type and same_text(_text(post), step.text):
            return str(post["id"])
    return None


async def find_published_reply(session: ThreadsSession, parent_id: str, step: Step) -> str | None:
    body = await session.call(
        "GET",
        f"/{parent_id}/replies",
        _ACTION,
        params={"fields": "id,text,is_reply_owned_by_me"},
    )
    for reply in _entries(body):
        if reply.get("is_reply_owned_by_me") is True and same_text(_text(reply), step.text):
            return str(reply["id"])
    return None


def _entries(body: dict[str, Any]) -> list[dict[str, Any]]:
    data = body.get("data")
    entries = data if isinstance(data, list) else []
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str | int)]


def _text(entry: dict[str, Any]) -> str:
    text = entry.get("text")
    return text if isinstance(text, str) else ""
