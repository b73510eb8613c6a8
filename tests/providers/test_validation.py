from __future__ import annotations

from collections.abc import Mapping

import pytest

from pressroom.kit.errors import FieldError
from pressroom.providers.declarations import DECLARATIONS
from pressroom.providers.schemas import ContentKind
from pressroom.providers.schemas import MediaKind
from pressroom.providers.schemas import TextRule
from pressroom.providers.validation import MediaFacts
from pressroom.providers.validation import describe_length
from pressroom.providers.validation import validate_target

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
WAVE_MEDIUM = "\U0001f44b\U0001f3fd"
FLAG_FR = "\U0001f1eb\U0001f1f7"
GRIN = "\U0001f600"
E_ACUTE = "e\u0301"
CJK = "語"
LONG_URL = "https://example.com/articles/" + "a" * 71  # 100 characters
REMOTE_MENTION = "@alice@example.social"
PREFIX = "targets[1]"

# Pieces of text and their length in each unit, worked out by hand (not by the code under test).
PIECES: dict[str, list[tuple[str, int]]] = {
    "graphemes": [(FAMILY, 1), (WAVE_MEDIUM, 1), (FLAG_FR, 1), (E_ACUTE, 1), (CJK, 1)],
    # NFC turns e + U+0301 into U+00E9, which weighs 1; emoji sequences weigh 2.
    "weighted": [(FAMILY, 2), (WAVE_MEDIUM, 2), (FLAG_FR, 2), (E_ACUTE, 1), (CJK, 2)],
    "utf16": [(FAMILY, 11), (WAVE_MEDIUM, 4), (FLAG_FR, 4), (E_ACUTE, 2), (CJK, 1)],
    "bytes": [(FAMILY, 25), (WAVE_MEDIUM, 8), (FLAG_FR, 8), (E_ACUTE, 3), (CJK, 3)],
}
FILLER_SIZE = {"graphemes": 1, "weighted": 2, "utf16": 1, "bytes": 3}  # of CJK


def text_of_length(rule: TextRule, length: int) -> str:
    """Text of exactly ``length`` units of ``rule``: emoji, flags, combining marks, CJK, a URL."""
    pieces = list(PIECES[rule.unit])
    if rule.emoji_as_bytes:  # Threads: an emoji counts its UTF-8 bytes
        pieces = [(FAMILY, 25), (WAVE_MEDIUM, 8), (FLAG_FR, 8), (E_ACUTE, 1), (CJK, 1)]
    # A long URL costs urlLength where the network discounts it, its full length elsewhere.
    pieces.append((LONG_URL, rule.url_length or len(LONG_URL)))
    if rule.unit == "graphemes" and rule.url_length is not None:
        pieces.append((REMOTE_MENTION, len("@alice")))  # Mastodon counts @user@domain as @user
    text = " ".join(piece for piece, _ in pieces) + " "
    used = sum(size for _, size in pieces) + len(pieces)  # one space after each piece
    fillers, rest = divmod(length - used, FILLER_SIZE[rule.unit])
    return text + CJK * fillers + "a" * rest


def media(
    kind: MediaKind = "image",
    mime_type: str = "image/jpeg",
    *,
    size_bytes: int = 1000,
    width: int | None = 1000,
    height: int | None = 1000,
    duration_seconds: float | None = None,
    media_id: str = "m",
) -> MediaFacts:
    return MediaFacts(media_id, kind, mime_type, size_bytes, width, height, duration_seconds)


def video(
    *,
    mime_type: str = "video/mp4",
    width: int | None = 1080,
    height: int | None = 1920,
    duration_seconds: float | None = 10.0,
) -> MediaFacts:
    return media("video", mime_type, width=width, height=height, duration_seconds=duration_seconds)


