"""Check one post target against its provider's declaration, naming each offending field."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pressroom.kit.errors import FieldError
from pressroom.providers.declarations import SIMULATION_OPTIONS
from pressroom.providers.schemas import (
    ContentKind,
    MediaKind,
    MediaKindRule,
    OptionRule,
    ProviderDeclaration,
    TextRule,
    ratio_value,
)
from pressroom.providers.text import (
    TextUnit,
    count_graphemes_emoji_as_bytes,
    count_links,
    count_text,
    count_utf8_bytes,
)

UNIT_NAMES: dict[TextUnit, tuple[str, str]] = {
    "weighted": ("weighted character", "weighted characters"),
    "graphemes": ("grapheme", "graphemes"),
    "utf16": ("UTF-16 code unit", "UTF-16 code units"),
    "bytes": ("byte", "bytes"),
}
KIND_NAMES: dict[MediaKind, tuple[str, str]] = {
    "image": ("image", "images"),
    "gif": ("GIF", "GIFs"),
    "video": ("video", "videos"),
}
# Aspect ratios are compared exactly; this only absorbs float rounding of "W:H" strings.
_RATIO_EPSILON = 1e-9


@dataclass(frozen=True)
class MediaFacts:
    """What validation needs to know about one media asset (from the media domain's row)."""

    id: str
    kind: MediaKind
    mime_type: str
    size_bytes: int
    width: int | None = None
    height: int | None = None
    duration_seconds: float | None = None


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


def validate_target(
    decl: ProviderDeclaration,
    content_kind: str,
    text: str | None,
    media: Sequence[MediaFacts],
    options: Mapping[str, object],
    prefix: str,
    *,
    simulated: bool = False,
) -> list[FieldError]:
    """Every way the target breaks ``decl``; fields are named under ``prefix`` ("targets[1]").

    ``text`` and ``media`` are the target's effective text and media, in ``mediaIds`` order.
    ``simulated`` (a channel connected with --simulated) also accepts the sandbox's simulation
    options.
    """
    kind = decl.content_kind(content_kind)
    if kind is None:
        offered = ", ".join(k.kind for k in decl.content_kinds)
        return [
            FieldError(
                f"{prefix}.contentKind",
                "unsupported_content_kind",
                f"{decl.id} has no content kind {content_kind!r}; it offers {offered}",
            )
        ]
    who = f"{decl.id} {kind.kind}"
    rules = list(kind.options)
    if simulated and decl.id != "sandbox":
        rules += SIMULATION_OPTIONS
    extra = _counted_with_text(kind.text, rules, options)
    errors = _check_text(decl, kind, text, media, prefix)
    errors += _check_media(who, kind, media, prefix)
    context = _OptionContext(decl.id, who, kind.text, media, extra)
    errors += _check_options(context, rules, options, prefix)
    if extra is not None and not any(e.field == f"{prefix}.text" for e in errors):
        errors += _check_with_text(decl.id, kind.text, text or "", extra, prefix)
    return errors


@dataclass(frozen=True)
class _CountedOption:
    """An option counted with every text of the target (Mastodon's content warning)."""

    name: str
    length: int


@dataclass(frozen=True)
class _OptionContext:
    """What option checks need besides the option: the target's text rule and media."""

    provider: str
    who: str
    text_rule: TextRule
    media: Sequence[MediaFacts]
    counted: _CountedOption | None


def _counted_with_text(
    rule: TextRule, rules: Sequence[OptionRule], options: Mapping[str, object]
) -> _CountedOption | None:
    for option in rules:
        value = options.get(option.name)
        if option.counts_toward_text and isinstance(value, str) and value:
            # Counted as plain text: the network discounts URLs in the text only.
            plain = rule.model_copy(update={"url_length": None})
            return _CountedOption(option.name, rule_length(value, plain))
    return None


def _check_with_text(
    provider: str, rule: TextRule, text: str, counted: _CountedOption, prefix: str
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


def _check_text(
    decl: ProviderDeclaration,
    kind: ContentKind,
    text: str | None,
    media: Sequence[MediaFacts],
    prefix: str,
) -> list[FieldError]:
    field = f"{prefix}.text"
    # Every network refuses an empty post; media alone is enough, and a kind that needs media
    # reports the missing media on mediaIds instead.
    if (text is None or not text.strip()) and not media and kind.media.min_items == 0:
        return [FieldError(field, "required", f"{decl.id} {kind.kind} needs text or media")]
    if not text:
        return []
    errors = []
    too_long = overrun(text, kind.text, decl.id)
    if too_long is not None:
        errors.append(FieldError(field, "too_long", too_long))
    links = too_many_links(text, kind.text, decl.id)
    if links is not None:
        errors.append(FieldError(field, "too_many_links", links))
    forbidden = _forbidden_in(text, kind.text.forbidden_characters)
    if forbidden:
        errors.append(
            FieldError(
                field,
                "invalid_character",
                f"contains {describe_character(forbidden)}, which {decl.id} does not accept",
            )
        )
    return errors


def _check_media(
    who: str, kind: ContentKind, media: Sequence[MediaFacts], prefix: str
) -> list[FieldError]:
    rule = kind.media
    field = f"{prefix}.mediaIds"
    errors = []
    if len(media) < rule.min_items:
        errors.append(
            FieldError(
                field,
                "too_few",
                f"{who} needs at least {_items(rule.min_items)}; got {len(media)}",
            )
        )
    if len(media) > rule.max_items:
        errors.append(
            FieldError(
                field,
                "too_many",
                f"{who} allows at most {_items(rule.max_items)}; got {len(media)}",
            )
        )
    # Media of kinds the content kind does not take are reported on each item below.
    counts = Counter(item.kind for item in media if item.kind in rule.kinds)
    for media_kind, count in counts.items():
        limit = rule.kinds[media_kind].max_items
        # Over the overall maximum is already reported; say it once.
        if count > limit and limit < rule.max_items:
            errors.append(
                FieldError(
                    field,
                    "too_many",
                    f"{who} allows at most {_count(limit, media_kind)}; got {count}",
                )
            )
    exclusive = [k for k in counts if rule.kinds[k].exclusive]
    if exclusive and len(counts) > 1:
        errors.append(
            FieldError(
                field,
                "mixed_media",
                f"{who} cannot combine {_article(exclusive[0])} with other media",
            )
        )
    for index, item in enumerate(media):
        errors += _check_item(who, kind, item, f"{field}[{index}]")
    return errors


def _check_item(who: str, kind: ContentKind, item: MediaFacts, field: str) -> list[FieldError]:
    kind_rule = kind.media.kinds.get(item.kind)
    if kind_rule is None:
        accepted = " and ".join(KIND_NAMES[k][1] for k in kind.media.kinds) or "no media"
        return [
            FieldError(
                field,
                "unsupported_media_kind",
                f"is {_article(item.kind)}; {who} accepts {accepted}",
            )
        ]
    if item.mime_type not in kind_rule.mime_types:
        return [
            FieldError(
                field,
                "unsupported_media_type",
                f"is {item.mime_type}; {who} accepts {', '.join(kind_rule.mime_types)}",
            )
        ]
    errors = []
    plural = KIND_NAMES[item.kind][1]
    if kind_rule.max_bytes is not None and item.size_bytes > kind_rule.max_bytes:
        errors.append(
            FieldError(
                field,
                "too_large",
                f"is {item.size_bytes:,} bytes; {who} accepts {plural} up to "
                f"{kind_rule.max_bytes:,} bytes ({_human_size(kind_rule.max_bytes)})",
            )
        )
    errors += _check_duration(who, kind_rule, item, field)
    errors += _check_aspect_ratio(who, kind_rule, item, field)
    return errors


def _check_duration(
    who: str, kind_rule: MediaKindRule, item: MediaFacts, field: str
) -> list[FieldError]:
    duration = item.duration_seconds
    if duration is None:
        return []
    plural = KIND_NAMES[item.kind][1]
    longest, shortest = kind_rule.max_duration_seconds, kind_rule.min_duration_seconds
    if longest is not None and duration > longest:
        return [
            FieldError(
                field,
                "too_long",
                f"lasts {duration:g} seconds; {who} accepts {plural} up to {longest:g} seconds",
            )
        ]
    if shortest is not None and duration < shortest:
        return [
            FieldError(
                field,
                "too_short",
                f"lasts {duration:g} seconds; {who} accepts {plural} of at least "
                f"{shortest:g} seconds",
            )
        ]
    return []


def _check_aspect_ratio(
    who: str, kind_rule: MediaKindRule, item: MediaFacts, field: str
) -> list[FieldError]:
    bounds = kind_rule.aspect_ratios
    if bounds is None or not item.width or not item.height:
        return []
    ratio = item.width / item.height
    low, high = ratio_value(bounds[0]), ratio_value(bounds[1])
    if low - _RATIO_EPSILON <= ratio <= high + _RATIO_EPSILON:
        return []
    allowed = f"exactly {bounds[0]}" if low == high else f"{bounds[0]} to {bounds[1]}"
    return [
        FieldError(
            field,
            "invalid_aspect_ratio",
            f"is {item.width}x{item.height} ({ratio:.3g}:1); {who} accepts aspect ratios "
            f"{allowed} (width:height)",
        )
    ]


def _check_options(
    context: _OptionContext,
    rules: Sequence[OptionRule],
    options: Mapping[str, object],
    prefix: str,
) -> list[FieldError]:
    who = context.who
    by_name = {rule.name: rule for rule in rules}
    errors = []
    for name, value in options.items():
        field = f"{prefix}.options.{name}"
        rule = by_name.get(name)
        if rule is None:
            known = ", ".join(by_name) if by_name else "none"
            errors.append(
                FieldError(
                    field, "unknown_option", f"{who} has no option {name!r}; it accepts: {known}"
                )
            )
            continue
        if rule.type == "textList":
            errors += _check_text_list(context, rule, value, field)
            continue
        if rule.type == "mediaTexts":
            errors += _check_media_texts(context, rule, value, field)
            continue
        error = _check_option_value(rule, value, field)
        if error is not None:
            errors.append(error)
    for rule in rules:
        value = options.get(rule.name)
        if rule.required and (value is None or (isinstance(value, str) and not value.strip())):
            errors.append(
                FieldError(
                    f"{prefix}.options.{rule.name}",
                    "required",
                    f"{who} requires options.{rule.name}",
                )
            )
    return errors


def _check_option_value(rule: OptionRule, value: object, field: str) -> FieldError | None:
    if value is None:
        return None  # an explicit null is the same as leaving the option out
    if rule.type == "boolean":
        if not isinstance(value, bool):
            return FieldError(field, "invalid_type", "must be true or false")
        return None
    if rule.type == "integer":
        # bool is an int in Python; JSON true is not a number.
        if not isinstance(value, int) or isinstance(value, bool):
            return FieldError(field, "invalid_type", "must be an integer")
        if rule.minimum is not None and value < rule.minimum:
            return FieldError(field, "too_small", f"must be at least {rule.minimum}")
        return None
    if not isinstance(value, str):
        return FieldError(field, "invalid_type", "must be a string")
    if rule.type == "enum":
        if rule.values is not None and value not in rule.values:
            return FieldError(field, "invalid_choice", f"must be one of {', '.join(rule.values)}")
        return None
    if rule.max_length is not None:
        unit = rule.unit or "graphemes"
        length = count_text(value, unit)
        if length > rule.max_length:
            names = UNIT_NAMES[unit]
            return FieldError(
                field,
                "too_long",
                f"has {length} {names[1]}; at most {rule.max_length} {names[1]} allowed",
            )
    forbidden = _forbidden_in(value, rule.forbidden_characters)
    if forbidden:
        return FieldError(
            field, "invalid_character", f"must not contain {describe_character(forbidden)}"
        )
    if rule.pattern is not None and value and re.fullmatch(rule.pattern, value) is None:
        return FieldError(field, "invalid_format", f"must match {rule.pattern}")
    return None


def _check_text_list(
    context: _OptionContext, rule: OptionRule, value: object, field: str
) -> list[FieldError]:
    """A thread's follow-up texts: each a non-empty text within the content kind's rule."""
    if value is None:
        return []
    if not isinstance(value, list):
        return [FieldError(field, "invalid_type", "must be a list of texts")]
    errors = []
    if rule.max_items is not None and len(value) > rule.max_items:
        errors.append(
            FieldError(
                field, "too_many", f"has {len(value)} texts; at most {rule.max_items} allowed"
            )
        )
    text_rule = context.text_rule
    for index, item in enumerate(value):
        where = f"{field}[{index}]"
        if not isinstance(item, str):
            errors.append(FieldError(where, "invalid_type", "must be a text"))
            continue
        if not item.strip():
            errors.append(FieldError(where, "required", "must not be empty"))
            continue
        length = rule_length(item, text_rule)
        counted = context.counted
        too_long = overrun(item, text_rule, context.provider)
        links = too_many_links(item, text_rule, context.provider)
        if links is not None:
            errors.append(FieldError(where, "too_many_links", links))
        if too_long is not None:
            errors.append(FieldError(where, "too_long", too_long))
        elif counted is not None and length + counted.length > text_rule.max_length:
            errors.append(
                FieldError(
                    where,
                    "too_long",
                    f"with options.{counted.name}, has {length + counted.length} "
                    f"{UNIT_NAMES[text_rule.unit][1]}; {context.provider} allows "
                    f"{text_rule.max_length}",
                )
            )
        forbidden = _forbidden_in(item, text_rule.forbidden_characters)
        if forbidden:
            errors.append(
                FieldError(
                    where,
                    "invalid_character",
                    f"contains {describe_character(forbidden)}, which {context.provider} does "
                    "not accept",
                )
            )
    return errors


def _check_media_texts(
    context: _OptionContext, rule: OptionRule, value: object, field: str
) -> list[FieldError]:
    """Alt texts: a list in media order (null or "" for none) or an object keyed by media id."""
    if value is None:
        return []
    media = context.media
    if isinstance(value, list):
        errors = []
        if len(value) > len(media):
            errors.append(
                FieldError(
                    field,
                    "too_many",
                    f"has {len(value)} texts for {_items(len(media))}; at most one per item",
                )
            )
        for index, item in enumerate(value):
            if item is not None:
                errors += _check_media_text(rule, item, f"{field}[{index}]")
        return errors
    if isinstance(value, dict):
        errors = []
        ids = {item.id for item in media}
        for key, item in value.items():
            where = f"{field}.{key}"
            if key not in ids:
                errors.append(
                    FieldError(where, "unknown_media", "names no media item of this target")
                )
                continue
            if item is None:
                errors.append(FieldError(where, "invalid_type", "must be a text"))
                continue
            errors += _check_media_text(rule, item, where)
        return errors
    return [
        FieldError(
            field,
            "invalid_type",
            "must be a list of texts in media order or an object keyed by media id",
        )
    ]


def _check_media_text(rule: OptionRule, value: object, field: str) -> list[FieldError]:
    if not isinstance(value, str):
        return [FieldError(field, "invalid_type", "must be a text")]
    if rule.max_length is not None:
        unit = rule.unit or "graphemes"
        length = count_text(value, unit)
        if length > rule.max_length:
            names = UNIT_NAMES[unit]
            return [
                FieldError(
                    field,
                    "too_long",
                    f"has {length} {names[1]}; at most {rule.max_length} {names[1]} allowed",
                )
            ]
    return []


def _forbidden_in(text: str, forbidden: list[str] | None) -> str | None:
    for character in forbidden or ():
        if character in text:
            return character
    return None


def _items(count: int) -> str:
    return f"{count} media item" if count == 1 else f"{count} media items"


def _count(count: int, media_kind: MediaKind) -> str:
    singular, plural = KIND_NAMES[media_kind]
    return f"{count} {singular if count == 1 else plural}"


def _article(media_kind: MediaKind) -> str:
    name = KIND_NAMES[media_kind][0]
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def _human_size(size: int) -> str:
    # Name a limit the way its source states it: "500 MB" (decimal) or "5 MiB" (binary).
    for name, factor in (("GB", 1000**3), ("MB", 1000**2), ("KB", 1000)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {name}"
    for name, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {name}"
    return f"{size / 1000**2:g} MB"
