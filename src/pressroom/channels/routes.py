"""GET /channels, GET /channels/{channelId}, DELETE /channels/{channelId}."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter
from fastapi import Path

from pressroom.channels import service
from pressroom.channels.disconnecting import disconnect_channel as disconnect
from pressroom.channels.schemas import Channel
from pressroom.channels.schemas import DeletedChannel
from pressroom.http.access import ChannelsRead
from pressroom.http.access import ChannelsWrite
from pressroom.http.routing import Audit
from pressroom.http.routing import PressroomRoute
from pressroom.http.routing import RuntimeDep
from pressroom.http.routing import Session
from pressroom.kit.pagination import Collection
from pressroom.kit.pagination import Pagination

ChannelId = Annotated[uuid.UUID, Path(alias="channelId", description="The channel's id.")]

_DISCONNECT_DESCRIPTION = """\
Scope `channels:write`. Disconnect the channel: it leaves the collection and answers 404 from
now on, and its unpublished targets fail with error code `channel_disconnected` (each emitting
`post.failed.v1`; a publish already in flight finishes and records what the provider answered).
Emits `channel.disconnected.v1`.

Credentials: the stored credentials are erased from the channel and, for a real (not simulated)
Bluesky, Mastodon or X channel, moved in the same transaction, still encrypted, to a revocation
queue. A background worker then revokes them at the provider, after the answer (the request
never waits for the network): X, `POST https://api.x.com/2/oauth2/revoke` of the refresh token
and of the access token (with the deployment's X app); Mastodon, `POST {instance}/oauth/revoke`
with the app's client id and secret, for channels connected through OAuth (a token given on the
command line was created by the account's owner, who alone can revoke it, in the instance's
Preferences > Development, where it was made); Bluesky, `com.atproto.server.deleteSession` with the
session's refresh token, which ends Pressroom's session (the app password itself can only be
revoked by the account's owner, in Bluesky's Settings > Privacy and security > App passwords).
A revocation the provider could not take (unreachable, 5xx, rate limited) is retried with
growing pauses, 5 attempts over about an hour, then given up; a queued revocation survives a
restart. The sandbox and simulated channels hold no provider tokens: nothing is queued.
"""

router = APIRouter(prefix="/api/v1", route_class=PressroomRoute, tags=["Channels"])


@router.get(
    "/channels",
    operation_id="listChannels",
    description="Scope `channels:read`. Disconnected channels are not listed.",
)
async def list_channels(
    principal: ChannelsRead, session: Session, runtime: RuntimeDep, page: Pagination
) -> Collection[Channel]:
    """List the organization's connected channels, newest first."""
    return Collection[Channel].page(
        await service.list_page(session, runtime, principal.organization_id, page),
        service.to_schema,
    )


@router.get(
    "/channels/{channelId}",
    operation_id="getChannel",
    description="Scope `channels:read`. A disconnected channel, or another organization's, is 404.",
)
async def get_channel(channel_id: ChannelId, principal: ChannelsRead, session: Session) -> Channel:
    """Read a connected channel and its health."""
    return service.to_schema(await service.get(session, principal.organization_id, channel_id))


@router.delete(
    "/channels/{channelId}",
    operation_id="disconnectChannel",
    description=_DISCONNECT_DESCRIPTION,
)
async def disconnect_channel(
    channel_id: ChannelId,
    principal: ChannelsWrite,
    session: Session,
    runtime: RuntimeDep,
    audit: Audit,
) -> DeletedChannel:
    """Disconnect a channel."""
    disconnection = await disconnect(session, runtime, principal.organization_id, channel_id)
    channel = disconnection.channel
    # Not keyed "credentials": the ledger redacts any field so named, whatever its value.
    access = "erased, revocation queued" if disconnection.revocation_queued else "erased"
    audit.set(
        "channel",
        channel.id,
        {"disconnected": True, "provider": channel.provider, "providerAccess": access},
    )
    return DeletedChannel(id=channel.id)
