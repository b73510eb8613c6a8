"""The adapter that acts for a channel, wired to this process.

The provider registry picks the adapter and imports no domain; here the channels domain hands
it what adapters use: the process's HTTP client and database, the media of the channel's
organization (its bytes, and signed public links to them for networks that fetch media from a
URL), and a store for refreshed credentials (which belong to the channel)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from pressroom.channels.service import store_credentials
from pressroom.db import unit_of_work
from pressroom.media import service as media
from pressroom.media.links import public_url_maker
from pressroom.providers import registry
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import LimitsAdapter
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderAdapter
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import Revocation
from pressroom.providers.bluesky.media import MediaDimensions
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.credentials import CredentialsChanged
from pressroom.providers.http import MediaLookup
from pressroom.providers.http import MediaReader
from pressroom.runtime import Runtime

log = logging.getLogger(__name__)


def adapter_for(channel: ChannelContext, runtime: Runtime) -> ProviderAdapter:
    """The adapter that acts for `channel` in this process."""
    return registry.adapter_for(channel, adapter_services(runtime, channel.organization_id))


async def revoke_credentials(channel: ChannelContext, runtime: Runtime) -> Revocation:
    """Revoke a disconnected channel's tokens at its network (see registry.revoke_credentials)."""
    services = adapter_services(runtime, channel.organization_id)
    return await registry.revoke_credentials(channel, services)


async def read_limits(channel: ChannelContext, runtime: Runtime) -> dict[str, Any] | None:
    """What the channel's own server accepts where it differs from the provider's declaration
    (a Mastodon instance's character limit), to keep on the channel: at connect (before the
    channel is stored: `ChannelContext.unsaved(provider, credentials)`) and at each health
    check. None where the adapter reads none, or the server would not tell: the provider's
    stock limits then apply until the next check. Network: outside any transaction."""
    adapter = adapter_for(channel, runtime)
    if not isinstance(adapter, LimitsAdapter):
        return None
    try:
        return await adapter.read_limits(channel)
    except ProviderError as error:
        log.warning(
            "channel limits not read",
            extra={"provider": channel.provider, "code": error.code, "reason": error.message},
        )
        return None


def adapter_services(runtime: Runtime, organization_id: uuid.UUID) -> registry.AdapterServices:
    return registry.AdapterServices(
        settings=runtime.settings,
        http=lambda: runtime.provider_http,
        engine=runtime.engine,
        reader=runtime.reader,
        read_media=_media_reader(runtime),
        media_dimensions=_media_dimensions(runtime, organization_id),
        store_credentials=_credentials_store(runtime),
        media_url=public_url_maker(runtime, organization_id),
        find_media=_media_lookup(runtime, organization_id),
    )


def _media_reader(runtime: Runtime) -> MediaReader:
    storage = media.storage_for(runtime.settings)

    def read(item: MediaItem) -> AsyncIterator[bytes]:
        return storage.open_read(item.storage_key)

    return read


def _media_lookup(runtime: Runtime, organization_id: uuid.UUID) -> MediaLookup:
    """The organization's media item of an id (a custom thumbnail an option names)."""

    async def find(media_id: uuid.UUID) -> MediaItem | None:
        async with runtime.sessions() as session:
            items = await media.media_items(session, organization_id, [media_id])
        return items.get(media_id)

    return find


def _media_dimensions(runtime: Runtime, organization_id: uuid.UUID) -> MediaDimensions:
    """Width and height of an asset as the media domain inspected them (Bluesky sends them as
    the embed's aspect ratio, videos included)."""

    async def dimensions(item: MediaItem) -> tuple[int, int] | None:
        async with runtime.sessions() as session:
            assets = await media.get_assets(session, organization_id, [item.id])
        asset = assets.get(item.id)
        if asset is None or not asset.width or not asset.height:
            return None
        return (asset.width, asset.height)

    return dimensions


def _credentials_store(runtime: Runtime) -> CredentialsChanged:
    """Refreshed tokens are stored encrypted at once, in their own short transaction: the
    provider has already invalidated the old ones."""

    async def store(channel: ChannelContext, credentials: dict[str, Any]) -> None:
        async with unit_of_work(runtime.sessions) as session:
            await store_credentials(session, runtime, channel.id, credentials)

    return store


async def with_limits(
    provider: str, accounts: list[ConnectedAccount], runtime: Runtime
) -> list[ConnectedAccount]:
    """`accounts` with the limits their own server states (`read_limits`), read at connect so a
    new channel is validated against them from its first post. Network: outside any
    transaction."""
    return [
        replace(
            account,
            limits=await read_limits(
                ChannelContext.unsaved(provider, account.credentials), runtime
            ),
        )
        for account in accounts
    ]
