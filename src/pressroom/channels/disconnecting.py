"""disconnectChannel: the channel goes, and what was waiting to be published on it fails.

Failing the targets is the posts domain's use case, and posts depend on channels (a post names
channels), so channels cannot import it: the process's composition root (`pressroom.wiring`)
hands it in as a hook on the runtime, called in the disconnect's own transaction."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.channels import service
from pressroom.channels.service import Disconnection
from pressroom.runtime import Runtime


async def disconnect_channel(
    session: AsyncSession, runtime: Runtime, organization_id: uuid.UUID, channel_id: uuid.UUID
) -> Disconnection:
    """Erase the credentials (queueing provider tokens for revocation), emit
    channel.disconnected.v1, and fail the channel's unpublished targets with
    `channel_disconnected` (each with its post.failed.v1)."""
    if not runtime.hooks.channel_gone:
        # A disconnect that left its targets waiting forever would be a silent loss.
        raise RuntimeError("no handler for disconnected channels: build the runtime with wiring")
    disconnection = await service.disconnect(
        session, runtime, organization_id=organization_id, channel_id=channel_id
    )
    channel = disconnection.channel
    message = (
        f"The {channel.provider} channel {channel.name!r} was disconnected before this target "
        "was published."
    )
    for hook in runtime.hooks.channel_gone:
        await hook(session, runtime, channel.id, message)
    return disconnection
