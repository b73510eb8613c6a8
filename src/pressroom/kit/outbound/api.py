"""The HTTP client a process uses for third-party APIs (the social networks), shared by every call.

One `httpx.AsyncClient` per process (owned by the Runtime, closed on shutdown) keeps connections
alive between calls instead of a TLS handshake per call.

Some of the hosts it reaches are chosen by API users, not by the operator: a Mastodon instance
named when a channel is connected, the PDS a Bluesky account's DID document points to. So, like
webhook deliveries, every new connection resolves its host, refuses it if any answer is a
loopback, private, link-local or otherwise non-public address (`RefusedDestination`, the cause of
the httpx.ConnectError the caller sees), and connects to the vetted address (TLS and the Host
header keep the name), so a DNS answer that changes between a check and the connect cannot
redirect a request carrying a token into the service's own network. Redirects are not followed
(following one would resend the bearer token to wherever it points); netrc is not read.

The operator's forward proxy is honoured (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`,
proxy.py): a request to a host it routes through the proxy goes there (`CONNECT` for https,
TLS still end to end with the provider). The proxy is the operator's choice, so its own address
is not vetted; the destination still is, as far as this host can: an IP literal must be public,
a name this host resolves must resolve to public addresses only (a Mastodon instance whose name
points into the private network is refused, proxy or not), and a name only the proxy can
resolve is left to the proxy's own egress rules (give it rules refusing private ranges).
"""

from __future__ import annotations

import functools
import ssl

import httpx

from pressroom.kit.outbound.proxy import ProxyRoutes
from pressroom.kit.outbound.transport import PinnedNetworkBackend
from pressroom.kit.outbound.transport import PinnedTransport

# Reads and small writes answer within seconds; a large upload may take minutes to send.
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0, write=300.0)
USER_AGENT = "Pressroom (self-hosted social publishing)"
# Connections kept per host; the publisher runs up to its concurrency at once.
MIN_CONNECTIONS_PER_HOST = 8
# Idle keep-alive connections are closed after this long (and the host resolved again).
KEEPALIVE_EXPIRY_SECONDS = 30.0


@functools.cache
def tls_context() -> ssl.SSLContext:
    # Loading the CA bundle takes ~0.1 s: once a process.
    return httpx.create_ssl_context()


def build_api_client(
    *,
    connections_per_host: int = MIN_CONNECTIONS_PER_HOST,
    network_backend: PinnedNetworkBackend | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> httpx.AsyncClient:
    """The process's client for third-party APIs (see the module docstring). Timeouts are sized
    for media uploads; there is no total deadline per request, callers bound their work. The
    environment's proxy settings are read now; ValueError for a proxy that is not http(s)."""
    transport = PinnedTransport(
        ssl_context=ssl_context or tls_context(),
        network_backend=network_backend or PinnedNetworkBackend(vet_every_connection=True),
        max_connections_per_host=max(MIN_CONNECTIONS_PER_HOST, connections_per_host),
        keepalive_expiry=KEEPALIVE_EXPIRY_SECONDS,
        deadline_seconds=None,
        proxy=ProxyRoutes.from_environment(),
    )
    return httpx.AsyncClient(
        transport=transport,
        timeout=DEFAULT_TIMEOUT,
        follow_redirects=False,
        # httpx's own reading of the environment would mount proxy transports that bypass
        # the vetting above (and read netrc): the transport routes proxies itself.
        trust_env=False,
        headers={"User-Agent": USER_AGENT},
    )
