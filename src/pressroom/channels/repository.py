"""Every query of the channels domain."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Collection
from datetime import datetime
from datetime import timedelta
from typing import Any
from typing import TypeVar

from sqlalchemy import Select
from sqlalchemy import bindparam
from sqlalchemy import delete
from sqlalchemy import or_
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.channels.models import Channel
from pressroom.channels.models import ChannelAuthorization
from pressroom.channels.models import CredentialRevocation
from pressroom.channels.models import MastodonApp
from pressroom.db import IdMixin
from pressroom.db import dialect_name
from pressroom.db import one_row
from pressroom.db import rows_by_id
from pressroom.kit.ids import uuid7

# A row of a table that is a queue (it has an id).
Taken = TypeVar("Taken", bound=IdMixin)


def connected_channels(organization_id: uuid.UUID) -> Select[Channel]:
    """The organization's channels that have not been disconnected."""
    return select(Channel).where(
        Channel.organization_id == organization_id, Channel.disconnected_at.is_(None)
    )


@functools.cache
def _connected_among() -> Select[Channel]:
    """Built once, on first use (SQLAlchemy reuses its compiled form): createPost and
    updatePost read their targets' channels with it on every request."""
    return select(Channel).where(
        Channel.organization_id == bindparam("channels_organization_id"),
        Channel.disconnected_at.is_(None),
        Channel.id.in_(bindparam("channel_ids", expanding=True)),
    )


async def get_connected_many(
    session: AsyncSession, organization_id: uuid.UUID, ids: Collection[uuid.UUID]
) -> dict[uuid.UUID, Channel]:
    if not ids:
        return {}
    rows = await session.scalars(
        _connected_among(), {"channels_organization_id": organization_id, "channel_ids": list(ids)}
    )
    return {channel.id: channel for channel in rows}


async def get_any_many(
    session: AsyncSession, ids: Collection[uuid.UUID]
) -> dict[uuid.UUID, Channel]:
    """Channels by id whatever their organization or state (for the publisher)."""
    if not ids:
        return {}
    return await rows_by_id(session, select(Channel).where(Channel.id.in_(ids)))


async def lock_by_id(session: AsyncSession, channel_id: uuid.UUID) -> Channel | None:
    return await one_row(session, select(Channel).where(Channel.id == channel_id), lock=True)


async def find_by_name(
    session: AsyncSession, organization_id: uuid.UUID, provider: str, name: str
) -> Channel | None:
    statement = connected_channels(organization_id).where(
        Channel.provider == provider, Channel.name == name
    )
    return (await session.scalars(statement.limit(1))).first()


async def authorization_by_state_digest(
    session: AsyncSession, state_digest: str
) -> ChannelAuthorization | None:
    statement = select(ChannelAuthorization).where(
        ChannelAuthorization.state_digest == state_digest
    )
    return await one_row(session, statement)


async def use_authorization(
    session: AsyncSession, authorization_id: uuid.UUID, now: datetime
) -> bool:
    """Mark a pending authorization used; False if another callback already did (a conditional
    update, so two concurrent callbacks with one state cannot both proceed)."""
    result = await session.execute(
        update(ChannelAuthorization)
        .where(ChannelAuthorization.id == authorization_id, ChannelAuthorization.used_at.is_(None))
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    )
    return getattr(result, "rowcount", 0) == 1


async def purge_authorizations(session: AsyncSession, expired_before: datetime) -> None:
    await session.execute(
        delete(ChannelAuthorization).where(ChannelAuthorization.expires_at < expired_before)
    )


async def find_mastodon_app(
    session: AsyncSession, base_url: str, redirect_uri: str
) -> MastodonApp | None:
    statement = select(MastodonApp).where(
        MastodonApp.base_url == base_url, MastodonApp.redirect_uri == redirect_uri
    )
    return await one_row(session, statement)


async def keep_mastodon_app(
    session: AsyncSession,
    *,
    base_url: str,
    redirect_uri: str,
    client_id: str,
    client_secret_encrypted: str,
    now: datetime,
) -> MastodonApp:
    """Store an app registered on an instance, unless one was stored for the same instance and
    redirect URI meanwhile (a concurrent connection): the stored one is returned either way."""
    insert = pg_insert if dialect_name(session) == "postgresql" else sqlite_insert
    await session.execute(
        insert(MastodonApp)
        .values(
            id=uuid7(),
            base_url=base_url,
            redirect_uri=redirect_uri,
            client_id=client_id,
            client_secret_encrypted=client_secret_encrypted,
            created_at=now,
        )
        .on_conflict_do_nothing(index_elements=["base_url", "redirect_uri"])
    )
    stored = await find_mastodon_app(session, base_url, redirect_uri)
    assert stored is not None
    return stored


