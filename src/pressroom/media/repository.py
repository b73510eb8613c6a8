"""Queries of media assets."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.media.models import MediaAsset


async def get_assets(
    session: AsyncSession, organization_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, MediaAsset]:
    """The organization's assets among `ids` (foreign and unknown ids are simply absent)."""
    if not ids:
        return {}
    rows = await session.scalars(
        select(MediaAsset).where(
            MediaAsset.organization_id == organization_id, MediaAsset.id.in_(list(set(ids)))
        )
    )
    return {row.id: row for row in rows}
