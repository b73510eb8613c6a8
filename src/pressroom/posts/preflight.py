"""preflightPost: what createPost would make of a body, without creating anything.

The checks are createPost's own (`creating.check_post`), so the two cannot disagree: the
preflight reports exactly the field errors createPost would refuse the body with, and adds what
a composer shows as the person types (each target's text counted the network's way, its media
against the network's rule). It only reads: no row, event, audit entry or idempotency record."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.auth.service import Principal
from pressroom.kit.clock import utcnow
from pressroom.kit.errors import FieldError
from pressroom.kit.errors import validation_error
from pressroom.posts.creating import check_post
from pressroom.posts.drafts import ResolvedTarget
from pressroom.posts.schemas import FieldProblem
from pressroom.posts.schemas import MediaCheck
from pressroom.posts.schemas import PostCreate
from pressroom.posts.schemas import PostPreflight
from pressroom.posts.schemas import PreflightTarget
from pressroom.posts.schemas import TargetCreate
from pressroom.posts.schemas import TextLength
from pressroom.providers.schemas import ContentKind
from pressroom.providers.text import count_links
from pressroom.providers.text import count_utf8_bytes
from pressroom.providers.validation import counted_with_text
from pressroom.providers.validation import rule_length
from pressroom.runtime import Runtime


async def preflight_post(
    session: AsyncSession, runtime: Runtime, principal: Principal, body: PostCreate
) -> PostPreflight:
    """The preflight of a createPost body for `principal`'s organization (`runtime`: taken as
    every use case takes it, for the console and the MCP server to call alike)."""
    resolved, errors = await check_post(session, principal.organization_id, body, utcnow())
    by_name = {item.draft.name: item for item in resolved}
    targets = [
        _target(body, f"targets[{index}]", entry, by_name.get(f"targets[{index}]"), errors)
        for index, entry in enumerate(body.targets)
    ]
    return PostPreflight(
        ok=not errors,
        detail=validation_error(errors).detail if errors else None,
        errors=_problems(errors),
        targets=targets,
    )


def _target(
    body: PostCreate,
    name: str,
    entry: TargetCreate,
    item: ResolvedTarget | None,
    errors: Sequence[FieldError],
) -> PreflightTarget:
    text = entry.text if entry.text is not None else body.text
    media = entry.media_ids if entry.media_ids is not None else body.media_ids
    own = [error for error in errors if error.field.startswith(f"{name}.")]
    kind = _content_kind(item)
    return PreflightTarget(
        field=name,
        channel_id=entry.channel_id,
        provider=item.provider if item is not None else None,
        content_kind=item.content_kind if item is not None else None,
        text=text,
        text_source="target" if entry.text is not None else "post",
        media_ids=list(media),
        media_source="target" if entry.media_ids is not None else "post",
        length=_length(kind, text or "", entry) if kind is not None else None,
        media=_media(kind, len(media), name, own) if kind is not None else None,
        ok=not own,
        errors=_problems(own),
    )


def _content_kind(item: ResolvedTarget | None) -> ContentKind | None:
    """The declaration's content kind the target was checked against, if it has one."""
    if item is None or item.declaration is None:
        return None
    return item.declaration.content_kind(item.content_kind)


def _length(kind: ContentKind, text: str, entry: TargetCreate) -> TextLength:
    rule = kind.text
    counted = counted_with_text(rule, kind.options, entry.options)
    count = rule_length(text, rule) + (counted.length if counted is not None else 0)
    return TextLength(
        count=count,
        limit=rule.max_length,
        unit=rule.unit,
        remaining=rule.max_length - count,
        bytes=count_utf8_bytes(text),
        max_bytes=rule.max_bytes,
        links=count_links(text) if rule.max_links is not None else None,
        max_links=rule.max_links,
    )


def _media(kind: ContentKind, count: int, name: str, errors: Sequence[FieldError]) -> MediaCheck:
    field = f"{name}.mediaIds"
    return MediaCheck(
        count=count,
        min_items=kind.media.min_items,
        max_items=kind.media.max_items,
        ok=not any(e.field == field or e.field.startswith(f"{field}[") for e in errors),
    )


def _problems(errors: Sequence[FieldError]) -> list[FieldProblem]:
    return [FieldProblem(field=e.field, code=e.code, message=e.message) for e in errors]
