"""Channels as the API shows them: never a token, always a safe health state."""

from __future__ import annotations

import uuid
from typing import Literal

from pydantic import Field

from pressroom.kit.schema import APIInput
from pressroom.kit.schema import APIModel
from pressroom.kit.schema import UTCDatetime

HealthState = Literal["healthy", "degraded", "reconnect_required"]


class ChannelHealth(APIModel):
    """Whether Pressroom can publish through the channel right now."""

    state: HealthState = Field(
        description="`healthy`: publishing works. `degraded`: the provider reported trouble; "
        "publishing is attempted and may fail. `reconnect_required`: the provider refused the "
        "channel's credentials; targets on it fail with `auth_expired` until it is connected "
        "again."
    )
    reason: str | None = Field(description="Why the state is not `healthy`; null when it is.")
    checked_at: UTCDatetime | None = Field(description="When the state was last established.")


class Channel(APIModel):
    """A connected social account."""

    id: uuid.UUID
    provider: str = Field(description="The provider id, e.g. `bluesky` or `sandbox`.")
    name: str
    handle: str | None = Field(description="The account's handle on the network, if known.")
    simulated: bool = Field(
        description="Connected with `--simulated`: validated by its provider's real "
        "declaration, published by the sandbox simulator (for staging and demos)."
    )
    health: ChannelHealth
    connected_at: UTCDatetime
    created_at: UTCDatetime
    updated_at: UTCDatetime


class DeletedChannel(APIModel):
    """The answer to a disconnect: the channel is gone from the API from now on."""

    id: uuid.UUID
    object: Literal["channel"] = "channel"
    deleted: Literal[True] = True


class ConnectionStart(APIInput):
    """Start connecting a channel through the provider's OAuth authorization."""

    name: str = Field(
        min_length=1, max_length=200, description="A name for the channel (1-200 characters)."
    )
    instance: str | None = Field(
        default=None,
        max_length=500,
        description="Mastodon only, required there: the instance's address, e.g. "
        "`https://mastodon.social` (`mastodon.social` means the same). It must be a public "
        "https origin: no credentials, query, fragment or custom port, and no loopback, private "
        "or local name or address.",
    )
    redirect_uri: str | None = Field(
        default=None,
        max_length=2048,
        description="Where to send the person's browser once the channel is connected: the "
        "callback answers `303 See Other` to this URL with `channelId=<id>` added to its query, "
        "instead of its own confirmation. An absolute `https` URL (`http` only for `localhost` "
        "and loopback addresses), without a fragment.",
    )


class ConnectionStarted(APIModel):
    """Where to send the person: the provider's authorization page."""

    authorization_url: str = Field(
        description="Open this URL in the person's browser: the provider asks them to authorize "
        "Pressroom, then sends the browser to `/connect/{provider}/callback`."
    )
    state: str = Field(
        description="The authorization's random, single-use `state` (also inside "
        "`authorizationUrl`); the callback must carry it back."
    )
    expires_at: UTCDatetime = Field(
        description="The authorization must be completed before this time (10 minutes)."
    )


class ChannelBatch(APIModel):
    """The channels one authorization connected, when it granted several accounts."""

    items: list[Channel] = Field(
        description="One channel per account, in the order the provider listed them (the "
        "`getChannel` form)."
    )
