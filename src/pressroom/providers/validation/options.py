"""The options of a target against the option rules of its content kind: unknown names,
each value's type and limits, and the options it requires."""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Sequence

from pressroom.kit.errors import FieldError
from pressroom.providers.schemas import OptionRule
from pressroom.providers.validation.media import check_media_option
from pressroom.providers.validation.text import describe_character
from pressroom.providers.validation.text import forbidden_in
from pressroom.providers.validation.text import option_too_long
from pressroom.providers.validation.text_options import OptionContext
from pressroom.providers.validation.text_options import check_media_texts
from pressroom.providers.validation.text_options import check_text_list
from pressroom.providers.validation.text_options import check_text_option


def check_options(
    context: OptionContext,
    rules: Sequence[OptionRule],
    options: Mapping[str, object],
    prefix: str,
) -> list[FieldError]:
    """Each option given, then each required one missing, named ``{prefix}.options.<name>``."""
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
        if rule.type == "text":
            errors += check_text_option(context, value, field)
            continue
        if rule.type == "textList":
            errors += check_text_list(context, rule, value, field)
            continue
        if rule.type == "mediaTexts":
            errors += check_media_texts(context, rule, value, field)
            continue
        if rule.type == "mediaId":
            errors += check_media_option(who, rule, value, field, context.option_media)
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
    too_long = option_too_long(rule, value, field)
    if too_long is not None:
        return too_long
    forbidden = forbidden_in(value, rule.forbidden_characters)
    if forbidden:
        return FieldError(
            field, "invalid_character", f"must not contain {describe_character(forbidden)}"
        )
    if rule.pattern is not None and value and re.fullmatch(rule.pattern, value) is None:
        return FieldError(field, "invalid_format", f"must match {rule.pattern}")
    return None
