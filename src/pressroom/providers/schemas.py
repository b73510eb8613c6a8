"""Provider declarations on the wire (contract section 7, "Providers").

A declaration says what a network accepts so that a target can be validated before it is
scheduled: per content kind a text rule, a media rule and the provider-specific options.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

from pressroom.kit.schema import APIModel
from pressroom.providers.text import TextUnit

MediaKind = Literal["image", "gif", "video", "document"]
Connection = Literal["oauth2", "app_password", "access_token", "none"]
MetricKey = Literal[
    "impressions", "reach", "views", "likes", "comments", "shares", "saves", "clicks"
]


class DeclarationModel(APIModel):
    # Declarations are shared, module-level data: nobody may change them in place.
    model_config = ConfigDict(frozen=True)


class TextRule(DeclarationModel):
    """How long the text may be, counted the network's way."""

    max_length: int
    unit: TextUnit
    # Each URL counts this many units whatever its real length (X and Mastodon: 23).
    url_length: int | None = None
    # A second cap in UTF-8 bytes that the text must meet as well (Bluesky: 3000).
    max_bytes: int | None = None
    # Graphemes, but an emoji counts as many as its UTF-8 bytes (Threads).
    emoji_as_bytes: bool = False
    # The most distinct links the text may hold (Threads: 5).
    max_links: int | None = None
    # Characters the network refuses outright (YouTube: "<" and ">"; X: U+FFFE, U+FEFF, U+FFFF).
    forbidden_characters: list[str] | None = None


class MediaKindRule(DeclarationModel):
    """What one kind of media (image, GIF, video or document) must satisfy on one content
    kind."""

    max_items: int
    mime_types: list[str]
    max_bytes: int | None = None
    min_duration_seconds: float | None = None
    max_duration_seconds: float | None = None
    # [min, max] width:height, inclusive, e.g. ["4:5", "1.91:1"]; null: any shape.
    aspect_ratios: list[str] | None = None
    # Must be the only kind of media on the target (X: a video or a GIF stands alone).
    exclusive: bool = False
    # Documents: the most pages (LinkedIn: 300).
    max_pages: int | None = None


def ratio_value(ratio: str) -> float:
    """An aspect ratio "W:H" as width over height: "1.91:1" is 1.91, "4:5" is 0.8."""
    width, height = ratio.split(":")
    return float(width) / float(height)


class MediaRule(DeclarationModel):
    """The media a content kind takes.

    ``minItems``/``maxItems`` bound the whole list. ``mimeTypes``, ``maxBytes``,
    ``maxDurationSeconds`` and ``aspectRatios`` summarise ``kinds`` (the union of types, the
    largest size, the longest video, the widest ratio range); ``kinds`` holds the exact rule for
    each kind of media, and a kind that is absent is not accepted.
    """

    min_items: int
    max_items: int
    mime_types: list[str]
    max_bytes: int | None
    max_duration_seconds: float | None
    aspect_ratios: list[str] | None
    kinds: dict[MediaKind, MediaKindRule]


OptionType = Literal[
    "string", "integer", "boolean", "enum", "text", "textList", "mediaTexts", "mediaId"
]


class OptionRule(DeclarationModel):
    """One provider-specific key a target may set in ``options``.

    Types: ``string``, ``integer``, ``boolean``, ``enum`` (one of ``values``); ``text``, a
    non-empty text held to the content kind's text rule, counted the network's way (a reply the
    account posts, such as a first comment on X, Bluesky and Mastodon); ``textList``, a
    list of at most ``maxItems`` non-empty texts, each held to the content kind's text rule
    (a thread's follow-up posts); ``mediaTexts``, one text per media item of the target (alt
    texts), either a list in media order (``null`` or ``""`` for none) or an object keyed by
    media id, each at most ``maxLength`` in ``unit``; ``mediaId``, the id of one media item of
    the organization's library (not one of the target's media) that meets ``media``, the rule of
    each kind of media it may be (YouTube's custom thumbnail).
    """

    name: str
    type: OptionType
    description: str
    required: bool = False
    # enum: the accepted values.
    values: list[str] | None = None
    # string and mediaTexts: the longest accepted value, counted in ``unit``.
    max_length: int | None = None
    unit: TextUnit | None = None
    forbidden_characters: list[str] | None = None
    # string: a regular expression the whole value must match.
    pattern: str | None = None
    # string: counted together with the target's text (and each of its thread's texts) against
    # the content kind's text rule, as the network does (Mastodon's content warning).
    counts_toward_text: bool = False
    # integer: the smallest accepted value.
    minimum: int | None = None
    # textList: the most items.
    max_items: int | None = None
    # mediaId: what the named media item must be, per kind; a kind that is absent is refused.
    media: dict[MediaKind, MediaKindRule] | None = None


class ContentKind(DeclarationModel):
    kind: str
    text: TextRule
    media: MediaRule
    options: list[OptionRule] = []


class Capabilities(DeclarationModel):
    threads: bool
    first_comment: bool
    delete: bool
    metrics: bool


class ProviderDeclaration(DeclarationModel):
    id: str
    name: str
    configured: bool
    connection: Connection
    content_kinds: list[ContentKind]
    capabilities: Capabilities
    metrics: list[MetricKey]

    def content_kind(self, kind: str) -> ContentKind | None:
        for content_kind in self.content_kinds:
            if content_kind.kind == kind:
                return content_kind
        return None
