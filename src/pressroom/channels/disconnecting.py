"""disconnectChannel: the channel goes, and what was waiting to be published on it fails.

Kept apart from service.py because it spans two domains: posts depend on channels (a post
names channels), so the channel service itself must not import the post service."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.channels import service
from pressroom.channels.service import Disconnection
from pressroom.posts import service as posts
from pressroom.runtime import Runtime


async def disconnect_channel(
    session: AsyncSession, runtime: Runtime, organization_id: uuid.UUID, channel_id: uuid.UUID
) -> Disconnection:
    """Erase the credentials (queueing provider tokens for revocation), emit
    channel.disconnected.v1, and fail the channel's unpublished targets with
    `channel_disconnected` (each with its post.failed.v1)."""
    disconnection = await service.disconnect(
        session,
        notifier=runtime.notifier,
        retention_seconds=runtime.settings.webhook_retention_seconds,
        organization_id=organization_id,
        channel_id=channel_id,
    )
    channel = disconnection.channel
    await posts.fail_targets_of_channel(
        session,
        runtime,
        channel.id,
        code="channel_disconnected",
        message=f"The {channel.provider} channel {channel.name!r} was disconnected before this "
        "target was published.",
    )
    return disconnection