def valid_media(content_kind: ContentKind) -> list[MediaFacts]:
    """The least media the content kind accepts, shaped to fit its rules."""
    if content_kind.media.min_items == 0:
        return []
    media_kind, rule = next(iter(content_kind.media.kinds.items()))
    width, height = 1000, 1000
    if rule.aspect_ratios is not None:
        low, high = rule.aspect_ratios
        w, h = (float(part) for part in (high if low.startswith("0:") else low).split(":"))
        width, height = round(w * 100), round(h * 100)
    duration = None
    if media_kind == "video":
        duration = rule.min_duration_seconds or 1.0
    return [
        media(
            media_kind,
            rule.mime_types[0],
            width=width,
            height=height,
            duration_seconds=duration,
            media_id=f"m{index}",
        )
        for index in range(content_kind.media.min_items)
    ]


def required_options(content_kind: ContentKind) -> dict[str, object]:
    return {option.name: "1" for option in content_kind.options if option.required}


def all_content_kinds() -> list[tuple[str, str]]:
    return [(d.id, k.kind) for d in DECLARATIONS.values() for k in d.content_kinds]


def check(
    provider_id: str,
    kind: str,
    text: str | None = "hello",
    items: list[MediaFacts] | None = None,
    options: Mapping[str, object] | None = None,
    *,
    simulated: bool = False,
) -> list[FieldError]:
    declaration = DECLARATIONS[provider_id]
    content_kind = declaration.content_kind(kind)
    if items is None:
        items = valid_media(content_kind) if content_kind is not None else []
    if options is None:
        options = required_options(content_kind) if content_kind is not None else {}
    return validate_target(declaration, kind, text, items, options, PREFIX, simulated=simulated)


def fields(errors: list[FieldError]) -> list[tuple[str, str]]:
    return [(error.field, error.code) for error in errors]


# --- text at the boundary, every network and content kind ------------------------------------


@pytest.mark.parametrize(("provider_id", "kind"), all_content_kinds())
def test_text_at_the_limit_passes_and_one_unit_more_fails(provider_id: str, kind: str) -> None:
    content_kind = DECLARATIONS[provider_id].content_kind(kind)
    assert content_kind is not None
    rule = content_kind.text
    at_limit = text_of_length(rule, rule.max_length)
    unit = describe_length(at_limit, rule)[1]

    assert check(provider_id, kind, at_limit) == []
    assert check(provider_id, kind, at_limit + "a") == [
        FieldError(
            f"{PREFIX}.text",
            "too_long",
            f"has {rule.max_length + 1} {unit}; {provider_id} allows {rule.max_length}",
        )
    ]


def test_bluesky_text_of_300_graphemes_passes_and_301_fails() -> None:
    # 300 graphemes in 2500 bytes (the lexicon's second cap, 3000 bytes, is met too).
    text = FAMILY * 50 + FLAG_FR * 50 + WAVE_MEDIUM * 50 + E_ACUTE * 50 + CJK * 100
    assert check("bluesky", "post", text) == []
    assert check("bluesky", "post", text + CJK) == [
        FieldError("targets[1].text", "too_long", "has 301 graphemes; bluesky allows 300")
    ]


def test_x_text_of_280_weighted_characters_passes_and_281_fails() -> None:
    # 100 CJK (200) + 10 families (20) + 2 spaces (2) + URL (23) + 35 ASCII (35) = 280
    text = CJK * 100 + FAMILY * 10 + " " + LONG_URL + " " + "a" * 35
    assert check("x", "post", text) == []
    assert check("x", "post", text + E_ACUTE) == [
        FieldError("targets[1].text", "too_long", "has 281 weighted characters; x allows 280")
    ]


