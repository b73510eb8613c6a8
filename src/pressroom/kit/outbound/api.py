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
(following one would resend the bearer token to wherever it points) and nothing (proxies,
netrc) is taken from the environment.
"""

from __future__ import annotations

import functools
import ssl

import httpx

from pressroom.kit.outbound.transport import PinnedNetworkBackend, PinnedTransport

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
) -> httpx.AsyncClient:
    """The process's client for third-party APIs (see the module docstring). Timeouts are sized
    for media uploads; there is no total deadline per request, callers bound their work."""
    transport = PinnedTransport(
        ssl_context=tls_context(),
        network_backend=network_backend or PinnedNetworkBackend(vet_every_connection=True),
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
