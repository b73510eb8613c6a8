"""The options that hold texts: a reply such as a first comment (``text``), a thread's follow-up
texts (``textList``) and the alt texts of the target's media (``mediaTexts``)."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from pressroom.kit.errors import FieldError
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import TextRule
from pressroom.providers.validation.media import MediaFacts
from pressroom.providers.validation.media import items
from pressroom.providers.validation.text import CountedOption
from pressroom.providers.validation.text import check_text_limits
from pressroom.providers.validation.text import option_too_long


@dataclass(frozen=True)
class OptionContext:
    """What option checks need besides the option: the target's text rule and media."""

    provider: str
    who: str
    text_rule: TextRule
    media: Sequence[MediaFacts]
    counted: CountedOption | None
    # The organization's media that `mediaId` options name, by lowercase id.
    option_media: Mapping[str, MediaFacts] = field(default_factory=dict)


def check_text_option(context: OptionContext, value: object, field: str) -> list[FieldError]:
    """One text the account posts as a post of its own: held to the content kind's text rule.
    An empty string is the same as leaving the option out."""
    if value is None or value == "":
        return []
    if not isinstance(value, str):
        return [FieldError(field, "invalid_type", "must be a text")]
    if not value.strip():
        return [FieldError(field, "required", "must not be blank")]
    return check_text_limits(field, value, context.text_rule, context.provider, context.counted)


def check_text_list(
    context: OptionContext, rule: OptionRule, value: object, field: str
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
    for index, item in enumerate(value):
        where = f"{field}[{index}]"
        if not isinstance(item, str):
            errors.append(FieldError(where, "invalid_type", "must be a text"))
            continue
        if not item.strip():
            errors.append(FieldError(where, "required", "must not be empty"))
            continue
        errors += check_text_limits(
            where, item, context.text_rule, context.provider, context.counted
        )
    return errors


def check_media_texts(
    context: OptionContext, rule: OptionRule, value: object, field: str
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
                    f"has {len(value)} texts for {items(len(media))}; at most one per item",
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
    error = option_too_long(rule, value, field)
    return [] if error is None else [error]