@pytest.mark.parametrize(
    ("text", "size"),
    [
        pytest.param("\u200d" * 5000, 15000, id="5000-zwj-one-grapheme"),
        pytest.param(FAMILY * 300, 7500, id="300-family-emoji"),
        pytest.param(FAMILY * 120 + "a", 3001, id="one-byte-over"),
    ],
)
def test_bluesky_refuses_more_than_3000_bytes_within_300_graphemes(text: str, size: int) -> None:
    # app.bsky.feed.post text: maxGraphemes 300 and maxLength 3000 (bytes); both must hold, and
    # the error counts in the unit that was exceeded.
    assert check("bluesky", "post", text) == [
        FieldError("targets[1].text", "too_long", f"has {size} bytes; bluesky allows 3000 bytes")
    ]


def test_bluesky_text_of_exactly_3000_bytes_passes() -> None:
    assert check("bluesky", "post", FAMILY * 120) == []  # 120 graphemes, 3000 bytes


def test_bluesky_byte_cap_holds_for_each_thread_reply() -> None:
    errors = check("bluesky", "post", "hi", options={"thread": ["ok", FAMILY * 121]})
    assert errors == [
        FieldError(
            "targets[1].options.thread[1]", "too_long", "has 3025 bytes; bluesky allows 3000 bytes"
        )
    ]


@pytest.mark.parametrize(
    ("character", "described"),
    [
        ("\ufffe", "U+FFFE (a noncharacter)"),
        ("\ufeff", "U+FEFF (ZERO WIDTH NO-BREAK SPACE)"),
        ("\uffff", "U+FFFF (a noncharacter)"),
    ],
)
def test_x_refuses_the_characters_twitter_text_declares_invalid(
    character: str, described: str
) -> None:
    assert check("x", "post", f"hello {character}world") == [
        FieldError(
            "targets[1].text", "invalid_character", f"contains {described}, which x does not accept"
        )
    ]
    assert fields(check("x", "post", "hi", options={"thread": [f"a{character}"]})) == [
        ("targets[1].options.thread[0]", "invalid_character")
    ]


def test_threads_counts_an_emoji_as_its_utf8_bytes() -> None:
    # "Emojis are counted as the number of UTF-8 bytes" (Threads API, Posts, Limitations).
    text = GRIN * 125  # 125 graphemes, 500 bytes
    assert check("threads", "post", text) == []
    assert check("threads", "post", text + "a") == [
        FieldError("targets[1].text", "too_long", "has 501 graphemes; threads allows 500")
    ]
    assert check("threads", "post", FAMILY * 20) == []  # 20 x 25 = 500
    assert check("threads", "post", "a" * 499 + "\u00e9") == []  # not an emoji: 1 each


def test_threads_allows_at_most_5_distinct_links() -> None:
    links = [f"https://example.com/{n}" for n in range(6)]
    assert check("threads", "post", " ".join(links[:5] + links[:2])) == []
    assert check("threads", "post", "see www.facebook.com " + " ".join(links[:5])) == [
        FieldError("targets[1].text", "too_many_links", "has 6 links; threads allows 5")
    ]


def test_x_counts_a_long_url_as_23() -> None:
    assert check("x", "post", "a" * 256 + " " + LONG_URL) == []
    assert fields(check("x", "post", "a" * 257 + " " + LONG_URL)) == [
        ("targets[1].text", "too_long")
    ]


def test_mastodon_text_of_500_graphemes_with_url_and_remote_mention_passes_and_501_fails() -> None:
    # @alice (6) + space + URL (23) + space + 469 graphemes = 500
    text = REMOTE_MENTION + " " + LONG_URL + " " + FAMILY * 200 + E_ACUTE * 200 + CJK * 69
    assert check("mastodon", "post", text) == []
    assert check("mastodon", "post", text + FLAG_FR) == [
        FieldError("targets[1].text", "too_long", "has 501 graphemes; mastodon allows 500")
    ]


def test_threads_counts_a_url_in_full() -> None:
    text = "a" * 400 + LONG_URL  # 500 graphemes, no URL discount on Threads
    assert check("threads", "post", text) == []
    assert fields(check("threads", "post", text + "a")) == [("targets[1].text", "too_long")]


