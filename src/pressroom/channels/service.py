"""Channel use cases: connect, read, disconnect, and the health transitions the publisher
reports. Credentials are encrypted at rest with the server key and never leave this module
except as the decrypted `ChannelContext` handed to an adapter."""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.channels import repository
from pressroom.channels.models import Channel
from pressroom.channels.schemas import Channel as ChannelOut
from pressroom.channels.schemas import ChannelHealth
from pressroom.config import Settings
from pressroom.db import row_with_id
from pressroom.kit.attributes import from_attributes
from pressroom.kit.clock import utcnow
from pressroom.kit.crypto import SecretBox
from pressroom.kit.errors import found
from pressroom.kit.pagination import PageParams
from pressroom.kit.pagination import paginate
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.connection import missing_app_settings
from pressroom.providers.declarations import PROVIDER_IDS
from pressroom.providers.registry import CONNECTORS
from pressroom.providers.registry import configured_providers
from pressroom.providers.registry import revoked_at_provider
from pressroom.runtime import Runtime
from pressroom.webhooks.outbox import emit

MAX_NAME_LENGTH = 200
# Wakes the revocation loop (channels/worker.py) when a disconnect queued work for it.
REVOCATIONS_CHANNEL = "pressroom_revocations"


@dataclass(frozen=True)
class Disconnection:
    channel: Channel
    # The credentials were provider tokens, queued to be revoked at the provider.
    revocation_queued: bool


def to_schema(channel: Channel) -> ChannelOut:
    health = ChannelHealth(
        state=channel.health_state,
        reason=channel.health_reason,
        checked_at=channel.health_checked_at,
    )
    return from_attributes(ChannelOut, channel, health=health)


def event_data(channel: Channel) -> dict[str, Any]:
    """The `data` of the channel events: `{"channel": <getChannel form>}`."""
    return {"channel": to_schema(channel).model_dump(mode="json", by_alias=True)}


async def _emit(session: AsyncSession, runtime: Runtime, channel: Channel, event_type: str) -> None:
    """Flush the channel's change and put its event in the outbox, in the same transaction."""
    await session.flush()
    await emit(
        session,
        runtime,
        organization_id=channel.organization_id,
        event_type=event_type,
        data=event_data(channel),
    )


async def connect(
    session: AsyncSession,
    runtime: Runtime,
    *,
    organization_id: uuid.UUID,
    provider: str,
    name: str,
    handle: str | None = None,
    simulated: bool = False,
    credentials: dict[str, Any] | None = None,
    configured: Collection[str] | None = None,
    limits: dict[str, Any] | None = None,
) -> Channel:
    """Connect a channel (the command line, or the OAuth callback) and emit
    channel.connected.v1; `credentials` are stored encrypted with the runtime's box.
    `configured` (default: `configured_providers` of the runtime's settings) are the providers
    a real channel may be connected to. `limits` are what the account's own server accepts
    (`channels.adapters.read_limits`, read before the transaction; a Mastodon instance's).
    ValueError for anything the caller must fix."""
    if provider not in PROVIDER_IDS:
        raise ValueError(f"unknown provider {provider!r}; one of {', '.join(PROVIDER_IDS)}")
    if configured is None:
        configured = configured_providers(runtime.settings)
    if provider != "sandbox" and not simulated and provider not in configured:
        raise ValueError(not_configured_reason(provider))
    name = name.strip()
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        raise ValueError(f"the channel name must be 1-{MAX_NAME_LENGTH} characters")
    if handle is not None:
        handle = handle.strip() or None
        if handle is not None and len(handle) > MAX_NAME_LENGTH:
            raise ValueError(f"the handle must be at most {MAX_NAME_LENGTH} characters")
    now = utcnow()
    channel = Channel(
        organization_id=organization_id,
        provider=provider,
        name=name,
        handle=handle,
        simulated=simulated,
        health_state="healthy",
        health_reason=None,
        health_checked_at=now,
        credentials_encrypted=runtime.box.encrypt(json.dumps(credentials)) if credentials else None,
        limits=limits or None,
        connected_at=now,
        created_at=now,
        updated_at=now,
    )
    session.add(channel)
    await _emit(session, runtime, channel, "channel.connected.v1")
    return channel


async def connect_accounts(
    session: AsyncSession,
    runtime: Runtime,
    *,
    organization_id: uuid.UUID,
    provider: str,
    name: str,
    accounts: Sequence[ConnectedAccount],
    configured: Collection[str] | None = None,
) -> list[Channel]:
    """Connect one channel per account a grant (or an operator's token) gives access to, named
    by `channel_names`, each emitting channel.connected.v1. ValueError as `connect`."""
    return [
        await connect(
            session,
            runtime,
            organization_id=organization_id,
            provider=provider,
            name=channel_name,
            handle=account.handle,
            credentials=account.credentials,
            configured=configured,
            limits=account.limits,
        )
        for channel_name, account in zip(channel_names(name, accounts), accounts, strict=True)
    ]


