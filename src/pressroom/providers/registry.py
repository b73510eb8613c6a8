"""Which adapter acts for a channel, and which providers this deployment can publish to.

The publisher, the metrics poller and the channel health check all go through
`adapter_for(channel, services)`: this module is the only place that picks an adapter. The
sandbox, and every channel connected with `--simulated`, get the simulator; every network
with a package that publishes gets its real adapter (`REAL_ADAPTERS`), and those connected
through OAuth list their connector in `CONNECTORS`. Adding a network is one package and its
lines here. What an adapter needs from the rest of the process (the shared HTTP client, a
reader of stored media, signed public media links, a store for refreshed credentials) comes in
as `AdapterServices`, which the channels domain composes (`channels.adapters`): this module
imports no domain. A channel whose provider has no adapter in this deployment gets one that
fails every call with an actionable, permanent error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from pressroom.config import Settings
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import ProviderAdapter
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.adapter import Revocation
from pressroom.providers.adapter import RevokingAdapter
from pressroom.providers.bluesky import BlueskyAdapter
from pressroom.providers.bluesky.media import MediaDimensions
from pressroom.providers.connection import OAuthConnector
from pressroom.providers.connection import missing_app_settings
from pressroom.providers.connection import oauth_app
from pressroom.providers.credentials import CredentialsChanged
from pressroom.providers.declarations import ALWAYS_CONFIGURED
from pressroom.providers.declarations import DECLARATIONS
from pressroom.providers.facebook import CONNECTOR as FACEBOOK_CONNECTOR
from pressroom.providers.facebook import FacebookAdapter
from pressroom.providers.http import MediaLookup
from pressroom.providers.http import MediaReader
from pressroom.providers.http import PublicMediaUrl
from pressroom.providers.instagram import InstagramAdapter
from pressroom.providers.instagram import InstagramConnector
from pressroom.providers.linkedin import CONNECTOR as LINKEDIN_CONNECTOR
from pressroom.providers.linkedin import LinkedInAdapter
from pressroom.providers.mastodon.adapter import MastodonAdapter
from pressroom.providers.pinterest import CONNECTOR as PINTEREST_CONNECTOR
from pressroom.providers.pinterest import PinterestAdapter
from pressroom.providers.sandbox.adapter import ALL_METRICS
from pressroom.providers.sandbox.adapter import SandboxAdapter
from pressroom.providers.threads import CONNECTOR as THREADS_CONNECTOR
from pressroom.providers.threads import ThreadsAdapter
from pressroom.providers.tiktok import CONNECTOR as TIKTOK_CONNECTOR
from pressroom.providers.tiktok import TikTokAdapter
from pressroom.providers.x import XAdapter
from pressroom.providers.x import XApp
from pressroom.providers.youtube import CONNECTOR as YOUTUBE_CONNECTOR
from pressroom.providers.youtube import YouTubeAdapter


@dataclass(frozen=True)
class AdapterServices:
    """What adapters use of the process, handed in by the caller."""

    settings: Settings
    # The process's shared client for provider APIs (made on first use).
    http: Callable[[], httpx.AsyncClient]
    # The database, where the simulated network keeps what it received.
    engine: AsyncEngine
    reader: AsyncEngine
    # Bytes and inspected dimensions of the channel's organization's media.
    read_media: MediaReader
    media_dimensions: MediaDimensions
    # Stores refreshed tokens (Bluesky sessions, X OAuth tokens) at once.
    store_credentials: CredentialsChanged
    # Signed public links to the organization's media, for networks that fetch media from a
    # URL; None where this process cannot make them.
    media_url: PublicMediaUrl | None
    # The organization's media item of an id, for media an option names besides the target's
    # own (YouTube's custom thumbnail); None where this process cannot read the library.
    find_media: MediaLookup | None


# provider id -> factory of its real adapter, built per call around the process's shared parts.
AdapterFactory = Callable[[ChannelContext, AdapterServices], ProviderAdapter]


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


def _bluesky(channel: ChannelContext, services: AdapterServices) -> ProviderAdapter:
    return BlueskyAdapter(
        read_media=services.read_media,
        on_credentials_changed=services.store_credentials,
        media_dimensions=services.media_dimensions,
        http=services.http(),
    )


def _mastodon(channel: ChannelContext, services: AdapterServices) -> ProviderAdapter:
    # Mastodon access tokens do not expire and are never rotated: nothing to store back.
    return MastodonAdapter(read_media=services.read_media, http=services.http())


def _x(channel: ChannelContext, services: AdapterServices) -> ProviderAdapter:
    # Without the X app an access token cannot be refreshed: it works until it expires, then
    # the channel needs reconnecting (the adapter says so).
    return XAdapter(
        app=x_app(services.settings),
        read_media=services.read_media,
        on_credentials_changed=services.store_credentials,
        http=services.http(),
    )


def _instagram(channel: ChannelContext, services: AdapterServices) -> ProviderAdapter:
    # Instagram fetches media from signed public links; refreshed long-lived tokens are stored.
    return InstagramAdapter(
        http=services.http(),
        media_url=services.media_url,
        on_credentials_changed=services.store_credentials,
        graph_version=services.settings.meta_graph_version,
    )


def _threads(channel: ChannelContext, services: AdapterServices) -> ProviderAdapter:
    # Threads has its own API version path (v1.0), not the Graph API version setting, and its
    # long-lived tokens are refreshed with the token alone: no app needed here.
    return ThreadsAdapter(
        media_url=services.media_url,
        on_credentials_changed=services.store_credentials,
        http=services.http(),
    )


def _facebook(channel: ChannelContext, services: AdapterServices) -> ProviderAdapter:
    # Page tokens do not expire and are never refreshed: nothing to store back. The app secret
    # signs every call (appsecret_proof) when the deployment's Facebook app is configured.
    secret = services.settings.facebook_client_secret
    return FacebookAdapter(
        http=services.http(),
        media_url=services.media_url,
        graph_version=services.settings.meta_graph_version,
        app_secret=secret.get_secret_value() if secret is not None else None,
    )


def _youtube(channel: ChannelContext, services: AdapterServices) -> ProviderAdapter:
    # Google access tokens last an hour: the app refreshes them, and the new ones are stored.
    return YouTubeAdapter(
        app=oauth_app(services.settings, "youtube"),
        read_media=services.read_media,
        find_media=services.find_media,
        on_credentials_changed=services.store_credentials,
        http=services.http(),
    )


def _tiktok(channel: ChannelContext, services: AdapterServices) -> ProviderAdapter:
    # Videos are uploaded from storage (or pulled from signed links once their domain is
    # verified at TikTok); photos are always pulled. Access tokens last a day: the app refreshes
    # them, and the rotated tokens are stored.
    settings = services.settings
    return TikTokAdapter(
        app=oauth_app(settings, "tiktok"),
        read_media=services.read_media,
        media_url=services.media_url,
        on_credentials_changed=services.store_credentials,
        http=services.http(),
        audited=settings.tiktok_audited,
        pull_from_url=settings.tiktok_pull_from_url,
    )


def _linkedin(channel: ChannelContext, services: AdapterServices) -> ProviderAdapter:
    # The app refreshes tokens (programmatic refresh tokens); every call names the deployment's
    # LinkedIn-Version.
    return LinkedInAdapter(
        read_media=services.read_media,
        app=oauth_app(services.settings, "linkedin"),
        on_credentials_changed=services.store_credentials,
        http=services.http(),
        version=services.settings.linkedin_version,
    )


def _pinterest(channel: ChannelContext, services: AdapterServices) -> ProviderAdapter:
    # Images are fetched by Pinterest from signed public links, videos uploaded; tokens are
    # refreshed with the deployment's app and stored back.
    return PinterestAdapter(
        http=services.http(),
        app=oauth_app(services.settings, "pinterest"),
        media_url=services.media_url,
        read_media=services.read_media,
        on_credentials_changed=services.store_credentials,
    )


REAL_ADAPTERS: dict[str, AdapterFactory] = {
    "bluesky": _bluesky,
    "mastodon": _mastodon,
    "x": _x,
    "instagram": _instagram,
    "threads": _threads,
    "facebook": _facebook,
    "youtube": _youtube,
    "tiktok": _tiktok,
    "linkedin": _linkedin,
    "pinterest": _pinterest,
}
# Real adapters that also need deployment configuration, and whether `settings` has it.
# Bluesky (app passwords) and Mastodon (any instance: the app is registered on it when a
# channel is connected) need none.
NEEDS_CONFIGURATION: dict[str, Callable[[Settings], bool]] = {
    "x": lambda settings: settings.x_client_id is not None,
}
# provider id -> how its accounts connect through OAuth (its package's oauth.py). Each of these
# needs the deployment's app: it is configured exactly when PRESSROOM_{PROVIDER}_CLIENT_ID and
# _CLIENT_SECRET are both set (contract section 13).
CONNECTORS: dict[str, OAuthConnector] = {
    "instagram": InstagramConnector(),
    "threads": THREADS_CONNECTOR,
    "facebook": FACEBOOK_CONNECTOR,
    "youtube": YOUTUBE_CONNECTOR,
    "tiktok": TIKTOK_CONNECTOR,
    "linkedin": LINKEDIN_CONNECTOR,
    "pinterest": PINTEREST_CONNECTOR,
}


def configured_providers(settings: Settings | None = None) -> frozenset[str]:
    """Providers this deployment can connect and publish to for real (`configured` in the
    provider declarations): the sandbox, plus every provider with a registered adapter whose
    deployment configuration, if it needs any, is present in `settings`."""
    configured = set(ALWAYS_CONFIGURED)
    for provider in REAL_ADAPTERS:
        if provider in CONNECTORS:
            if settings is not None and not missing_app_settings(settings, provider):
                configured.add(provider)
            continue
        needs = NEEDS_CONFIGURATION.get(provider)
        if needs is None or (settings is not None and needs(settings)):
            configured.add(provider)
    return frozenset(configured)


def adapter_for(channel: ChannelContext, services: AdapterServices) -> ProviderAdapter:
    """The adapter that acts for `channel`."""
    if channel.simulated or channel.provider == "sandbox":
        declaration = DECLARATIONS.get(channel.provider)
        return SandboxAdapter(
            services.engine,
            autocommit=services.reader,
            latency_seconds=services.settings.sandbox_latency_ms / 1000,
            metrics=list(declaration.metrics) if declaration is not None else list(ALL_METRICS),
        )
    factory = REAL_ADAPTERS.get(channel.provider)
    if factory is None:
        return UnconfiguredAdapter(channel.provider)
    return factory(channel, services)


def revoked_at_provider(provider: str, simulated: bool) -> bool:
    """Whether a channel's stored credentials are tokens of a real network, which a disconnect
    must revoke there (the sandbox and simulated channels hold none)."""
    return not simulated and provider in REAL_ADAPTERS


async def revoke_credentials(channel: ChannelContext, services: AdapterServices) -> Revocation:
    """Revoke a disconnected channel's tokens through its adapter; `unsupported` when the
    adapter has no way to. Raises ProviderError."""
    adapter = adapter_for(channel, services)
    if not isinstance(adapter, RevokingAdapter):
        return "unsupported"
    return await adapter.revoke(channel)


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
