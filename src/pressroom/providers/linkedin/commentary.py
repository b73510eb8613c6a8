"""Post text in LinkedIn's "little" text format.

The Posts API reads `commentary` as little text
(https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/little-text-format):
`@[Name](urn)` is a mention, `{hashtag|\\#|tag}` a hashtag template, and the reserved characters
``| { } @ [ ] ( ) < > # \\ * _ ~`` must be backslash-escaped to be read as plain text; an
unescaped one can cut the published text short. Everything a person wrote is plain text to
Pressroom, so every reserved character is escaped, with two exceptions kept as LinkedIn shows
them when typed in its own composer: links (escaping inside a URL would break it) and a `#`
that starts a hashtag (`#word` stays a clickable hashtag).
"""

from __future__ import annotations

import re

_RESERVED = re.compile(r"[|{}@\[\]()<>#\\*_~]")
_LINK = re.compile(r"https?://\S+")
_HASHTAG_START = re.compile(r"#(?=\w)")


def little_text(text: str) -> str:
    """`text` with LinkedIn's reserved characters escaped (links and hashtags kept)."""
    pieces: list[str] = []
    position = 0
    for link in _LINK.finditer(text):
        pieces.append(_escape(text[position : link.start()]))
        pieces.append(link.group(0))
        position = link.end()
    pieces.append(_escape(text[position:]))
    return "".join(pieces)


def _escape(plain: str) -> str:
    def escape(match: re.Match[str]) -> str:
        character = match.group(0)
        if character == "#" and _HASHTAG_START.match(plain, match.start()):
            return character
        return "\\" + character

    return _RESERVED.sub(escape, plain)
