"""Exact text length the way each network counts it.

Four units, one per family of networks:

- ``weighted``: X. twitter-text's ``parseTweet`` (config v3): NFC-normalized code points weigh 1
  in four ranges (Latin to Georgian, some spaces, quotes and dashes) and 2 elsewhere (CJK, most
  symbols); every emoji sequence Twemoji draws (ZWJ family, skin tone, flag, keycap) weighs 2
  whatever its code points; every URL X links weighs 23. The total is compared with 280.
- ``graphemes``: extended grapheme clusters (UAX #29), what Bluesky, Threads, LinkedIn,
  Instagram, Facebook, Pinterest and Mastodon call characters. With a ``url_length`` the text is
  first rewritten the way Mastodon's ``StatusLengthValidator`` does: each URL becomes
  ``url_length`` characters and each remote mention ``@user@domain`` becomes ``@user``.
- ``utf16``: UTF-16 code units (JavaScript ``String.length``), TikTok's "UTF-16 runes".
- ``bytes``: UTF-8 bytes, YouTube's description limit and Bluesky's second cap.

Links are found as each network finds them (``links.py``), and emoji as X draws them
(``emoji.py``).
"""

from __future__ import annotations

import unicodedata
from typing import Literal

import regex

from pressroom.providers.emoji import emoji_spans
from pressroom.providers.links import MAX_LABEL_LENGTH
from pressroom.providers.links import MAX_TCO_SLUG_LENGTH
from pressroom.providers.links import MAX_URL_LENGTH
from pressroom.providers.links import TLDS
from pressroom.providers.links import mastodon_countable_text
from pressroom.providers.links import mastodon_url_spans
from pressroom.providers.links import x_url_spans

__all__ = [
    "MAX_LABEL_LENGTH",
    "MAX_TCO_SLUG_LENGTH",
    "MAX_URL_LENGTH",
    "TLDS",
    "emoji_spans",
    "mastodon_url_spans",
    "x_url_spans",
]

TextUnit = Literal["weighted", "graphemes", "utf16", "bytes"]

# twitter-text config/v3.json: scale 100, defaultWeight 200, transformedURLLength 23,
# maxWeightedTweetLength 280, emojiParsingEnabled true, and the four ranges of weight 100.
WEIGHT_SCALE = 100
DEFAULT_WEIGHT = 200
LIGHT_WEIGHT = 100
LIGHT_RANGES: tuple[tuple[int, int], ...] = ((0, 4351), (8192, 8205), (8208, 8223), (8242, 8247))
TRANSFORMED_URL_LENGTH = 23
# twitter-text regexp/invalidCharsGroup.js: a Tweet holding one of these is not valid
# (parseTweet answers valid: false), however short.
X_INVALID_CHARACTERS = ("\ufffe", "\ufeff", "\uffff")

_GRAPHEME = regex.compile(r"\X")


# --- Counting ------------------------------------------------------------------------------------


def count_text(text: str, unit: TextUnit, url_length: int | None = None) -> int:
    """The length of ``text`` in ``unit``; ``url_length`` applies to weighted and grapheme units."""
    if unit == "weighted":
        return count_weighted(
            text, url_length=TRANSFORMED_URL_LENGTH if url_length is None else url_length
        )
    if unit == "graphemes":
        return count_graphemes(text, url_length)
    if unit == "utf16":
        return count_utf16(text)
    if unit == "bytes":
        return count_utf8_bytes(text)
    raise ValueError(f"unknown text unit {unit!r}")


def x_normalize(text: str) -> str:
    """The text as X counts it: NFC, with each CRLF stored as LF.

    Decision (issue 19): twitter-text counts "\\r\\n" as 2, but X's API stores a CRLF as LF and
    its composer counts it once: twitter-text issue #8 (the web counts "a\\r\\nb" as 3) and pull
    request #9 ("The Twitter API replaces \\r\\n with \\n when creating a Tweet"); the maintained
    ports followed (twitter-text-php #46/#47 in 2023, twitter-text-python #6/#7). A lone CR
    still counts 1, as in twitter-text.
    """
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n"))


def count_weighted(text: str, *, url_length: int = TRANSFORMED_URL_LENGTH) -> int:
    """X's weighted length (twitter-text's parseTweet, config v3), to compare with 280."""
    normalized = x_normalize(text)
    urls = dict(x_url_spans(normalized))
    emoji = dict(emoji_spans(normalized))
    total = 0
    index = 0
    length = len(normalized)
    while index < length:
        if index in urls:
            total += url_length * WEIGHT_SCALE
            index = urls[index]
        elif index in emoji:
            total += DEFAULT_WEIGHT
            index = emoji[index]
        else:
            total += _code_point_weight(normalized[index])
            index += 1
    return total // WEIGHT_SCALE


def x_invalid_characters(text: str) -> list[str]:
    """The characters twitter-text declares invalid that ``text`` holds, in order of appearance."""
    return sorted({c for c in text if c in X_INVALID_CHARACTERS}, key=text.index)


def count_graphemes(text: str, url_length: int | None = None) -> int:
    """Extended grapheme clusters; with ``url_length``, Mastodon's URL and mention rewriting.

    Mastodon (app/validators/status_length_validator.rb) replaces every URL it would link with
    ``url_length`` placeholder characters and every mention ``@user@domain`` with ``@user``
    before counting grapheme clusters, so neither the URL nor the remote domain costs anything.
    """
    if url_length is not None:
        text = mastodon_countable_text(text, url_length)
    if text.isascii():
        # Among ASCII characters only CR LF joins into one cluster (UAX #29, GB3): each
        # other character, control characters included, is a cluster of its own.
        return len(text) - text.count("\r\n")
    return sum(1 for _ in _GRAPHEME.finditer(text))


def count_graphemes_emoji_as_bytes(text: str) -> int:
    """Graphemes, where one holding an emoji (one Twemoji draws) counts its UTF-8 bytes.

    Threads: "Emojis are counted as the number of UTF-8 bytes" (Threads API, Posts,
    Limitations): a smiling face is 4, a family of four 25.
    """
    starts = {start for start, _ in emoji_spans(text)}
    total = 0
    for grapheme in _GRAPHEME.finditer(text):
        if any(grapheme.start() <= start < grapheme.end() for start in starts):
            total += count_utf8_bytes(grapheme.group())
        else:
            total += 1
    return total


def count_links(text: str) -> int:
    """Distinct links in ``text``, found as X finds them (with or without a scheme)."""
    normalized = unicodedata.normalize("NFC", text)
    return len({normalized[start:end] for start, end in x_url_spans(normalized)})


def count_utf16(text: str) -> int:
    """UTF-16 code units: characters outside the BMP (most emoji) count 2."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def count_utf8_bytes(text: str) -> int:
    """UTF-8 bytes: ASCII 1, most accented letters 2, CJK 3, emoji 4 per code point."""
    return len(text.encode("utf-8", "surrogatepass"))


def _code_point_weight(ch: str) -> int:
    code_point = ord(ch)
    for low, high in LIGHT_RANGES:
        if low <= code_point <= high:
            return LIGHT_WEIGHT
    return DEFAULT_WEIGHT