def channel_names(name: str, accounts: Sequence[ConnectedAccount]) -> list[str]:
    """The requested name for a single account; for several (the Facebook Pages of one grant),
    `"{name}: {account}"`, the account named by its `account_name`, else its handle, else its
    position, so the channels can be told apart. Cut to fit MAX_NAME_LENGTH."""
    name = name.strip()
    if len(accounts) == 1:
        return [name]
    names = []
    for position, account in enumerate(accounts, start=1):
        label = (account.account_name or account.handle or "").strip() or f"#{position}"
        label = label[: MAX_NAME_LENGTH // 2]
        names.append(f"{name[: MAX_NAME_LENGTH - len(label) - 2].rstrip()}: {label}")
    return names


def not_configured_reason(provider: str, settings: Settings | None = None) -> str:
    """Why a real channel of `provider` cannot be connected in this deployment (naming the
    settings it lacks when `settings` are given)."""
    if provider == "x":
        return (
            "x is not configured in this deployment: set PRESSROOM_X_CLIENT_ID (and, for a "
            "confidential client, PRESSROOM_X_CLIENT_SECRET) to the X app's OAuth 2.0 client; "
            "or connect it with --simulated to stage posts through the sandbox simulator"
        )
    missing = missing_app_settings(settings, provider) if settings is not None else []
    if provider in CONNECTORS and missing:
        return (
            f"{provider} is not configured in this deployment: {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not set (the {provider} app's client id "
            "and secret); or connect it with --simulated to stage posts through the sandbox "
            "simulator"
        )
    return (
        f"{provider} is not configured in this deployment (no adapter for it yet); "
        "connect it with --simulated to stage posts through the sandbox simulator"
    )


async def get(session: AsyncSession, organization_id: uuid.UUID, channel_id: uuid.UUID) -> Channel:
    """A connected channel of the organization; 404 for unknown, foreign or disconnected."""
    connected = repository.connected_channels(organization_id)
    return found(await row_with_id(session, connected, channel_id), "channel")


async def list_page(
    session: AsyncSession, runtime: Runtime, organization_id: uuid.UUID, page: PageParams
) -> tuple[list[Channel], str | None]:
    return await paginate(
        session,
        repository.connected_channels(organization_id),
        model=Channel,
        params=page,
        box=runtime.box,
        collection="channels",
    )


async def disconnect(
    session: AsyncSession,
    runtime: Runtime,
    *,
    organization_id: uuid.UUID,
    channel_id: uuid.UUID,
) -> Disconnection:
    """Erase the stored credentials, hide the channel from the API and emit
    channel.disconnected.v1. Provider tokens are not thrown away but moved, still encrypted,
    to the revocation queue, in this same transaction: the revocation loop tells the provider
    after commit (nothing is sent to the network here). (Its unpublished targets are failed by
    the caller, which owns posts: see channels/disconnecting.py.)"""
    connected = repository.connected_channels(organization_id)
    channel = found(await row_with_id(session, connected, channel_id, lock=True), "channel")
    now = utcnow()
    queued = await _queue_revocation(session, runtime, channel, channel.credentials_encrypted)
    channel.credentials_encrypted = None
    channel.disconnected_at = now
    channel.updated_at = now
    await _emit(session, runtime, channel, "channel.disconnected.v1")
    return Disconnection(channel, queued)


async def _queue_revocation(
    session: AsyncSession, runtime: Runtime, channel: Channel, credentials_encrypted: str | None
) -> bool:
    if not credentials_encrypted or not revoked_at_provider(channel.provider, channel.simulated):
        return False
    repository.queue_revocation(
        session,
        organization_id=channel.organization_id,
        channel_id=channel.id,
        provider=channel.provider,
        credentials_encrypted=credentials_encrypted,
        now=utcnow(),
    )
    await runtime.notifier.notify(session, REVOCATIONS_CHANNEL)
    return True


async def _lock_for_health(session: AsyncSession, channel_id: uuid.UUID) -> Channel | None:
    """The channel, row-locked, if its health may still change: None for a channel that is
    gone, disconnected or already waiting for a reconnect."""
    channel = await repository.lock_by_id(session, channel_id)
    if (
        channel is None
        or channel.disconnected_at is not None
        or channel.health_state == "reconnect_required"
    ):
        return None
    return channel


def _set_health(channel: Channel, state: str, reason: str | None) -> None:
    now = utcnow()
    channel.health_state = state
    channel.health_reason = reason
    channel.health_checked_at = now
    channel.updated_at = now


async def mark_reconnect_required(
    session: AsyncSession,
    runtime: Runtime,
    *,
    channel_id: uuid.UUID,
    reason: str,
) -> None:
    """The provider refused the channel's credentials. Moves a connected channel to
    `reconnect_required` and emits channel.reconnect-required.v1, once per transition."""
    channel = await _lock_for_health(session, channel_id)
    if channel is None:
        return
    _set_health(channel, "reconnect_required", reason[:500])
    await _emit(session, runtime, channel, "channel.reconnect-required.v1")


async def record_health(
    session: AsyncSession,
    runtime: Runtime,
    *,
    channel_id: uuid.UUID,
    health: HealthResult,
    limits: dict[str, Any] | None,
) -> None:
    """What a health check found: the state, and the limits of the account's own server when
    they could be read (None keeps those known). A refused token goes through
    `mark_reconnect_required` (one event per transition); a channel disconnected, or needing a
    reconnect, meanwhile is left as it is."""
    if health.state == "reconnect_required":
        await mark_reconnect_required(
            session, runtime, channel_id=channel_id, reason=health.reason or "credentials refused"
        )
        return
    channel = await _lock_for_health(session, channel_id)
    if channel is None:
        return
    _set_health(channel, health.state, health.reason[:500] if health.reason else None)
    if limits:
        channel.limits = limits
    await session.flush()


async def usable(
    session: AsyncSession, organization_id: uuid.UUID, ids: Collection[uuid.UUID]
) -> dict[uuid.UUID, Channel]:
    """The connected channels of the organization among `ids` (others are simply absent)."""
    return await repository.get_connected_many(session, organization_id, set(ids))


async def by_ids(session: AsyncSession, ids: Collection[uuid.UUID]) -> dict[uuid.UUID, Channel]:
    """Channels by id in any state (the publisher decides what a disconnected one means)."""
    return await repository.get_any_many(session, set(ids))


def publish_refusal(channel: Channel | None) -> ProviderError | None:
    """Why nothing may be published through this channel now (None: publishing may go on)."""
    if channel is None or channel.disconnected_at is not None:
        return ProviderError(
            "channel_disconnected", "The channel was disconnected; connect it again."
        )
    if channel.health_state == "reconnect_required":
        return ProviderError(
            "auth_expired",
            f"The {channel.provider} channel needs to be reconnected: the provider refused its "
            "credentials.",
        )
    return None


def context_for(channel: Channel, box: SecretBox) -> ChannelContext:
    """What an adapter gets: the channel with its credentials decrypted."""
    credentials: dict[str, Any] = {}
    if channel.credentials_encrypted:
        credentials = json.loads(box.decrypt(channel.credentials_encrypted))
    return from_attributes(ChannelContext, channel, credentials=credentials)


async def store_credentials(
    session: AsyncSession, runtime: Runtime, channel_id: uuid.UUID, credentials: dict[str, Any]
) -> None:
    """Replace a channel's credentials (adapters whose providers rotate tokens report the new
    set). A disconnected channel keeps none: its credentials were erased for good, and a set
    refreshed by a call that was in flight during the disconnect goes to the revocation queue
    too (the provider has already replaced the tokens the disconnect queued)."""
    channel = await repository.lock_by_id(session, channel_id)
    if channel is None:
        return
    if channel.disconnected_at is not None:
        # No notifier here: the revocation loop finds the row on its next poll.
        if revoked_at_provider(channel.provider, channel.simulated):
            repository.queue_revocation(
                session,
                organization_id=channel.organization_id,
                channel_id=channel.id,
                provider=channel.provider,
                credentials_encrypted=runtime.box.encrypt(json.dumps(credentials)),
                now=utcnow(),
            )
            await session.flush()
        return
    channel.credentials_encrypted = runtime.box.encrypt(json.dumps(credentials))
    channel.updated_at = utcnow()
    await session.flush()


DEMO_CHANNELS: tuple[tuple[str, str, str, bool], ...] = (
    ("sandbox", "Sandbox", "@demo", False),
    ("bluesky", "Bluesky (simulated)", "@demo.bsky.social", True),
)


async def connect_demo_channels(
    session: AsyncSession, runtime: Runtime, *, organization_id: uuid.UUID
) -> list[Channel]:
    """Connect the demo organization's channels unless it has them: a sandbox channel and a
    simulated Bluesky channel, so a demo can publish at once. Returns those it connected."""
    made = []
    for provider, name, handle, simulated in DEMO_CHANNELS:
        if await repository.find_by_name(session, organization_id, provider, name) is None:
            made.append(
                await connect(
                    session,
                    runtime,
                    organization_id=organization_id,
                    provider=provider,
                    name=name,
                    handle=handle,
                    simulated=simulated,
                )
            )
    return made
