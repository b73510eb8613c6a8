"""The video resource a publish sends to videos.insert, from the target's text and options
(https://developers.google.com/youtube/v3/docs/videos#resource).

- `snippet.title` <- `options.title` (required; at most 100 characters, no `<` or `>`).
- `snippet.description` <- the target's text (at most 5000 bytes, no `<` or `>`).
- `snippet.tags` <- `options.tags`: "The property value has a maximum length of 500 characters",
  where the commas between tags count, and a tag holding a space counts its two quotation marks.
- `snippet.categoryId` <- `options.categoryId` (a videoCategories id such as "22").
- `status.privacyStatus` <- `options.privacyStatus` (public, unlisted, private; public when
  absent). A project not audited by YouTube may only upload private videos: YouTube then locks
  the video private whatever is asked (docs/videos/insert).
- `status.selfDeclaredMadeForKids` <- `options.madeForKids`, sent only when given: without it
  YouTube applies the channel's default audience setting.

Shorts: the API has no field for them. YouTube makes a Short of an upload that is square or
vertical and at most three minutes long; the `short` content kind is held to exactly that by
its declaration, and its result URL is the `/shorts/` one.
"""

from __future__ import annotations

from typing import Any

from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest

MAX_TITLE = 100
MAX_TAGS_LENGTH = 500
PRIVACY_STATUSES = frozenset({"public", "unlisted", "private"})
_FORBIDDEN = ("<", ">")


def video_resource(request: PublishRequest) -> dict[str, Any]:
    options = request.options
    snippet: dict[str, Any] = {"title": _title(options.get("title")), "description": request.text}
    tags = _tags(options.get("tags"))
    if tags:
        snippet["tags"] = tags
    category = options.get("categoryId")
    if category is not None:
        if not isinstance(category, str) or not category.isdigit():
            raise ProviderError("invalid_request", "options.categoryId must be a numeric id.")
        snippet["categoryId"] = category
    privacy = options.get("privacyStatus") or "public"
    if privacy not in PRIVACY_STATUSES:
        raise ProviderError(
            "invalid_request", f"options.privacyStatus must be one of {sorted(PRIVACY_STATUSES)}."
        )
    status: dict[str, Any] = {"privacyStatus": privacy}
    made_for_kids = options.get("madeForKids")
    if made_for_kids is not None:
        if not isinstance(made_for_kids, bool):
            raise ProviderError("invalid_request", "options.madeForKids must be true or false.")
        status["selfDeclaredMadeForKids"] = made_for_kids
    return {"snippet": snippet, "status": status}


def _title(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ProviderError("invalid_request", "options.title is required for a YouTube video.")
    if len(value) > MAX_TITLE or any(c in value for c in _FORBIDDEN):
        raise ProviderError(
            "text_rejected",
            f"options.title must have at most {MAX_TITLE} characters and no '<' or '>'.",
        )
    return value


def _tags(value: object) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) and t.strip() for t in value):
        raise ProviderError("invalid_request", "options.tags must be a list of non-empty texts.")
    if tags_length(value) > MAX_TAGS_LENGTH:
        raise ProviderError(
            "text_rejected",
            f"options.tags count {tags_length(value)} characters; YouTube allows "
            f"{MAX_TAGS_LENGTH} (a comma between tags counts, and the quotes around a tag "
            "with a space).",
        )
    return list(value)


def tags_length(tags: list[str]) -> int:
    """The tags' length as YouTube counts it against its 500 characters."""
    quoted = sum(len(tag) + (2 if " " in tag else 0) for tag in tags)
    return quoted + max(len(tags) - 1, 0)
