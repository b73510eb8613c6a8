"""Queries of media assets."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.db import rows_by_id
from pressroom.media.models import MediaAsset


async def get_assets(
    session: AsyncSession, organization_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, MediaAsset]:
    """The organization's assets among `ids` (foreign and unknown ids are simply absent)."""
    if not ids:
        return {}
    statement = select(MediaAsset).where(
        MediaAsset.organization_id == organization_id, MediaAsset.id.in_(list(set(ids)))
    )
    return await rows_by_id(session, statement)


async def storage_keys(
    session: AsyncSession, asset_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, str]:
    """The storage key of each of `asset_ids` that has a row (any organization)."""
    if not asset_ids:
        return {}
    rows = await session.execute(
        select(MediaAsset.id, MediaAsset.storage_key).where(MediaAsset.id.in_(list(set(asset_ids))))
    )
    return {asset_id: key for asset_id, key in rows}