def test_tiktok_text_of_2200_utf16_units_passes_and_2201_fails() -> None:
    text = GRIN * 1000 + CJK * 200  # surrogate pairs count 2
    assert check("tiktok", "video", text) == []
    assert check("tiktok", "video", text + "a") == [
        FieldError("targets[1].text", "too_long", "has 2201 UTF-16 code units; tiktok allows 2200")
    ]


def test_youtube_description_of_5000_bytes_passes_and_5001_fails() -> None:
    text = CJK * 1000 + GRIN * 499 + "\u00e9" * 2  # 3000 + 1996 + 4 bytes
    assert len(text.encode()) == 5000
    assert check("youtube", "video", text) == []
    assert check("youtube", "video", text + "a") == [
        FieldError("targets[1].text", "too_long", "has 5001 bytes; youtube allows 5000")
    ]


def test_youtube_title_of_100_graphemes_passes_and_101_fails() -> None:
    title = FAMILY * 50 + E_ACUTE * 50
    assert check("youtube", "video", options={"title": title}) == []
    assert check("youtube", "video", options={"title": title + "a"}) == [
        FieldError(
            "targets[1].options.title",
            "too_long",
            "has 101 graphemes; at most 100 graphemes allowed",
        )
    ]


def test_tiktok_photo_title_of_90_utf16_units_passes_and_91_fails() -> None:
    assert check("tiktok", "photo", options={"title": GRIN * 45}) == []
    assert fields(check("tiktok", "photo", options={"title": GRIN * 45 + "a"})) == [
        ("targets[1].options.title", "too_long")
    ]


# --- text presence and characters ------------------------------------------------------------


@pytest.mark.parametrize("text", [None, "", "   \n"])
def test_missing_text_without_media_is_required(text: str | None) -> None:
    assert check("bluesky", "post", text, []) == [
        FieldError("targets[1].text", "required", "bluesky post needs text or media")
    ]


def test_missing_text_with_media_is_fine() -> None:
    assert check("bluesky", "post", None, [media()]) == []


def test_blank_text_with_media_is_still_held_to_the_limit() -> None:
    assert fields(check("bluesky", "post", " " * 301, [media()])) == [
        ("targets[1].text", "too_long")
    ]


def test_missing_text_on_a_kind_that_needs_media_reports_only_the_media() -> None:
    assert fields(check("pinterest", "pin", None, [])) == [("targets[1].mediaIds", "too_few")]


@pytest.mark.parametrize("character", ["<", ">"])
def test_youtube_description_rejects_angle_brackets(character: str) -> None:
    assert fields(check("youtube", "video", f"a {character} b")) == [
        ("targets[1].text", "invalid_character")
    ]


def test_youtube_title_rejects_angle_brackets() -> None:
    assert fields(check("youtube", "video", options={"title": "<b>hi</b>"})) == [
        ("targets[1].options.title", "invalid_character")
    ]


# --- content kind ----------------------------------------------------------------------------


def test_unknown_content_kind_names_the_field_and_lists_the_offered_kinds() -> None:
    assert check("instagram", "tweet") == [
        FieldError(
            "targets[1].contentKind",
            "unsupported_content_kind",
            "instagram has no content kind 'tweet'; it offers post, reel, story, carousel",
        )
    ]


# --- media counts and mixing -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider_id", "kind", "items", "message"),
    [
        ("pinterest", "pin", [], "pinterest pin needs at least 1 media item; got 0"),
        (
            "instagram",
            "carousel",
            [media()],
            "instagram carousel needs at least 2 media items; got 1",
        ),
        ("youtube", "short", [], "youtube short needs at least 1 media item; got 0"),
    ],
)
def test_too_few_media_is_reported_on_media_ids(
    provider_id: str, kind: str, items: list[MediaFacts], message: str
) -> None:
    assert check(provider_id, kind, "hi", items) == [
        FieldError("targets[1].mediaIds", "too_few", message)
    ]


