"""What the declarations of every network are written with: units, media types, the media rule
builder and the option rules the real adapters share. Each network declares what it accepts in
its own `providers/<network>/declaration.py`, and every limit there names the page it comes from.

Sizes: where a network states bytes (X's "5242880 bytes", Mastodon's ``image_size_limit``, Bluesky's
lexicon ``maxSize``) the number is exact; where it only says "MB" or "GB" we read the decimal unit,
the smaller one, so that a file we accept is never one the network refuses for size.
"""

from __future__ import annotations

from pressroom.providers.schemas import MediaKind
from pressroom.providers.schemas import MediaKindRule
from pressroom.providers.schemas import MediaRule
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import TextRule
from pressroom.providers.schemas import ratio_value
from pressroom.providers.text import TextUnit

KB = 1000
MB = 1000 * KB
GB = 1000 * MB
MiB = 1024 * 1024

JPEG = "image/jpeg"
PNG = "image/png"
WEBP = "image/webp"
GIF = "image/gif"
MP4 = "video/mp4"
MOV = "video/quicktime"
WEBM = "video/webm"
PDF = "application/pdf"

MINUTE = 60.0
HOUR = 60 * MINUTE


def media_rule(
    min_items: int,
    max_items: int,
    *,
    image: MediaKindRule | None = None,
    gif: MediaKindRule | None = None,
    video: MediaKindRule | None = None,
    document: MediaKindRule | None = None,
) -> MediaRule:
    """A media rule whose summary fields are computed from its per-kind rules."""
    kinds: dict[MediaKind, MediaKindRule] = {}
    if image is not None:
        kinds["image"] = image
    if gif is not None:
        kinds["gif"] = gif
    if video is not None:
        kinds["video"] = video
    if document is not None:
        kinds["document"] = document
    rules = list(kinds.values())
    mime_types = [mime for rule in rules for mime in rule.mime_types]
    sizes = [rule.max_bytes for rule in rules]
    ratios = [rule.aspect_ratios for rule in rules]
    return MediaRule(
        min_items=min_items,
        max_items=max_items,
        mime_types=list(dict.fromkeys(mime_types)),
        max_bytes=None if not sizes or None in sizes else max(s for s in sizes if s is not None),
        max_duration_seconds=video.max_duration_seconds if video is not None else None,
        aspect_ratios=_widest(ratios),
        kinds=kinds,
    )


def _widest(ratios: list[list[str] | None]) -> list[str] | None:
    if not ratios or any(r is None for r in ratios):
        return None
    bounds = [r for r in ratios if r is not None]
    low = min((r[0] for r in bounds), key=ratio_value)
    high = max((r[1] for r in bounds), key=ratio_value)
    return [low, high]


def text_rule(max_length: int, unit: TextUnit = "graphemes", **extra: object) -> TextRule:
    return TextRule.model_validate({"max_length": max_length, "unit": unit, **extra})


# --- Options the real adapters share (providers/options.py) -------------------------------------
# A thread: follow-up texts, each published as a reply to the one before. No network limits a
# thread's length; Pressroom's own cap keeps one publish to a bounded number of calls.
MAX_THREAD_FOLLOW_UPS = 24


def thread_option() -> OptionRule:
    return OptionRule(
        name="thread",
        type="textList",
        max_items=MAX_THREAD_FOLLOW_UPS,
        description="Follow-up texts, published in order as replies under the post (a "
        "thread); each is held to the post's text rule and carries no media.",
    )


def first_comment_option(max_length: int, unit: TextUnit) -> OptionRule:
    """A comment the account posts under its own post right after publishing it (on networks
    that allow it; declared with the `first_comment` capability)."""
    return OptionRule(
        name="firstComment",
        type="string",
        max_length=max_length,
        unit=unit,
        description="A comment posted by the same account under the post once it is published "
        "(links in it are not counted against the post).",
    )


# Where the first comment is a reply the account posts under its own post (X, Bluesky,
# Mastodon): a post of its own, so the post's text rule holds it (option type `text`).
FIRST_REPLY_DESCRIPTION = (
    "A reply the account posts under its own post right after publishing it (after the "
    "thread, if any, as a reply to the first post), held to the post's text rule like each "
    "text of a thread. If the post goes out but the comment is refused, the target is still "
    "`published` (the post is live and is never sent again) and its `error` says why the "
    "comment was not posted; the comment is not retried."
)


def first_reply_option() -> OptionRule:
    return OptionRule(name="firstComment", type="text", description=FIRST_REPLY_DESCRIPTION)


def alt_texts_option(max_length: int, unit: TextUnit) -> OptionRule:
    return OptionRule(
        name="altTexts",
        type="mediaTexts",
        max_length=max_length,
        unit=unit,
        description="Alternative text of the target's media: a list in media order (null or "
        "empty for none) or an object keyed by media id.",
    )
