"""Check one post target against its provider's declaration: its text, then its media, then
its options, then an option counted with the text, in the order clients see the errors."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence

from pressroom.kit.errors import FieldError
from pressroom.providers.declarations import SIMULATION_OPTIONS
from pressroom.providers.schemas import ProviderDeclaration
from pressroom.providers.validation.media import MediaFacts
from pressroom.providers.validation.media import check_media
from pressroom.providers.validation.options import check_options
from pressroom.providers.validation.text import check_text
from pressroom.providers.validation.text import check_with_text
from pressroom.providers.validation.text import counted_with_text
from pressroom.providers.validation.text_options import OptionContext


def validate_target(
    decl: ProviderDeclaration,
    content_kind: str,
    text: str | None,
    media: Sequence[MediaFacts],
    options: Mapping[str, object],
    prefix: str,
    *,
    simulated: bool = False,
    option_media: Mapping[str, MediaFacts] | None = None,
) -> list[FieldError]:
    """Every way the target breaks ``decl``; fields are named under ``prefix`` ("targets[1]").

    ``text`` and ``media`` are the target's effective text and media, in ``mediaIds`` order.
    ``simulated`` (a channel connected with --simulated) also accepts the sandbox's simulation
    options. ``option_media`` holds the organization's media that the target's ``mediaId``
    options name (`option_media_ids`), by lowercase id; an id absent from it names no media.
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
    extra = counted_with_text(kind.text, rules, options)
    errors = check_text(decl.id, kind, text, bool(media), f"{prefix}.text")
    errors += check_media(who, kind, media, prefix)
    context = OptionContext(decl.id, who, kind.text, media, extra, option_media or {})
    errors += check_options(context, rules, options, prefix)
    if extra is not None and not any(e.field == f"{prefix}.text" for e in errors):
        errors += check_with_text(decl.id, kind.text, text or "", extra, prefix)
    return errors
