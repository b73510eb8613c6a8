"""The texts of a target: the main text, each text an option holds, and an option counted
together with the text (Mastodon's content warning), measured in the network's unit."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

from pressroom.kit.errors import FieldError
from pressroom.providers.schemas import ContentKind
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import TextRule
from pressroom.providers.text import TextUnit
from pressroom.providers.text import count_graphemes_emoji_as_bytes
from pressroom.providers.text import count_links
from pressroom.providers.text import count_text
from pressroom.providers.text import count_utf8_bytes

UNIT_NAMES: dict[TextUnit, tuple[str, str]] = {
    "weighted": ("weighted character", "weighted characters"),
    "graphemes": ("grapheme", "graphemes"),
    "utf16": ("UTF-16 code unit", "UTF-16 code units"),
    "bytes": ("byte", "bytes"),
}


@dataclass(frozen=True)
class CountedOption:
    """An option counted with every text of the target (Mastodon's content warning)."""

    name: str
    length: int


def rule_length(text: str, rule: TextRule) -> int:
    """``text``'s length under ``rule``, in its unit."""
    if rule.emoji_as_bytes and rule.unit == "graphemes":
        return count_graphemes_emoji_as_bytes(text)
    return count_text(text, rule.unit, rule.url_length)


def describe_length(text: str, rule: TextRule) -> tuple[int, str]:
    """``text``'s length under ``rule`` and the unit's name for messages: (312, "graphemes")."""
    length = rule_length(text, rule)
    singular, plural = UNIT_NAMES[rule.unit]
    return length, singular if length == 1 else plural


def overrun(text: str, rule: TextRule, provider: str) -> str | None:
    """Why ``text`` is too long for ``rule``, counted in the unit whose cap it passes, or None.

    A text must meet both the rule's length in its unit and, where the network states one, its
    cap in UTF-8 bytes (Bluesky: 300 graphemes and 3000 bytes).
    """
    length, unit = describe_length(text, rule)
    if length > rule.max_length:
        return f"has {length} {unit}; {provider} allows {rule.max_length}"
    if rule.max_bytes is not None:
        size = count_utf8_bytes(text)
        if size > rule.max_bytes:
            return f"has {size} bytes; {provider} allows {rule.max_bytes} bytes"
    return None


def too_many_links(text: str, rule: TextRule, provider: str) -> str | None:
    """Why ``text`` holds more links than ``rule`` allows, or None."""
    if rule.max_links is None:
        return None
    links = count_links(text)
    if links <= rule.max_links:
        return None
    return f"has {links} links; {provider} allows {rule.max_links}"


def describe_character(character: str) -> str:
    """A character for messages: quoted when visible, by code point and name when not."""
    if character.isprintable() and not character.isspace():
        return repr(character)
    name = unicodedata.name(character, "")
    if not name and unicodedata.category(character) == "Cn":
        name = "a noncharacter"
    return f"U+{ord(character):04X}" + (f" ({name})" if name else "")


def forbidden_in(text: str, forbidden: list[str] | None) -> str | None:
    """The first of the ``forbidden`` characters that ``text`` contains."""
    for character in forbidden or ():
        if character in text:
            return character
    return None


def check_text(
    provider: str, kind: ContentKind, text: str | None, has_media: bool, field: str
) -> list[FieldError]:
    """The target's own text, reported on ``field`` (``targets[1].text``)."""
    # Every network refuses an empty post; media alone is enough, and a kind that needs media
    # reports the missing media on mediaIds instead.
    if (text is None or not text.strip()) and not has_media and kind.media.min_items == 0:
        return [FieldError(field, "required", f"{provider} {kind.kind} needs text or media")]
    if not text:
        return []
    return check_text_limits(field, text, kind.text, provider)


def check_text_limits(
    field: str,
    text: str,
    rule: TextRule,
    provider: str,
    counted: CountedOption | None = None,
) -> list[FieldError]:
    """``text`` within ``rule``'s length (also with ``counted`` added to it) and characters."""
    errors = []
    length = rule_length(text, rule)
    too_long = overrun(text, rule, provider)
    if too_long is not None:
        errors.append(FieldError(field, "too_long", too_long))
    elif counted is not None and length + counted.length > rule.max_length:
        errors.append(
            FieldError(
                field,
                "too_long",
                f"with options.{counted.name}, has {length + counted.length} "
                f"{UNIT_NAMES[rule.unit][1]}; {provider} allows {rule.max_length}",
            )
        )
    links = too_many_links(text, rule, provider)
    if links is not None:
        errors.append(FieldError(field, "too_many_links", links))
    forbidden = forbidden_in(text, rule.forbidden_characters)
    if forbidden:
        errors.append(
            FieldError(
                field,
                "invalid_character",
                f"contains {describe_character(forbidden)}, which {provider} does not accept",
            )
        )
    return errors


def option_too_long(rule: OptionRule, value: str, field: str) -> FieldError | None:
    """A text option over the length its rule sets (graphemes unless it names a unit)."""
    if rule.max_length is None:
        return None
    unit = rule.unit or "graphemes"
    length = count_text(value, unit)
    if length <= rule.max_length:
        return None
    names = UNIT_NAMES[unit]
    return FieldError(
        field,
        "too_long",
        f"has {length} {names[1]}; at most {rule.max_length} {names[1]} allowed",
    )


def counted_with_text(
    rule: TextRule, rules: Sequence[OptionRule], options: Mapping[str, object]
) -> CountedOption | None:
    """The option given that counts toward the text's length, if any."""
    for option in rules:
        value = options.get(option.name)
        if option.counts_toward_text and isinstance(value, str) and value:
            # Counted as plain text: the network discounts URLs in the text only.
            plain = rule.model_copy(update={"url_length": None})
            return CountedOption(option.name, rule_length(value, plain))
    return None


def check_with_text(
    provider: str, rule: TextRule, text: str, counted: CountedOption, prefix: str
) -> list[FieldError]:
    """The text fits alone; with the counted option it must fit too."""
    length = rule_length(text, rule) + counted.length
    if length <= rule.max_length:
        return []
    names = UNIT_NAMES[rule.unit]
    return [
        FieldError(
            f"{prefix}.options.{counted.name}",
            "too_long",
            f"with the text, has {length} {names[1]}; {provider} allows {rule.max_length} "
            "for both together",
        )
    ]