def test_five_images_on_x_are_too_many() -> None:
    assert check("x", "post", "hi", [media()] * 5) == [
        FieldError("targets[1].mediaIds", "too_many", "x post allows at most 4 media items; got 5")
    ]


def test_two_videos_on_x_are_too_many_videos() -> None:
    assert check("x", "post", "hi", [video(), video()]) == [
        FieldError("targets[1].mediaIds", "too_many", "x post allows at most 1 video; got 2")
    ]


def test_four_images_on_x_pass() -> None:
    assert check("x", "post", "hi", [media()] * 4) == []


@pytest.mark.parametrize(
    ("provider_id", "items"),
    [
        ("x", [video(), media()]),
        ("x", [media("gif", "image/gif"), media()]),
        ("bluesky", [video(), media()]),
        ("mastodon", [video(), media("gif", "image/gif")]),
        ("sandbox", [video(), media()]),
        ("linkedin", [video(), media()]),
    ],
)
def test_video_or_gif_that_must_stand_alone_cannot_be_mixed(
    provider_id: str, items: list[MediaFacts]
) -> None:
    assert fields(check(provider_id, "post", "hi", items)) == [
        ("targets[1].mediaIds", "mixed_media")
    ]


@pytest.mark.parametrize(
    ("provider_id", "kind", "items"),
    [
        ("mastodon", "post", [media("gif", "image/gif"), media()]),
        ("instagram", "carousel", [media(width=800), video(width=1080, height=1080)]),
        ("threads", "carousel", [media(), video()]),
    ],
)
def test_kinds_that_may_be_combined_pass(
    provider_id: str, kind: str, items: list[MediaFacts]
) -> None:
    assert check(provider_id, kind, "hi", items) == []


# --- each media item -------------------------------------------------------------------------


def test_media_kind_the_content_kind_does_not_take_is_reported_on_the_item() -> None:
    assert check("instagram", "reel", "hi", [media()]) == [
        FieldError(
            "targets[1].mediaIds[0]",
            "unsupported_media_kind",
            "is an image; instagram reel accepts videos",
        )
    ]


@pytest.mark.parametrize(
    ("provider_id", "kind", "item", "accepted"),
    [
        ("tiktok", "photo", media(mime_type="image/png"), "image/jpeg, image/webp"),
        ("instagram", "post", media(mime_type="image/png", width=800), "image/jpeg"),
        ("linkedin", "post", video(mime_type="video/webm"), "video/mp4"),
    ],
)
def test_mime_type_the_network_refuses_is_reported_with_the_accepted_ones(
    provider_id: str, kind: str, item: MediaFacts, accepted: str
) -> None:
    assert check(provider_id, kind, "hi", [item]) == [
        FieldError(
            "targets[1].mediaIds[0]",
            "unsupported_media_type",
            f"is {item.mime_type}; {provider_id} {kind} accepts {accepted}",
        )
    ]


def test_bluesky_image_of_1_mb_passes_and_one_byte_more_is_too_large() -> None:
    ok = media(size_bytes=1_000_000)
    big = media(size_bytes=1_000_001, media_id="big")
    assert check("bluesky", "post", "hi", [ok, big]) == [
        FieldError(
            "targets[1].mediaIds[1]",
            "too_large",
            "is 1,000,001 bytes; bluesky post accepts images up to 1,000,000 bytes (1 MB)",
        )
    ]


def test_x_gif_over_15_mib_is_too_large() -> None:
    gif = media("gif", "image/gif", size_bytes=15 * 1024 * 1024 + 1)
    assert check("x", "post", "hi", [gif]) == [
        FieldError(
            "targets[1].mediaIds[0]",
            "too_large",
            "is 15,728,641 bytes; x post accepts GIFs up to 15,728,640 bytes (15 MiB)",
        )
    ]


