"""Which adapter acts for a channel, and which providers this deployment can publish to.

The publisher, the metrics poller and the channel health check all go through
`adapter_for(channel)`. The sandbox, and every channel connected with `--simulated`, get the
simulator; a real network gets its adapter once a later issue registers one in
`REAL_ADAPTERS` (Bluesky, Mastodon and X are next). A channel whose provider has no adapter in
this deployment gets one that fails every call with an actionable, permanent error.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from pressroom.providers.declarations import ALWAYS_CONFIGURED, DECLARATIONS
from pressroom.publishing.adapters.base import (
    ChannelContext,
    HealthResult,
    ProviderAdapter,
    ProviderError,
    PublishRequest,
    PublishResult,
)
from pressroom.publishing.adapters.sandbox import ALL_METRICS, SandboxAdapter

if TYPE_CHECKING:
    from pressroom.config import Settings
    from pressroom.runtime import Runtime

# provider id -> factory of its real adapter. Empty until real adapters exist.
AdapterFactory = Callable[[ChannelContext, "Runtime | None"], ProviderAdapter]
REAL_ADAPTERS: dict[str, AdapterFactory] = {}


def configured_providers(settings: Settings | None = None) -> frozenset[str]:
    """Providers this deployment can connect and publish to for real (`configured` in the
    provider declarations): the sandbox, plus every provider with a registered adapter.
    `settings` is for adapters that need deployment configuration (an OAuth client id)."""
    return frozenset(ALWAYS_CONFIGURED | set(REAL_ADAPTERS))


def adapter_for(channel: ChannelContext, runtime: Runtime | None = None) -> ProviderAdapter:
    """The adapter that acts for `channel`.

    Pass the process's `runtime` wherever one exists: the sandbox keeps its published posts
    in the database and takes its latency from the settings. Without it, the sandbox can
    still report metrics and health, but cannot publish or delete."""
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
    return factory(channel, runtime)


class UnconfiguredAdapter:
    """Stands in for a network this deployment has no adapter for: every call fails,
    permanently, saying so (never a false success)."""

    def __init__(self, provider: str) -> None:
        self.provider = provider

    def _error(self) -> ProviderError:
        return ProviderError(
            "provider_unavailable",
            f"This deployment has no adapter configured for {self.provider}; connect the "
            "channel with --simulated, or configure the provider.",
            retryable=False,
        )

    async def publish(self, request: PublishRequest) -> PublishResult:
        raise self._error()

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        raise self._error()

    async def fetch_metrics(
        self, channel: ChannelContext, provider_post_id: str, published_at: datetime
    ) -> dict[str, int]:
        raise self._error()

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        return HealthResult(
            state="degraded", reason=f"No adapter is configured for {self.provider}."
        )
