"""Which adapter acts for a channel, and which providers this deployment can publish to.

The publisher, the metrics poller and the channel health check all go through
`adapter_for(channel, runtime)`: this module is the only place that picks an adapter. The
sandbox, and every channel connected with `--simulated`, get the simulator; Bluesky, Mastodon
and X get their real adapters (`REAL_ADAPTERS`), wired to the process's shared HTTP client, its
media storage and the channel's encrypted credential store. A channel whose provider has no
adapter in this deployment gets one that fails every call with an actionable, permanent error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pressroom.db import unit_of_work
from pressroom.media import service as media
from pressroom.providers.adapter import (
    ChannelContext,
    HealthResult,
    MediaItem,
    ProviderAdapter,
    ProviderError,
    PublishRequest,
    PublishResult,
    Revocation,
    RevokingAdapter,
)
from pressroom.providers.bluesky import BlueskyAdapter
from pressroom.providers.bluesky.media import MediaDimensions
from pressroom.providers.credentials import CredentialsChanged
from pressroom.providers.declarations import ALWAYS_CONFIGURED, DECLARATIONS
from pressroom.providers.http import MediaReader
from pressroom.providers.mastodon.adapter import MastodonAdapter
from pressroom.providers.sandbox.adapter import ALL_METRICS, SandboxAdapter
from pressroom.providers.x import XAdapter, XApp

if TYPE_CHECKING:
    from pressroom.config import Settings
    from pressroom.runtime import Runtime

# provider id -> factory of its real adapter, built per call around the runtime's shared parts.
AdapterFactory = Callable[[ChannelContext, "Runtime"], ProviderAdapter]


def x_app(settings: Settings | None, *, redirect_uri: str | None = None) -> XApp | None:
    """The deployment's X app (PRESSROOM_X_CLIENT_ID, PRESSROOM_X_CLIENT_SECRET), or None."""
    if settings is None or settings.x_client_id is None:
        return None
    secret = settings.x_client_secret
    return XApp(
        client_id=settings.x_client_id,
        client_secret=secret.get_secret_value() if secret is not None else None,
        redirect_uri=redirect_uri,
    )


def _bluesky(channel: ChannelContext, runtime: Runtime) -> ProviderAdapter:
    return BlueskyAdapter(
        read_media=_media_reader(runtime),
        on_credentials_changed=_credentials_store(runtime),
        media_dimensions=_media_dimensions(runtime, channel),
        http=runtime.provider_http,
    )


def _mastodon(channel: ChannelContext, runtime: Runtime) -> ProviderAdapter:
    # Mastodon access tokens do not expire and are never rotated: nothing to store back.
    return MastodonAdapter(read_media=_media_reader(runtime), http=runtime.provider_http)


def _x(channel: ChannelContext, runtime: Runtime) -> ProviderAdapter:
    # Without the X app an access token cannot be refreshed: it works until it expires, then
    # the channel needs reconnecting (the adapter says so).
    return XAdapter(
        app=x_app(runtime.settings),
        read_media=_media_reader(runtime),
        on_credentials_changed=_credentials_store(runtime),
        http=runtime.provider_http,
    )


REAL_ADAPTERS: dict[str, AdapterFactory] = {
    "bluesky": _bluesky,
    "mastodon": _mastodon,
    "x": _x,
}
# Real adapters that also need deployment configuration, and whether `settings` has it.
# Bluesky (app passwords) and Mastodon (any instance: the app is registered on it when a
# channel is connected) need none.
NEEDS_CONFIGURATION: dict[str, Callable[[Settings], bool]] = {
    "x": lambda settings: settings.x_client_id is not None,
}


def configured_providers(settings: Settings | None = None) -> frozenset[str]:
    """Providers this deployment can connect and publish to for real (`configured` in the
    provider declarations): the sandbox, plus every provider with a registered adapter whose
    deployment configuration, if it needs any, is present in `settings`."""
    configured = set(ALWAYS_CONFIGURED)
    for provider in REAL_ADAPTERS:
        needs = NEEDS_CONFIGURATION.get(provider)
        if needs is None or (settings is not None and needs(settings)):
            configured.add(provider)
    return frozenset(configured)