@pytest.mark.parametrize(
    ("duration", "expected"),
    [
        (0.5, []),
        (140.0, []),
        (0.4, [("targets[1].mediaIds[0]", "too_short")]),
        (140.1, [("targets[1].mediaIds[0]", "too_long")]),
    ],
)
def test_x_video_lasts_half_a_second_to_140_seconds(
    duration: float, expected: list[tuple[str, str]]
) -> None:
    assert fields(check("x", "post", "hi", [video(duration_seconds=duration)])) == expected


def test_too_long_video_message_names_the_limit() -> None:
    assert check("youtube", "short", "hi", [video(duration_seconds=181)], {"title": "t"}) == [
        FieldError(
            "targets[1].mediaIds[0]",
            "too_long",
            "lasts 181 seconds; youtube short accepts videos up to 180 seconds",
        )
    ]


@pytest.mark.parametrize(
    ("width", "height", "expected"),
    [
        (1080, 1350, []),  # 4:5
        (1910, 1000, []),  # 1.91:1
        (1080, 1080, []),
        (1080, 1351, [("targets[1].mediaIds[0]", "invalid_aspect_ratio")]),
        (1911, 1000, [("targets[1].mediaIds[0]", "invalid_aspect_ratio")]),
        (1080, 1920, [("targets[1].mediaIds[0]", "invalid_aspect_ratio")]),
    ],
)
def test_instagram_post_image_is_between_4_5_and_1_91_1(
    width: int, height: int, expected: list[tuple[str, str]]
) -> None:
    item = media(width=width, height=height)
    assert fields(check("instagram", "post", "hi", [item])) == expected


def test_aspect_ratio_message_names_the_accepted_range() -> None:
    assert check("x", "post", "hi", [video(width=4000, height=1000)]) == [
        FieldError(
            "targets[1].mediaIds[0]",
            "invalid_aspect_ratio",
            "is 4000x1000 (4:1); x post accepts aspect ratios 1:3 to 3:1 (width:height)",
        )
    ]


def test_youtube_short_must_be_square_or_vertical() -> None:
    landscape = video(width=1920, height=1080)
    assert fields(check("youtube", "short", "hi", [landscape], {"title": "t"})) == [
        ("targets[1].mediaIds[0]", "invalid_aspect_ratio")
    ]
    assert check("youtube", "short", "hi", [video()], {"title": "t"}) == []


def test_unknown_dimensions_and_duration_are_not_checked() -> None:
    item = video(width=None, height=None, duration_seconds=None)
    assert check("x", "post", "hi", [item]) == []


def test_each_failing_item_names_its_own_index() -> None:
    items = [media(), media(mime_type="image/bmp"), media(), media(size_bytes=10**9)]
    assert fields(check("x", "post", "hi", items)) == [
        ("targets[1].mediaIds[1]", "unsupported_media_type"),
        ("targets[1].mediaIds[3]", "too_large"),
    ]


# --- options ---------------------------------------------------------------------------------


def test_unknown_option_is_named_by_its_key() -> None:
    assert check("x", "post", options={"pollOptions": ["a", "b"]}) == [
        FieldError(
            "targets[1].options.pollOptions",
            "unknown_option",
            "x post has no option 'pollOptions'; it accepts: replySettings, thread, "
            "firstComment, altTexts",
        )
    ]


def test_option_on_a_kind_without_options_is_unknown() -> None:
    assert check("facebook", "story", options={"langs": "en"}) == [
        FieldError(
            "targets[1].options.langs",
            "unknown_option",
            "facebook story has no option 'langs'; it accepts: none",
        )
    ]


