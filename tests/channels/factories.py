"""Channels for tests, connected the way the command line connects them."""

from __future__ import annotations

import uuid

from pressroom.channels import service as channels
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime


async def connect_channel(
    runtime: Runtime,
    organization_id: uuid.UUID,
    *,
    provider: str = "sandbox",
    simulated: bool | None = None,
    name: str | None = None,
    handle: str | None = "@tester",
    credentials: dict[str, str] | None = None,
) -> uuid.UUID:
    """A connected channel; any provider but the sandbox is connected --simulated."""
    async with unit_of_work(runtime.sessions) as session:
        channel = await channels.connect(
            session,
            runtime,
            organization_id=organization_id,
            provider=provider,
            name=name or f"{provider} {uuid.uuid4().hex[:6]}",
            handle=handle,
            simulated=(provider != "sandbox") if simulated is None else simulated,
            credentials=credentials,
        )
        return channel.id
