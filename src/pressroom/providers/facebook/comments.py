"""The first comment: the Page comments on its own post right after publishing it
(`options.firstComment`).

`POST /{object-id}/comments` with `message` -> `{"id"}`, as the Page with its Page token
(https://developers.facebook.com/docs/pages-api/comments-mentions; needs
`pages_manage_engagement`). The object is the post for feed and photo posts, the video for
videos and Reels.

When the post was found from an earlier attempt (recovery.py), that attempt may have commented
already: the post's comments (`GET /{object-id}/comments?fields=from,message&filter=stream`) are
read first, and the comment is posted only if the Page has not made it. If they cannot be read,
it is not posted: a missing first comment is better than a doubled one.
"""

from __future__ import annotations

from pressroom.providers.adapter import ProviderError
from pressroom.providers.facebook.page import PageApi
from pressroom.providers.facebook.page import required_value
from pressroom.providers.facebook.recovery import same_text

RECENT_COMMENTS = "50"


async def post_first_comment(
    api: PageApi, object_id: str, text: str, *, recovered: bool
) -> str | None:
    """Comment `text` on `object_id` as the Page; its comment id, or None when an earlier
    attempt's comment is (or may be) there already."""
    if recovered and await _maybe_commented(api, object_id, text):
        return None
    body = await api.post(f"{object_id}/comments", "posting the first comment", {"message": text})
    return required_value(body, "id", "posting the first comment")


async def _maybe_commented(api: PageApi, object_id: str, text: str) -> bool:
    try:
        body = await api.get(
            f"{object_id}/comments",
            "reading the post's comments",
            {"fields": "from,message", "filter": "stream", "limit": RECENT_COMMENTS},
        )
    except ProviderError:
        return True
    comments = body.get("data")
    for comment in comments if isinstance(comments, list) else []:
        if not isinstance(comment, dict):
            continue
        author = comment.get("from")
        message = comment.get("message")
        if (
            isinstance(author, dict)
            and author.get("id") == api.page_id
            and isinstance(message, str)
            and same_text(message, text)
        ):
            return True
    return False
