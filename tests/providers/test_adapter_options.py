"""The options the real adapters read (publishing/adapters/options.py, mastodon.py, x/adapter.py)
are declared and validated: a thread's follow-up texts, alt texts, Mastodon's content warning
and language. Each wrong value is a 400 naming its own field."""

from __future__ import annotations

import pytest

from pressroom.kit.errors import FieldError
from pressroom.providers.declarations import DECLARATIONS
from tests.providers.test_validation import CJK
from tests.providers.test_validation import LONG_URL
from tests.providers.test_validation import check
from tests.providers.test_validation import fields
from tests.providers.test_validation import media

IMAGES = [media(media_id="m0"), media(media_id="m1")]


@pytest.mark.parametrize("provider_id", ["x", "bluesky", "mastodon"])
def test_a_thread_of_follow_up_texts_is_accepted(provider_id: str) -> None:
    assert check(provider_id, "post", options={"thread": ["second", "third"]}) == []


@pytest.mark.parametrize(
    ("thread", "expected"),
    [
        ("second", [("thread", "invalid_type")]),
        ({"0": "second"}, [("thread", "invalid_type")]),
        (
            [1, "", "  ", "fine"],
            [("thread[0]", "invalid_type"), ("thread[1]", "required"), ("thread[2]", "required")],
        ),
    ],
)
def test_a_malformed_thread_names_the_list_or_the_item(
    thread: object, expected: list[tuple[str, str]]
) -> None:
    errors = check("bluesky", "post", options={"thread": thread})
    assert fields(errors) == [(f"targets[1].options.{name}", code) for name, code in expected]


def test_each_follow_up_is_held_to_the_posts_own_text_rule() -> None:
    assert check("bluesky", "post", options={"thread": ["ok", "a" * 301]}) == [
        FieldError(
            "targets[1].options.thread[1]", "too_long", "has 301 graphemes; bluesky allows 300"
        )
    ]
    # X counts its weighted way: a CJK character weighs 2.
    assert fields(check("x", "post", options={"thread": [CJK * 140, CJK * 141]})) == [
        ("targets[1].options.thread[1]", "too_long")
    ]


def test_a_thread_has_at_most_24_follow_ups() -> None:
    assert check("mastodon", "post", options={"thread": ["a"] * 24}) == []
    assert fields(check("mastodon", "post", options={"thread": ["a"] * 25})) == [
        ("targets[1].options.thread", "too_many")
    ]


@pytest.mark.parametrize("provider_id", ["x", "bluesky", "mastodon"])
def test_alt_texts_in_media_order_or_by_media_id_are_accepted(provider_id: str) -> None:
    assert check(provider_id, "post", items=IMAGES, options={"altTexts": ["a cat", None]}) == []
    assert check(provider_id, "post", items=IMAGES, options={"altTexts": {"m1": "a dog"}}) == []


@pytest.mark.parametrize(
    ("alt_texts", "expected"),
    [
        (["one", "two", "three"], [("altTexts", "too_many")]),
        ([5, "fine"], [("altTexts[0]", "invalid_type")]),
        ({"m9": "who?"}, [("altTexts.m9", "unknown_media")]),
        ({"m0": None, "m1": 3}, [("altTexts.m0", "invalid_type"), ("altTexts.m1", "invalid_type")]),
        ("a cat", [("altTexts", "invalid_type")]),
    ],
)
def test_malformed_alt_texts_name_the_list_or_the_item(
    alt_texts: object, expected: list[tuple[str, str]]
) -> None:
    errors = check("bluesky", "post", items=IMAGES, options={"altTexts": alt_texts})
    assert fields(errors) == [(f"targets[1].options.{name}", code) for name, code in expected]


@pytest.mark.parametrize(
    ("provider_id", "limit"),
    [("x", 1000), ("bluesky", 1000), ("mastodon", 1500)],
)
def test_alt_text_length_is_the_networks(provider_id: str, limit: int) -> None:
    ok = {"altTexts": ["a" * limit]}
    over = {"altTexts": ["a" * (limit + 1)]}
    assert check(provider_id, "post", items=IMAGES[:1], options=ok) == []
    assert fields(check(provider_id, "post", items=IMAGES[:1], options=over)) == [
        ("targets[1].options.altTexts[0]", "too_long")
    ]