# -- health checks (channels/health.py) -------------------------------------------------------


async def claim_health_checks(
    session: AsyncSession, *, checked_before: datetime, limit: int, now: datetime
) -> list[Channel]:
    """Take up to `limit` connected channels due a health check, longest unchecked first:
    checked before `checked_before`, or never since they were connected. Taking one marks it
    checked now, so no other worker checks it too; a worker that dies mid-check delays that
    channel's next check by one interval, nothing more. Channels waiting for a reconnect are
    left alone: only a new connection helps them."""
    statement = (
        select(Channel.id)
        .where(
            Channel.disconnected_at.is_(None),
            Channel.health_state != "reconnect_required",
            or_(
                Channel.health_checked_at.is_(None),
                Channel.health_checked_at <= checked_before,
                Channel.health_checked_at <= Channel.connected_at,
            ),
        )
        .order_by(Channel.health_checked_at, Channel.id)
        .limit(limit)
    )
    return await _take(session, Channel, statement, {"health_checked_at": now})


async def _take(
    session: AsyncSession, model: type[Taken], ids: Select[uuid.UUID], values: dict[str, Any]
) -> list[Taken]:
    """The rows whose ids `ids` selects, locked (skipping those another transaction holds, on
    PostgreSQL), with `values` written to them: how a worker takes queued rows."""
    if dialect_name(session) == "postgresql":
        ids = ids.with_for_update(skip_locked=True)
    taken = list(await session.scalars(ids))
    if not taken:
        return []
    await session.execute(
        update(model)
        .where(model.id.in_(taken))
        .values(values)
        .execution_options(synchronize_session=False)
    )
    rows = select(model).where(model.id.in_(taken))
    return list(await session.scalars(rows.execution_options(populate_existing=True)))


# -- credential revocations (the queue of channels/worker.py) ---------------------------------


def queue_revocation(
    session: AsyncSession,
    *,
    organization_id: uuid.UUID,
    channel_id: uuid.UUID,
    provider: str,
    credentials_encrypted: str,
    now: datetime,
) -> None:
    session.add(
        CredentialRevocation(
            organization_id=organization_id,
            channel_id=channel_id,
            provider=provider,
            credentials_encrypted=credentials_encrypted,
            attempts=0,
            next_attempt_at=now,
            created_at=now,
        )
    )


async def claim_due_revocations(
    session: AsyncSession, *, owner: str, lease_seconds: float, limit: int, now: datetime
) -> list[CredentialRevocation]:
    """Lease up to `limit` due revocations to `owner` (one attempt more each), oldest first;
    a lease that ran out (its worker died) is taken over."""
    statement = (
        select(CredentialRevocation.id)
        .where(
            CredentialRevocation.next_attempt_at <= now,
            or_(
                CredentialRevocation.lease_until.is_(None),
                CredentialRevocation.lease_until <= now,
            ),
        )
        .order_by(CredentialRevocation.next_attempt_at, CredentialRevocation.id)
        .limit(limit)
    )
    values = {
        "lease_owner": owner,
        "lease_until": now + timedelta(seconds=lease_seconds),
        "attempts": CredentialRevocation.attempts + 1,
    }
    return await _take(session, CredentialRevocation, statement, values)


async def finish_revocation(session: AsyncSession, revocation_id: uuid.UUID, owner: str) -> bool:
    """Remove a revocation this owner still holds; False if its lease was lost."""
    result = await session.execute(
        delete(CredentialRevocation).where(
            CredentialRevocation.id == revocation_id, CredentialRevocation.lease_owner == owner
        )
    )
    return getattr(result, "rowcount", 0) == 1


async def retry_revocation(
    session: AsyncSession, revocation_id: uuid.UUID, owner: str, next_attempt_at: datetime
) -> bool:
    """Release a revocation this owner holds until `next_attempt_at`; False if lost."""
    result = await session.execute(
        update(CredentialRevocation)
        .where(CredentialRevocation.id == revocation_id, CredentialRevocation.lease_owner == owner)
        .values(lease_owner=None, lease_until=None, next_attempt_at=next_attempt_at)
        .execution_options(synchronize_session=False)
    )
    return getattr(result, "rowcount", 0) == 1
