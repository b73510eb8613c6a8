"""Emoji as X draws them (Twemoji), for X's weights and Threads' byte counts."""

from __future__ import annotations

from collections.abc import Iterable

from pressroom.providers.twemoji import SEQUENCES

# X weighs "emoji supported by twemoji" as 2 (docs.x.com, counting characters; twitter-text's
# parseTweet asks the Twemoji parser). The sequences come from the current Twemoji parser
# (twemoji.py, generated), matched longest first, which the generator checked gives the parser's
# own answers. A sequence marked "!" is an emoji only when U+FE0E (text style) does not follow.
_TEXT_STYLE = "\ufe0e"
_END = ""
_Trie = dict[str, "_Trie | int"]


def _build_trie(sequences: Iterable[str]) -> _Trie:
    root: _Trie = {}
    for entry in sequences:
        needs_emoji_style = entry.endswith("!")
        node = root
        for code in entry.rstrip("!").split("-"):
            child = node.setdefault(chr(int(code, 16)), {})
            assert isinstance(child, dict)
            node = child
        # 1: always an emoji; 2: only when no U+FE0E follows. "Always" wins.
        previous = node.get(_END)
        node[_END] = 2 if needs_emoji_style and previous in (None, 2) else 1
    return root


_EMOJI_TRIE = _build_trie(SEQUENCES)


def emoji_spans(text: str) -> list[tuple[int, int]]:
    """Start and end of each emoji X counts as one (the Twemoji parser's entities), in order."""
    spans = []
    length = len(text)
    start = 0
    while start < length:
        node = _EMOJI_TRIE.get(text[start])
        best = 0
        index = start
        while isinstance(node, dict):
            index += 1
            end = node.get(_END)
            if end == 1 or (end == 2 and (index >= length or text[index] != _TEXT_STYLE)):
                best = index
            node = node.get(text[index]) if index < length else None
        if best:
            spans.append((start, best))
            start = best
        else:
            start += 1
    return spans