def test_mastodon_counts_the_content_warning_with_the_text() -> None:
    fits = check("mastodon", "post", "a" * 480, options={"spoilerText": "b" * 20})
    assert fits == []
    assert check("mastodon", "post", "a" * 490, options={"spoilerText": "b" * 20}) == [
        FieldError(
            "targets[1].options.spoilerText",
            "too_long",
            "with the text, has 510 graphemes; mastodon allows 500 for both together",
        )
    ]


def test_mastodon_content_warning_counts_with_every_thread_reply() -> None:
    options = {"spoilerText": "cw" * 10, "thread": ["a" * 480, "a" * 481]}
    assert fields(check("mastodon", "post", "short", options=options)) == [
        ("targets[1].options.thread[1]", "too_long")
    ]


def test_a_text_already_too_long_is_reported_once() -> None:
    errors = check("mastodon", "post", "a" * 501, options={"spoilerText": "cw"})
    assert fields(errors) == [("targets[1].text", "too_long")]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"language": "en"}, []),
        ({"language": "pt-BR"}, []),
        ({"language": "english"}, [("language", "invalid_format")]),
        ({"language": 3}, [("language", "invalid_type")]),
        ({"spoilerText": ["cw"]}, [("spoilerText", "invalid_type")]),
        ({"visibility": "followers"}, [("visibility", "invalid_choice")]),
    ],
)
def test_mastodon_status_options_are_type_checked(
    options: dict[str, object], expected: list[tuple[str, str]]
) -> None:
    errors = check("mastodon", "post", options=options)
    assert fields(errors) == [(f"targets[1].options.{name}", code) for name, code in expected]


@pytest.mark.parametrize("provider_id", ["x", "bluesky", "mastodon", "sandbox"])
def test_a_first_comment_is_declared_where_the_adapter_posts_one(provider_id: str) -> None:
    declaration = DECLARATIONS[provider_id]
    assert declaration.capabilities.first_comment is True
    for kind in declaration.content_kinds:
        [option] = [o for o in kind.options if o.name == "firstComment"]
        assert option.type == "text"
        assert "published" in option.description


# LinkedIn's adapter posts one (tests/adapters/test_linkedin_*).
@pytest.mark.parametrize("provider_id", ["youtube", "tiktok", "pinterest"])
def test_no_first_comment_is_promised_where_no_adapter_posts_one(provider_id: str) -> None:
    declaration = DECLARATIONS[provider_id]
    assert declaration.capabilities.first_comment is False
    assert all(o.name != "firstComment" for kind in declaration.content_kinds for o in kind.options)


@pytest.mark.parametrize(
    ("provider_id", "limit"), [("x", 280), ("bluesky", 300), ("mastodon", 500)]
)
def test_a_first_comment_is_held_to_the_posts_text_rule(provider_id: str, limit: int) -> None:
    assert check(provider_id, "post", options={"firstComment": "a" * limit}) == []
    unit = "weighted characters" if provider_id == "x" else "graphemes"
    assert check(provider_id, "post", options={"firstComment": "a" * (limit + 1)}) == [
        FieldError(
            "targets[1].options.firstComment",
            "too_long",
            f"has {limit + 1} {unit}; {provider_id} allows {limit}",
        )
    ]


def test_a_first_comment_counts_links_as_the_network_does() -> None:
    # X counts any URL as 23: a 100-character link leaves room for 257 more.
    comment = "a" * 256 + " " + LONG_URL
    assert check("x", "post", options={"firstComment": comment}) == []
    assert fields(check("x", "post", options={"firstComment": "a" + comment})) == [
        ("targets[1].options.firstComment", "too_long")
    ]


def test_a_mastodon_first_comment_counts_the_content_warning_it_carries() -> None:
    options = {"spoilerText": "b" * 20, "firstComment": "a" * 481}
    assert check("mastodon", "post", "short", options=options) == [
        FieldError(
            "targets[1].options.firstComment",
            "too_long",
            "with options.spoilerText, has 501 graphemes; mastodon allows 500",
        )
    ]


def test_a_bluesky_first_comment_is_held_to_3000_bytes_too() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 1 grapheme, 25 bytes
    assert fields(check("bluesky", "post", options={"firstComment": family * 121})) == [
        ("targets[1].options.firstComment", "too_long")
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", []),
        (None, []),
        ("   ", [("firstComment", "required")]),
        (5, [("firstComment", "invalid_type")]),
    ],
)
def test_a_first_comment_must_be_a_text(value: object, expected: list[tuple[str, str]]) -> None:
    errors = check("x", "post", options={"firstComment": value})
    assert fields(errors) == [(f"targets[1].options.{name}", code) for name, code in expected]
