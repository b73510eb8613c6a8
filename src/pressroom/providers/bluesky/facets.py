"""Rich-text facets for a Bluesky post: links, mentions and hashtags.

Bluesky keeps the text plain and describes decorations as facets over byte ranges of the text's
UTF-8 encoding, start inclusive, end exclusive (https://docs.bsky.app/docs/advanced-guides/post-richtext;
lexicon app.bsky.richtext.facet). Python slices by code point, so every offset found on the
string is converted to a byte offset: an emoji takes 4 bytes, a CJK character 3, and a facet
computed on characters would decorate the wrong text.

Detection follows the behaviour that page describes:

- links: `http://` and `https://` URLs at the start of the text or after whitespace or `(`;
  trailing `.,;:!?` and quotes are not part of the link, nor is a closing `)` without an opening
  one in the URL. Bare domains are left as plain text (the `uri` must be complete).
- mentions: `@handle` at the start or after whitespace or `(`, the handle in atproto handle
  syntax (https://atproto.com/specs/handle). The facet carries the account's DID, so each handle
  is resolved (com.atproto.identity.resolveHandle); one that does not resolve stays plain text.
- hashtags: `#tag` (or the full-width number sign U+FF03) at the start or after whitespace; trailing
  punctuation is dropped; a tag must hold something besides digits and punctuation (`#1` is
  not a tag) and at most 64 graphemes / 640 bytes (the lexicon's `tag` limits). The feature's
  `tag` is the text without the `#`.

Facets never overlap: when two would, the one that starts first wins.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from typing import Literal

import regex

FacetKind = Literal["link", "mention", "tag"]

LINK = "app.bsky.richtext.facet#link"
MENTION = "app.bsky.richtext.facet#mention"
TAG = "app.bsky.richtext.facet#tag"

# app.bsky.richtext.facet#tag: maxLength 640, maxGraphemes 64.
MAX_TAG_GRAPHEMES = 64
MAX_TAG_BYTES = 640
# Each distinct handle costs a resolution request; a post naming more is left partly plain.
MAX_MENTIONS = 20

_LINK = regex.compile(r"(?:^|(?<=[\s(]))(https?://[^\s]+)", regex.IGNORECASE)
_LINK_TRAILING = ".,;:!?\"'"
_HANDLE = (
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+"
    r"[a-zA-Z](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
)
_MENTION = regex.compile(r"(?:^|(?<=[\s(]))@(" + _HANDLE + r")(?![\w-])")
_TAG = regex.compile(r"(?:^|(?<=\s))[#\uFF03](\S+)")
_TRAILING_PUNCTUATION = regex.compile(r"\p{P}+$")
_TAG_SUBSTANCE = regex.compile(r"[^\d\p{P}]")
# "#" followed by U+FE0F / U+20E3 is the keycap emoji #️⃣, not a tag.
_KEYCAP = ("\ufe0f", "\u20e3")


@dataclass(frozen=True)
class Span:
    """A detected decoration: `start`/`end` are UTF-8 byte offsets into the text."""

    kind: FacetKind
    start: int
    end: int
    value: str  # link: the URI; mention: the handle (lower case); tag: without "#"


def utf8_offset(text: str, index: int) -> int:
    """The byte offset in `text`'s UTF-8 encoding of the code point at `index`."""
    return len(text[:index].encode("utf-8"))


def detect_spans(text: str) -> list[Span]:
    """Every link, mention and hashtag of `text`, by byte range, without overlaps."""
    found: list[tuple[int, int, FacetKind, str]] = []
    for match in _LINK.finditer(text):
        start, end = match.span(1)
        url = match.group(1)
        url, end = _trim_link(url, end)
        if "://" in url and len(url.split("://", 1)[1]) > 0:
            found.append((start, end, "link", url))
    for match in _MENTION.finditer(text):
        start, end = match.span(1)
        found.append((start - 1, end, "mention", match.group(1).lower()))
    for match in _TAG.finditer(text):
        tag = match.group(1)
        if tag.startswith(_KEYCAP):
            continue
        tag = _TRAILING_PUNCTUATION.sub("", tag)
        if not tag or not _TAG_SUBSTANCE.search(tag):
            continue
        if len(regex.findall(r"\X", tag)) > MAX_TAG_GRAPHEMES:
            continue
        if len(tag.encode("utf-8")) > MAX_TAG_BYTES:
            continue
        start = match.start(1) - 1
        found.append((start, start + 1 + len(tag), "tag", tag))

    spans: list[Span] = []
    last_end = -1
    for start, end, kind, value in sorted(found, key=lambda item: (item[0], -item[1])):
        if start < last_end:
            continue  # overlaps a facet that starts earlier
        spans.append(Span(kind, utf8_offset(text, start), utf8_offset(text, end), value))
        last_end = end
    return spans


def _trim_link(url: str, end: int) -> tuple[str, int]:
    while url:
        unbalanced = url[-1] == ")" and url.count("(") < url.count(")")
        if url[-1] in _LINK_TRAILING or unbalanced:
            url, end = url[:-1], end - 1
        else:
            break
    return url, end


HandleResolver = Callable[[str], Awaitable[str | None]]


async def build_facets(text: str, resolve_handle: HandleResolver) -> list[dict[str, Any]]:
    """The `facets` of an app.bsky.feed.post record for `text`. Mentions whose handle does
    not resolve to a DID are left out (the text still shows the handle)."""
    facets: list[dict[str, Any]] = []
    dids: dict[str, str | None] = {}
    for span in detect_spans(text):
        if span.kind == "link":
            feature: dict[str, Any] = {"$type": LINK, "uri": span.value}
        elif span.kind == "tag":
            feature = {"$type": TAG, "tag": span.value}
        else:
            if span.value not in dids:
                dids[span.value] = (
                    await resolve_handle(span.value) if len(dids) < MAX_MENTIONS else None
                )
            did = dids[span.value]
            if did is None:
                continue
            feature = {"$type": MENTION, "did": did}
        facets.append(
            {"index": {"byteStart": span.start, "byteEnd": span.end}, "features": [feature]}
        )
    return facets