def adapter_for(channel: ChannelContext, runtime: Runtime | None = None) -> ProviderAdapter:
    """The adapter that acts for `channel`.

    Pass the process's `runtime` wherever one exists: the sandbox keeps its published posts
    in the database and takes its latency from the settings, and the real adapters use its
    HTTP client, media storage and credential store. Without it, the sandbox can still report
    metrics and health, but cannot publish or delete, and a real network cannot be reached."""
    if channel.simulated or channel.provider == "sandbox":
        declaration = DECLARATIONS.get(channel.provider)
        return SandboxAdapter(
            runtime.engine if runtime is not None else None,
            autocommit=runtime.reader if runtime is not None else None,
            latency_seconds=(runtime.settings.sandbox_latency_ms / 1000) if runtime else 0.0,
            metrics=list(declaration.metrics) if declaration is not None else list(ALL_METRICS),
        )
    factory = REAL_ADAPTERS.get(channel.provider)
    if factory is None:
        return UnconfiguredAdapter(channel.provider)
    if runtime is None:
        return UnconfiguredAdapter(
            channel.provider,
            f"The {channel.provider} adapter needs the process runtime (its HTTP client, media "
            "storage and credential store); this caller has none.",
        )
    return factory(channel, runtime)


def revoked_at_provider(provider: str, simulated: bool) -> bool:
    """Whether a channel's stored credentials are tokens of a real network, which a disconnect
    must revoke there (the sandbox and simulated channels hold none)."""
    return not simulated and provider in REAL_ADAPTERS


async def revoke_credentials(channel: ChannelContext, runtime: Runtime) -> Revocation:
    """Revoke a disconnected channel's tokens through its adapter; `unsupported` when the
    adapter has no way to. Raises ProviderError."""
    adapter = adapter_for(channel, runtime)
    if not isinstance(adapter, RevokingAdapter):
        return "unsupported"
    return await adapter.revoke(channel)


def _media_reader(runtime: Runtime) -> MediaReader:
    storage = media.storage_for(runtime.settings)

    def read(item: MediaItem) -> AsyncIterator[bytes]:
        return storage.open_read(item.storage_key)

    return read


def _media_dimensions(runtime: Runtime, channel: ChannelContext) -> MediaDimensions:
    """Width and height of an asset as the media domain inspected them (Bluesky sends them as
    the embed's aspect ratio, videos included)."""

    async def dimensions(item: MediaItem) -> tuple[int, int] | None:
        async with runtime.sessions() as session:
            assets = await media.get_assets(session, channel.organization_id, [item.id])
        asset = assets.get(item.id)
        if asset is None or not asset.width or not asset.height:
            return None
        return (asset.width, asset.height)

    return dimensions


def _credentials_store(runtime: Runtime) -> CredentialsChanged:
    """Refreshed tokens (Bluesky sessions, X OAuth tokens) are stored encrypted at once, in
    their own short transaction: the provider has already invalidated the old ones."""

    async def store(channel: ChannelContext, credentials: dict[str, Any]) -> None:
        # Imported here: the channels service asks this module which providers are configured.
        from pressroom.channels import service as channels

        async with unit_of_work(runtime.sessions) as session:
            await channels.store_credentials(session, runtime.box, channel.id, credentials)

    return store


class UnconfiguredAdapter:
    """Stands in for a network this deployment has no adapter for: every call fails,
    permanently, saying so (never a false success)."""

    def __init__(self, provider: str, reason: str | None = None) -> None:
        self.provider = provider
        self._reason = reason or (
            f"This deployment has no adapter configured for {provider}; connect the channel "
            "with --simulated, or configure the provider."
        )

    def _error(self) -> ProviderError:
        return ProviderError("provider_unavailable", self._reason, retryable=False)

    async def publish(self, request: PublishRequest) -> PublishResult:
        raise self._error()

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        raise self._error()

    async def fetch_metrics(
        self, channel: ChannelContext, provider_post_id: str, published_at: datetime
    ) -> dict[str, int]:
        raise self._error()

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        return HealthResult(state="degraded", reason=self._reason)
