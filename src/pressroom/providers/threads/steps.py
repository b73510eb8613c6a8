"""What one publish posts on Threads, in order: the post, its thread's follow-ups, the first
comment. Every option is read and checked here, before anything reaches Threads, so that a
malformed one never leaves a thread half published."""

from __future__ import annotations

from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.options import alt_texts
from pressroom.providers.options import first_comment
from pressroom.providers.options import thread_texts
from pressroom.providers.text import count_graphemes_emoji_as_bytes
from pressroom.providers.text import count_links
from pressroom.providers.threads.containers import Step
from pressroom.providers.threads.declaration import DECLARATION
from pressroom.providers.threads.declaration import REPLY_CONTROLS


def plan_steps(request: PublishRequest) -> list[Step]:
    reply_control = _reply_control(request.options)
    steps = [
        Step(
            index=0,
            label="the post",
            text=request.text,
            media=request.media,
            alts=tuple(alt_texts(request.options, request.media)),
            reply_control=reply_control,
        )
    ]
    for position, text in enumerate(thread_texts(request.options), start=1):
        steps.append(
            Step(
                index=position,
                label=f"thread post {position + 1}",
                text=text,
                reply_to=position - 1,
                reply_control=reply_control,
            )
        )
    comment = first_comment(request.options)
    if comment is not None:
        _check_comment(comment, request.content_kind)
        steps.append(Step(index=len(steps), label="the first comment", text=comment, reply_to=0))
    return steps


def _reply_control(options: dict[str, object]) -> str | None:
    value = options.get("replyControl")
    if value is None:
        return None
    if value not in REPLY_CONTROLS:
        raise ProviderError(
            "invalid_request", f"options.replyControl must be one of {list(REPLY_CONTROLS)}."
        )
    return str(value)


def _check_comment(comment: str, content_kind: str) -> None:
    """The first comment is a reply, held to the post's text rule. The option's declared
    length counts graphemes only (an option rule has no emoji-as-bytes counting), so Threads'
    own count is checked here, before the post goes out without its comment."""
    rule = (DECLARATION.content_kind(content_kind) or DECLARATION.content_kinds[0]).text
    length = count_graphemes_emoji_as_bytes(comment)
    if length > rule.max_length:
        raise ProviderError(
            "text_rejected",
            f"options.firstComment has {length} characters as Threads counts them (an emoji "
            f"counts its UTF-8 bytes); Threads allows {rule.max_length}.",
        )
    links = count_links(comment)
    if rule.max_links is not None and links > rule.max_links:
        raise ProviderError(
            "text_rejected",
            f"options.firstComment has {links} links; Threads allows {rule.max_links}.",
        )
