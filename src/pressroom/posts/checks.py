"""Request checks of createPost and updatePost that need more than the schema: labels, the
schedule, and every target against its channel, its media and its provider's declaration.

All problems of a request are collected and reported together as one 400, each naming the
field the client wrote (`tags[2]`, `scheduledAt`, `targets[1].text`, `mediaIds[0]`)."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.channels import service as channels
from pressroom.kit.errors import FieldError
from pressroom.media import service as media_service
from pressroom.posts.drafts import ResolvedTarget
from pressroom.posts.drafts import TargetDraft
from pressroom.posts.schemas import MAX_LABEL_LENGTH
from pressroom.providers.declarations import channel_declaration
from pressroom.providers.schemas import ContentKind
from pressroom.providers.validation import MediaFacts
from pressroom.providers.validation import option_media_ids
from pressroom.providers.validation import validate_target


def check_labels(name: str, values: Sequence[str], *, allow_commas: bool) -> list[FieldError]:
    errors = []
    seen: set[str] = set()
    for index, value in enumerate(values):
        where = f"{name}[{index}]"
        if not value.strip():
            errors.append(FieldError(where, "required", "must not be empty"))
        elif len(value) > MAX_LABEL_LENGTH:
            errors.append(
                FieldError(where, "too_long", f"must be at most {MAX_LABEL_LENGTH} characters")
            )
        elif not allow_commas and "," in value:
            errors.append(FieldError(where, "invalid_character", "must not contain a comma"))
        elif value in seen:
            errors.append(FieldError(where, "duplicate", f"{value!r} is listed twice"))
        seen.add(value)
    return errors


def check_schedule(
    scheduled_at: datetime | None, publish_now: bool, now: datetime
) -> list[FieldError]:
    errors = []
    if scheduled_at is not None and publish_now:
        errors.append(
            FieldError("publishNow", "conflict", "cannot be true together with a scheduledAt")
        )
    elif scheduled_at is not None and scheduled_at <= now:
        errors.append(
            FieldError(
                "scheduledAt",
                "in_the_past",
                "must be in the future; use publishNow to publish at once",
            )
        )
    return errors


async def resolve_targets(
    session: AsyncSession,
    organization_id: uuid.UUID,
    *,
    post_text: str | None,
    post_media: Sequence[uuid.UUID],
    post_media_field: str | None,
    drafts: Sequence[TargetDraft],
    errors: list[FieldError],
) -> list[ResolvedTarget]:
    """Each draft with its channel, provider and content kind; every problem is appended to
    `errors`. `post_media_field` names the post's media in errors (None: not in the request,
    so already valid)."""
    usable = await channels.usable(session, organization_id, {d.channel_id for d in drafts})
    media_ids = set(post_media)
    for draft in drafts:
        if draft.check and draft.media_override:
            media_ids.update(draft.media_override)
    assets = await media_service.get_assets(session, organization_id, list(media_ids))
    if post_media_field is not None:
        errors += _unknown_media(post_media_field, post_media, assets)

    resolved = []
    slots: set[tuple[uuid.UUID, str]] = set()
    for draft in drafts:
        channel = usable.get(draft.channel_id)
        if draft.check and channel is None:
            errors.append(
                FieldError(
                    f"{draft.name}.channelId",
                    "unknown_channel",
                    "names no connected channel of this organization",
                )
            )
            continue
        provider = channel.provider if channel is not None else draft.existing.provider  # type: ignore[union-attr]
        # The channel's own server's limits where it keeps them (a Mastodon instance's).
        declaration = channel_declaration(provider, channel.limits if channel else None)
        if declaration is None:  # a provider this version no longer knows
            errors.append(FieldError(f"{draft.name}.channelId", "unknown_provider", provider))
            continue
        kind = draft.content_kind or declaration.content_kinds[0].kind
        slot = (draft.channel_id, kind)
        if slot in slots:
            errors.append(
                FieldError(
                    f"{draft.name}.contentKind",
                    "duplicate_target",
                    f"another target already publishes a {kind} to this channel; a post "
                    "has at most one target per channel and content kind",
                )
            )
            continue
        slots.add(slot)
        resolved.append(ResolvedTarget(draft, provider, kind, channel, declaration))
        if not draft.check or channel is None:
            continue
        if draft.media_override is not None:
            errors += _unknown_media(f"{draft.name}.mediaIds", draft.media_override, assets)
        media = draft.media_override if draft.media_override is not None else post_media
        text = draft.text_override if draft.text_override is not None else post_text
        facts = [media_service.media_facts(assets[m]) for m in media if m in assets]
        errors += validate_target(
            declaration,
            kind,
            text,
            facts,
            draft.options,
            draft.name,
            simulated=channel.simulated,
            option_media=await _option_media(
                session, organization_id, declaration.content_kind(kind), draft.options
            ),
        )
    return resolved


async def _option_media(
    session: AsyncSession,
    organization_id: uuid.UUID,
    kind: ContentKind | None,
    options: Mapping[str, object],
) -> dict[str, MediaFacts]:
    """The organization's media that the target's `mediaId` options name (YouTube's
    thumbnail), by lowercase id; ids that name nothing are left out (validation says so)."""
    ids = set()
    for value in option_media_ids(kind.options if kind else [], options):
        try:
            ids.add(uuid.UUID(value))
        except ValueError:
            continue
    if not ids:
        return {}
    assets = await media_service.get_assets(session, organization_id, list(ids))
    return {str(i): media_service.media_facts(asset) for i, asset in assets.items()}


def _unknown_media(
    name: str, ids: Sequence[uuid.UUID], known: Collection[uuid.UUID]
) -> list[FieldError]:
    errors = []
    seen: set[uuid.UUID] = set()
    for index, media_id in enumerate(ids):
        if media_id not in known:
            errors.append(
                FieldError(
                    f"{name}[{index}]", "unknown_media", "names no media of this organization"
                )
            )
        elif media_id in seen:
            errors.append(FieldError(f"{name}[{index}]", "duplicate", "is listed twice"))
        seen.add(media_id)
    return errors
