"""Provider tokens that change while an adapter works: Bluesky sessions and X OAuth tokens are
refreshed, and both networks rotate the refresh token, so the old one stops working.

The adapter reports every new set through `on_credentials_changed(channel, credentials)`; the
caller encrypts and stores it. Until the caller's copy catches up (the channel row is read
before the call, the refresh happens during it), `CredentialCache` remembers, per process, which
refresh token was rotated into which credentials, so that a second call with the stale copy does
not spend an already-spent refresh token. A per-channel lock keeps two concurrent calls from
refreshing at once.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pressroom.providers.adapter import ChannelContext

# Called with the channel and its complete new credentials dict (never logged).
CredentialsChanged = Callable[[ChannelContext, dict[str, Any]], Awaitable[None]]

logger = logging.getLogger(__name__)


@dataclass
class _Rotation:
    # Every refresh token this process has seen replaced ("" for a copy that had none).
    spent: set[str]
    credentials: dict[str, Any]


class CredentialCache:
    """The newest credentials of each channel this process has refreshed."""

    def __init__(self) -> None:
        self._rotations: dict[tuple[str, uuid.UUID], _Rotation] = {}
        self._locks: dict[tuple[str, uuid.UUID], asyncio.Lock] = {}

    def current(self, channel: ChannelContext, refresh_key: str) -> dict[str, Any]:
        """The credentials to use for `channel`: the caller's copy, unless it still holds a
        refresh token this process already replaced, in which case the newest credentials."""
        key = (channel.provider, channel.id)
        given = dict(channel.credentials)
        rotation = self._rotations.get(key)
        if rotation is None:
            return given
        if (given.get(refresh_key) or "") in rotation.spent:
            return dict(rotation.credentials)
        # The caller's copy is the newest one (it caught up) or newer still (a reconnect).
        del self._rotations[key]
        return given

    def remember(
        self, channel: ChannelContext, spent_refresh_token: str, credentials: Mapping[str, Any]
    ) -> None:
        """`spent_refresh_token` (or "" if there was none) was replaced by `credentials`."""
        key = (channel.provider, channel.id)
        rotation = self._rotations.setdefault(key, _Rotation(set(), {}))
        rotation.spent.add(spent_refresh_token)
        rotation.credentials = dict(credentials)

    def lock(self, channel: ChannelContext) -> asyncio.Lock:
        return self._locks.setdefault((channel.provider, channel.id), asyncio.Lock())


# One per process by default: adapters may be built per call (see registry.adapter_for).
PROCESS_CREDENTIALS = CredentialCache()


@dataclass(frozen=True)
class CredentialStore:
    """Where an adapter puts the credentials it renews: `cache`, this process's newest copies
    (for calls still holding an old one), and `on_changed`, the caller, who stores them."""

    cache: CredentialCache
    on_changed: CredentialsChanged | None = None

    def current(self, channel: ChannelContext, refresh_key: str) -> dict[str, Any]:
        return self.cache.current(channel, refresh_key)

    def lock(self, channel: ChannelContext) -> asyncio.Lock:
        """Held while renewing the channel's credentials."""
        return self.cache.lock(channel)

    async def renew(
        self,
        channel: ChannelContext,
        refused_access_token: str,
        renewal: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
        *,
        rotation_key: str = "refreshToken",
    ) -> dict[str, Any]:
        """The channel's credentials once `refused_access_token` is replaced: those another
        call of this process renewed while this one waited for the lock, or else
        `renewal(newest)`'s, which are stored (their `rotation_key` credential noted as spent:
        the refresh token, or the access token where the network keeps the refresh token)."""
        async with self.lock(channel):
            newest = self.current(channel, rotation_key)
            if newest.get("accessToken") != refused_access_token:
                return newest
            renewed = await renewal(newest)
            await self.replace(channel, str(newest.get(rotation_key) or ""), renewed)
            return renewed

    async def replace(
        self, channel: ChannelContext, spent_refresh_token: str, credentials: dict[str, Any]
    ) -> None:
        """`credentials` replace the set whose refresh token was `spent_refresh_token`."""
        self.cache.remember(channel, spent_refresh_token, credentials)
        await report_credentials(self.on_changed, channel, credentials)


async def report_credentials(
    callback: CredentialsChanged | None, channel: ChannelContext, credentials: dict[str, Any]
) -> None:
    """Hand new credentials to the caller. A failure to store them must not fail the publish
    that is under way: the cache still holds them, and the next refresh reports again."""
    if callback is None:
        return
    try:
        await callback(channel, dict(credentials))
    except Exception:
        logger.exception(
            "storing refreshed provider credentials failed",
            extra={"channel_id": str(channel.id), "provider": channel.provider},
        )
