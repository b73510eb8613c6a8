"""Check one post target against its provider's declaration, naming each offending field.

`validate_target` (target.py) runs the checks of the target's text (text.py), its media
(media.py) and its options (options.py), among them the options that hold texts: a thread's
follow-up texts and media alt texts (text_options.py)."""

from pressroom.providers.validation.media import MediaFacts
from pressroom.providers.validation.media import option_media_ids
from pressroom.providers.validation.target import validate_target
from pressroom.providers.validation.text import counted_with_text
from pressroom.providers.validation.text import describe_length
from pressroom.providers.validation.text import overrun
from pressroom.providers.validation.text import rule_length

__all__ = [
    "MediaFacts",
    "counted_with_text",
    "describe_length",
    "option_media_ids",
    "overrun",
    "rule_length",
    "validate_target",
]
