"""Bluesky rich-text facets, computed on UTF-8 byte offsets.

Shapes follow https://docs.bsky.app/docs/advanced-guides/post-richtext and the lexicon
app.bsky.richtext.facet (byteSlice: byteStart inclusive, byteEnd exclusive, UTF-8 bytes)."""

from __future__ import annotations

from pressroom.providers.bluesky.facets import LINK
from pressroom.providers.bluesky.facets import MENTION
from pressroom.providers.bluesky.facets import TAG
from pressroom.providers.bluesky.facets import Span
from pressroom.providers.bluesky.facets import build_facets
from pressroom.providers.bluesky.facets import detect_spans

# 👋🏽 is two code points of 4 bytes each; each kana is 3 bytes: character offsets and byte
# offsets part ways from the first character on.
TEXT = "👋🏽 こんにちは @alice.bsky.social! Read https://example.com/path, #日本語 #2024 #go."


def test_spans_are_utf8_byte_offsets_not_character_offsets() -> None:
    assert detect_spans(TEXT) == [
        Span("mention", 25, 43, "alice.bsky.social"),
        Span("link", 50, 74, "https://example.com/path"),
        Span("tag", 76, 86, "日本語"),
        Span("tag", 93, 96, "go"),
    ]
    # Counted in characters, the same spans would start at 9, 34, 60 and 71.
    assert [TEXT.index(s) for s in ("@alice", "https:", "#日", "#go")] == [9, 34, 60, 71]


def test_each_span_covers_exactly_its_text_in_the_encoded_bytes() -> None:
    encoded = TEXT.encode()
    covered = [encoded[span.start : span.end].decode() for span in detect_spans(TEXT)]
    assert covered == ["@alice.bsky.social", "https://example.com/path", "#日本語", "#go"]


def test_link_keeps_balanced_parentheses_and_drops_an_unbalanced_closing_one() -> None:
    text = "(see https://en.wikipedia.org/wiki/Foo_(bar)) and (https://x.org/a)."
    assert [span.value for span in detect_spans(text)] == [
        "https://en.wikipedia.org/wiki/Foo_(bar)",
        "https://x.org/a",
    ]


def test_numeric_tags_keycap_emoji_and_mid_word_signs_are_not_facets() -> None:
    assert detect_spans("#2024 #️⃣ mail@example.com C# x#y") == []


def test_tag_longer_than_64_graphemes_is_not_a_facet() -> None:
    assert detect_spans("#" + "a" * 65) == []
    assert detect_spans("#" + "a" * 64) == [Span("tag", 0, 65, "a" * 64)]


async def test_facets_resolve_mentions_to_dids_and_skip_unknown_handles() -> None:
    asked: list[str] = []

    async def resolve(handle: str) -> str | None:
        asked.append(handle)
        return "did:plc:alice" if handle == "alice.bsky.social" else None

    facets = await build_facets("hi @Alice.bsky.social and @nobody.example 🌍 #x", resolve)
    assert facets == [
        {
            "index": {"byteStart": 3, "byteEnd": 21},
            "features": [{"$type": MENTION, "did": "did:plc:alice"}],
        },
        {"index": {"byteStart": 47, "byteEnd": 49}, "features": [{"$type": TAG, "tag": "x"}]},
    ]
    assert asked == ["alice.bsky.social", "nobody.example"]


async def test_link_facet_uri_is_the_full_url() -> None:
    async def resolve(handle: str) -> str | None:
        return None

    facets = await build_facets("→ https://example.com/ü?q=1!", resolve)
    assert facets == [
        {
            "index": {"byteStart": 4, "byteEnd": 30},
            "features": [{"$type": LINK, "uri": "https://example.com/ü?q=1"}],
        }
    ]
