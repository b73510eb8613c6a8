"""Channels as the API shows them: never a token, always a safe health state."""

from __future__ import annotations

import uuid
from typing import Literal

from pydantic import Field

from pressroom.kit.schema import APIModel, UTCDatetime

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
