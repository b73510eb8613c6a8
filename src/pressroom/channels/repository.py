"""Every query of the channels domain."""

from __future__ import annotations

import uuid
from collections.abc import Collection

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.channels.models import Channel
from pressroom.db import dialect_name


def connected_channels(organization_id: uuid.UUID) -> Select[Channel]:
    """The organization's channels that have not been disconnected."""
    return select(Channel).where(
        Channel.organization_id == organization_id, Channel.disconnected_at.is_(None)
    )


async def get_connected(
    session: AsyncSession,
    organization_id: uuid.UUID,
    channel_id: uuid.UUID,
    *,
    for_update: bool = False,
) -> Channel | None:
    statement = connected_channels(organization_id).where(Channel.id == channel_id)
    if for_update and dialect_name(session) == "postgresql":
        statement = statement.with_for_update().execution_options(populate_existing=True)
    return (await session.scalars(statement)).one_or_none()


async def get_connected_many(
    session: AsyncSession, organization_id: uuid.UUID, ids: Collection[uuid.UUID]
) -> dict[uuid.UUID, Channel]:
    if not ids:
        return {}
    rows = await session.scalars(connected_channels(organization_id).where(Channel.id.in_(ids)))
    return {row.id: row for row in rows}


async def get_any_many(
    session: AsyncSession, ids: Collection[uuid.UUID]
) -> dict[uuid.UUID, Channel]:
    """Channels by id whatever their organization or state (for the publisher)."""
    if not ids:
        return {}
    rows = await session.scalars(select(Channel).where(Channel.id.in_(ids)))
    return {row.id: row for row in rows}


async def lock_by_id(session: AsyncSession, channel_id: uuid.UUID) -> Channel | None:
    statement = select(Channel).where(Channel.id == channel_id)
    if dialect_name(session) == "postgresql":
        statement = statement.with_for_update().execution_options(populate_existing=True)
    return (await session.scalars(statement)).one_or_none()


async def find_by_name(
    session: AsyncSession, organization_id: uuid.UUID, provider: str, name: str
) -> Channel | None:
    statement = connected_channels(organization_id).where(
        Channel.provider == provider, Channel.name == name
    )
    return (await session.scalars(statement.limit(1))).first()
