"""The HTTP client a process uses for every provider API, shared by all adapters.

One `httpx.AsyncClient` per process (owned by the Runtime, closed on shutdown) keeps connections
alive between publishes instead of a TLS handshake per call.

Some of the hosts it reaches are chosen by API users, not by the operator: a Mastodon instance
named when a channel is connected, the PDS a Bluesky account's DID document points to. So, like
webhook deliveries (webhooks/transport.py, whose transport it reuses), every new connection
resolves its host, refuses it if any answer is a loopback, private, link-local or otherwise
non-public address, and connects to the vetted address (TLS and the Host header keep the name), so
a DNS answer that changes between a check and the connect cannot redirect a request with a
channel's token into the service's own network. Redirects are not followed and nothing (proxies,
netrc) is taken from the environment.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import httpcore
import httpx

from pressroom.kit.outbound.destination import DestinationBlocked
from pressroom.kit.outbound.transport import PinnedNetworkBackend, PinnedTransport
from pressroom.providers.http import (
    DEFAULT_TIMEOUT,
    USER_AGENT,
    RefusedDestination,
    tls_context,
)

# Connections kept per provider host; the publisher runs up to its concurrency at once.
MIN_CONNECTIONS_PER_HOST = 8
# Idle keep-alive connections are closed after this long (and the host resolved again).
KEEPALIVE_EXPIRY_SECONDS = 30.0


class VettedNetworkBackend(PinnedNetworkBackend):
    """Resolves and vets the host of every new connection (a fresh answer each time: provider
    APIs sit behind CDNs whose addresses change), then connects to the vetted address."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                await self.vet(host, port)
        except DestinationBlocked as exc:
            raise RefusedDestination(exc.reason) from None
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"resolving {host} timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(f"could not resolve {host}: {exc}") from exc
        # The address just vetted is recorded: the parent connects there.
        return await super().connect_tcp(
            host,
            port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise RefusedDestination("provider APIs are never reached over a Unix socket")


def build_provider_client(
    *,
    connections_per_host: int = MIN_CONNECTIONS_PER_HOST,
    network_backend: PinnedNetworkBackend | None = None,
) -> httpx.AsyncClient:
    """The process's client for provider APIs (see the module docstring). Timeouts are the
    adapters' (sized for media uploads); there is no total deadline per request, the publisher
    bounds each publish instead."""
    transport = PinnedTransport(
        ssl_context=tls_context(),
        network_backend=network_backend or VettedNetworkBackend(),
        max_connections_per_host=max(MIN_CONNECTIONS_PER_HOST, connections_per_host),
        keepalive_expiry=KEEPALIVE_EXPIRY_SECONDS,
        deadline_seconds=None,
    )
    return httpx.AsyncClient(
        transport=transport,
        timeout=DEFAULT_TIMEOUT,
        follow_redirects=False,
        trust_env=False,
        headers={"User-Agent": USER_AGENT},
    )