@pytest.mark.parametrize(
    ("provider_id", "kind", "options", "expected"),
    [
        ("sandbox", "post", {"simulate": "text_rejected"}, []),
        ("sandbox", "post", {"simulate": "provider_unavailable", "failTimes": 2}, []),
        ("sandbox", "post", {"failTimes": 0}, []),
        ("sandbox", "post", {"simulate": "explode"}, [("simulate", "invalid_choice")]),
        ("sandbox", "post", {"simulate": 1}, [("simulate", "invalid_type")]),
        ("sandbox", "post", {"failTimes": -1}, [("failTimes", "too_small")]),
        ("sandbox", "post", {"failTimes": "2"}, [("failTimes", "invalid_type")]),
        ("sandbox", "post", {"failTimes": True}, [("failTimes", "invalid_type")]),
        ("sandbox", "post", {"failTimes": 1.5}, [("failTimes", "invalid_type")]),
        ("mastodon", "post", {"sensitive": "yes"}, [("sensitive", "invalid_type")]),
        ("mastodon", "post", {"visibility": "unlisted", "sensitive": True}, []),
        ("pinterest", "pin", {"boardId": 42}, [("boardId", "invalid_type")]),
        ("x", "post", {"replySettings": None}, []),
    ],
)
def test_option_values_are_type_checked(
    provider_id: str, kind: str, options: dict[str, object], expected: list[tuple[str, str]]
) -> None:
    errors = check(provider_id, kind, options=options)
    assert fields(errors) == [(f"targets[1].options.{name}", code) for name, code in expected]


@pytest.mark.parametrize("title", [None, "", "  "])
def test_youtube_title_is_required(title: str | None) -> None:
    options = {} if title is None else {"title": title}
    assert check("youtube", "video", options=options) == [
        FieldError(
            "targets[1].options.title",
            "required",
            "youtube video requires options.title",
        )
    ]


def test_pinterest_board_is_optional_the_channels_default_board_takes_the_pin() -> None:
    assert fields(check("pinterest", "pin", options={})) == []


def test_simulation_options_are_unknown_on_a_real_channel() -> None:
    assert fields(check("x", "post", options={"simulate": "auth_expired"})) == [
        ("targets[1].options.simulate", "unknown_option")
    ]


def test_simulated_channel_accepts_the_simulation_options_besides_its_own() -> None:
    options: dict[str, object] = {"simulate": "auth_expired", "replySettings": "following"}
    assert check("x", "post", options=options, simulated=True) == []


def test_simulated_channel_is_still_held_to_its_networks_rules() -> None:
    errors = check("x", "post", "a" * 281, options={"failTimes": -2}, simulated=True)
    assert fields(errors) == [
        ("targets[1].text", "too_long"),
        ("targets[1].options.failTimes", "too_small"),
    ]


# --- everything at once ----------------------------------------------------------------------


def test_every_violation_is_reported_with_its_own_field() -> None:
    errors = validate_target(
        DECLARATIONS["x"],
        "post",
        "a" * 300,
        [video(duration_seconds=200), media(mime_type="image/tiff")],
        {"replySettings": "everyone", "colour": "red"},
        "targets[4]",
    )
    assert fields(errors) == [
        ("targets[4].text", "too_long"),
        ("targets[4].mediaIds", "mixed_media"),
        ("targets[4].mediaIds[0]", "too_long"),
        ("targets[4].mediaIds[1]", "unsupported_media_type"),
        ("targets[4].options.replySettings", "invalid_choice"),
        ("targets[4].options.colour", "unknown_option"),
    ]


@pytest.mark.parametrize(
    ("rule", "text", "expected"),
    [
        (TextRule(max_length=300, unit="graphemes"), FAMILY * 2, (2, "graphemes")),
        (TextRule(max_length=300, unit="graphemes"), FAMILY, (1, "grapheme")),
        (
            TextRule(max_length=280, unit="weighted", url_length=23),
            LONG_URL,
            (23, "weighted characters"),
        ),
        (TextRule(max_length=2200, unit="utf16"), GRIN, (2, "UTF-16 code units")),
        (TextRule(max_length=5000, unit="bytes"), CJK, (3, "bytes")),
    ],
)
def test_describe_length_names_the_unit(
    rule: TextRule, text: str, expected: tuple[int, str]
) -> None:
    assert describe_length(text, rule) == expected
