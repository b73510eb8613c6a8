"""A channel whose account lives on a server with limits of its own (a Mastodon instance) is
validated against the declaration as that server applies it; every other channel against its
provider's stock declaration."""

from __future__ import annotations

import pytest

from pressroom.kit.errors import FieldError
from pressroom.providers.declarations import DECLARATIONS
from pressroom.providers.declarations import channel_declaration
from pressroom.providers.schemas import ContentKind
from pressroom.providers.validation import validate_target

INSTANCE = {
    "maxCharacters": 1000,
    "charactersReservedPerUrl": 30,
    "maxMediaAttachments": 8,
    "imageSizeLimit": 20_000_000,
    "videoSizeLimit": 200_000_000,
}


def mastodon_post(limits: dict[str, object] | None) -> ContentKind:
    declaration = channel_declaration("mastodon", limits)
    assert declaration is not None
    post = declaration.content_kind("post")
    assert post is not None
    return post


def test_a_mastodon_channel_is_held_to_its_instances_own_limits() -> None:
    post = mastodon_post(INSTANCE)
    assert (post.text.max_length, post.text.url_length) == (1000, 30)
    assert post.media.max_items == 8
    assert post.media.kinds["image"].max_items == 8
    assert post.media.kinds["image"].max_bytes == 20_000_000
    assert post.media.kinds["gif"].max_bytes == 20_000_000
    # A video still stands alone, whatever the instance allows.
    assert post.media.kinds["video"].max_items == 1
    assert post.media.kinds["video"].max_bytes == 200_000_000
    assert post.media.max_bytes == 200_000_000


def test_without_known_limits_the_stock_declaration_applies() -> None:
    assert channel_declaration("mastodon", None) is DECLARATIONS["mastodon"]
    assert channel_declaration("mastodon", {}) is DECLARATIONS["mastodon"]
    assert mastodon_post(None).text.max_length == 500


@pytest.mark.parametrize("value", [0, -5, "1000", None, True, 2.5])
def test_a_malformed_instance_value_keeps_the_stock_one(value: object) -> None:
    assert mastodon_post({"maxCharacters": value}).text.max_length == 500


def test_the_stock_declaration_is_not_changed_by_an_instances() -> None:
    mastodon_post(INSTANCE)
    stock = DECLARATIONS["mastodon"].content_kind("post")
    assert stock is not None
    assert (stock.text.max_length, stock.media.max_items) == (500, 4)


def test_other_providers_ignore_channel_limits() -> None:
    assert channel_declaration("bluesky", {"maxCharacters": 1000}) is DECLARATIONS["bluesky"]
    assert channel_declaration("nope", INSTANCE) is None


def test_errors_name_the_instances_limit_for_the_text_its_thread_and_first_comment() -> None:
    declaration = channel_declaration("mastodon", {"maxCharacters": 1000})
    assert declaration is not None
    options = {"thread": ["b" * 1001], "firstComment": "c" * 1001}
    errors = validate_target(declaration, "post", "a" * 1001, [], options, "targets[0]")
    assert errors == [
        FieldError("targets[0].text", "too_long", "has 1001 graphemes; mastodon allows 1000"),
        FieldError(
            "targets[0].options.thread[0]", "too_long", "has 1001 graphemes; mastodon allows 1000"
        ),
        FieldError(
            "targets[0].options.firstComment",
            "too_long",
            "has 1001 graphemes; mastodon allows 1000",
        ),
    ]
    assert validate_target(declaration, "post", "a" * 1000, [], {}, "targets[0]") == []
