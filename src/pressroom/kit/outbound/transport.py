"""Outbound HTTP pinned to vetted addresses: webhook deliveries and provider API calls.

A webhook attempt goes: `client.vet_destination(url)` resolves the host and checks every answer (a
non-public one raises DestinationBlocked), then `client.post(url, ...)` connects to the vetted
address, while TLS (SNI, certificate check) and the Host header keep using the name. This closes
the gap a separate "resolve, check, then let the OS resolve again" would leave for DNS rebinding.

How it plugs into httpx: httpx 0.28 has no public switch for httpcore's network backend, so
`PinnedTransport` is an `httpx.AsyncBaseTransport` (httpx's documented custom-transport API) that
drives `httpcore.AsyncConnectionPool(network_backend=...)` (httpcore's documented backend API)
directly, one pool per origin so `max_connections_per_host` is a real per-host limit. It also maps
httpcore's exceptions to httpx's, as httpx's own transport does, and enforces a total deadline per
request, since httpx's timeouts apply to each network operation separately and a receiver dripping
one byte at a time would otherwise hold a worker indefinitely.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import socket
import ssl
import time
from collections.abc import AsyncIterable
from collections.abc import AsyncIterator
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any

import httpcore
import httpx

from pressroom.kit.outbound.destination import HTTPS_PORT
from pressroom.kit.outbound.destination import DestinationBlocked
from pressroom.kit.outbound.destination import check_destination_url
from pressroom.kit.outbound.destination import normalize_hostname
from pressroom.kit.outbound.destination import resolve_destination
from pressroom.kit.outbound.proxy import Proxy
from pressroom.kit.outbound.proxy import ProxyRoutes
from pressroom.kit.outbound.stream import ConnectionStream

# httpx logs each request at INFO with its full URL. A webhook URL may carry a token in its path
# (many receivers authenticate that way), and a line per delivery is noise: warnings only.
logging.getLogger("httpx").setLevel(logging.WARNING)

USER_AGENT = "Pressroom-Webhooks/1"
# httpcore writes a request's headers and body separately; without TCP_NODELAY the body waits
# for the receiver to acknowledge the headers (Nagle's algorithm and delayed ACKs).
SOCKET_OPTIONS: tuple[tuple[int, int, int], ...] = ((socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),)
KEEPALIVE_EXPIRY_SECONDS = 15.0
# A destination vetted for the proxy is vetted again after this long (as a pooled connection
# is resolved again once it expires), not at every request.
PROXIED_VETTING_SECONDS = 30.0

# Most specific first: the first match wins.
_EXCEPTION_MAP: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.ProxyError, httpx.ProxyError),
)


@contextlib.contextmanager
def _httpx_exceptions(request: httpx.Request, deadline_seconds: float | None) -> Iterator[None]:
    """Re-raise httpcore errors, and an expired deadline, as the httpx errors callers expect."""
    try:
        yield
    except TimeoutError as exc:
        message = (
            "the request timed out"
            if deadline_seconds is None
            else f"the request exceeded its total deadline of {deadline_seconds} s"
        )
        raise httpx.TimeoutException(message, request=request) from exc
    except Exception as exc:
        for core_error, httpx_error in _EXCEPTION_MAP:
            if isinstance(exc, core_error):
                raise httpx_error(str(exc), request=request) from exc
        raise  # DestinationBlocked and anything unexpected pass through unchanged


class RefusedDestination(httpcore.ConnectError):
    """A host that must not be contacted: it resolves to a loopback, private or otherwise
    non-public address. `reason` names the host and the kind of address, never the address
    itself, a URL path or a query."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PinnedNetworkBackend(httpcore.AsyncNetworkBackend):
    """Connects each host to the address vetted for it, never to a fresh OS resolution.

    `vet(host, port)` resolves and records the address; `connect_tcp` uses the recorded address,
    or vets on the spot if none is recorded. Overridden hosts (PRESSROOM_WEBHOOK_RESOLVE) go to
    their configured address and port.
    """

    def __init__(
        self,
        overrides: Mapping[str, tuple[str, int]] | None = None,
        backend: httpcore.AsyncNetworkBackend | None = None,
        *,
        vet_every_connection: bool = False,
    ) -> None:
        self._overrides = {normalize_hostname(h): a for h, a in (overrides or {}).items()}
        self._backend = backend if backend is not None else httpcore.AnyIOBackend()
        self._vetted: dict[tuple[str, int], tuple[str, int]] = {}
        # Destinations reached through the proxy, and until when their vetting holds.
        self._proxied: dict[tuple[str, int], float] = {}
        # Webhook attempts vet the destination before each send (`DeliveryClient`) and connect
        # to that answer; API clients have no such step, so every new connection resolves and
        # vets its host afresh (APIs sit behind CDNs whose addresses change).
        self._vet_every_connection = vet_every_connection

    async def vet(self, host: str, port: int) -> tuple[str, int]:
        """Resolve `host` now, check every answer, and record the address to connect to.

        Raises DestinationBlocked for a non-public answer; resolver errors (OSError) propagate.
        """
        key = self._key(host, port)
        # Forget the previous answer first: after a failed vetting, nothing may connect using it.
        self._vetted.pop(key, None)
        address = await resolve_destination(host, port, self._overrides)
        self._vetted[key] = address
        return address

    async def vet_proxied(self, host: str, port: int, resolve_seconds: float | None) -> None:
        """Vet a destination the operator's proxy will connect to. The proxy is the operator's
        choice, so its own address is trusted; the destination is judged as far as this host
        can: an IP literal must be public, and a name this host resolves must resolve to
        public addresses only (refused otherwise: the proxy, usually inside the same network,
        would reach the private address). A name this host cannot resolve (a network whose
        only way out is the proxy) is left to the proxy, which resolves it under its own
        egress rules. Raises the refusal `connect_tcp` raises."""
        key = self._key(host, port)
        now = time.monotonic()
        if self._proxied.get(key, 0.0) > now:
            return
        try:
            async with asyncio.timeout(resolve_seconds):
                await resolve_destination(host, port, self._overrides)
        except DestinationBlocked as exc:
            self._proxied.pop(key, None)
            raise self._refusal(exc.reason) from None
        except (OSError, TimeoutError):
            pass  # not resolvable here: the proxy's to resolve
        if len(self._proxied) > 4096:
            self._proxied = {k: until for k, until in self._proxied.items() if until > now}
        self._proxied[key] = now + PROXIED_VETTING_SECONDS

    @property
    def override_hosts(self) -> frozenset[str]:
        """The names PRESSROOM_WEBHOOK_RESOLVE sends elsewhere (tests only)."""
        return frozenset(self._overrides)

    def vetted_address(self, host: str, port: int) -> tuple[str, int] | None:
        """The address the next connection to `host:port` will use, if one is recorded."""
        return self._vetted.get(self._key(host, port))

    @staticmethod
    def _key(host: str, port: int) -> tuple[str, int]:
        try:
            return normalize_hostname(host), port
        except ValueError:
            return host, port

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        address = None if self._vet_every_connection else self.vetted_address(host, port)
        if address is None:
            try:
                async with asyncio.timeout(timeout):
                    address = await self.vet(host, port)
            except DestinationBlocked as exc:
                raise self._refusal(exc.reason) from None
            except TimeoutError as exc:
                raise httpcore.ConnectTimeout(f"resolving {host} timed out") from exc
            except OSError as exc:
                raise httpcore.ConnectError(f"could not resolve {host}: {exc}") from exc
        ip, ip_port = address
        stream = await self._backend.connect_tcp(
            ip,
            ip_port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )
        return ConnectionStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise self._refusal("nothing is sent over a Unix socket")

    def _refusal(self, reason: str) -> Exception:
        """Webhook attempts report a blocked destination as such (DestinationBlocked, which
        passes through httpx unchanged); API clients see a ConnectError whose cause says why."""
        if self._vet_every_connection:
            return RefusedDestination(reason)
        return DestinationBlocked(reason)

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class _DeadlineResponseStream(httpx.AsyncByteStream):
    """The response body, read under the request's total deadline."""

    def __init__(
        self,
        stream: AsyncIterable[bytes],
        request: httpx.Request,
        deadline: float | None,
        deadline_seconds: float | None,
    ) -> None:
        self._stream = stream
        self._request = request
        self._deadline = deadline
        self._deadline_seconds = deadline_seconds

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = aiter(self._stream)
        while True:
            with _httpx_exceptions(self._request, self._deadline_seconds):
                async with asyncio.timeout_at(self._deadline):
                    try:
                        chunk = await anext(chunks)
                    except StopAsyncIteration:
                        return
            yield chunk

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            with _httpx_exceptions(self._request, self._deadline_seconds):
                await close()


class PinnedTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over connections opened by a PinnedNetworkBackend, one pool per origin; with
    `proxy`, origins it routes through a proxy are reached through it (CONNECT for https), the
    destination vetted first (`PinnedNetworkBackend.vet_proxied`)."""

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext,
        network_backend: PinnedNetworkBackend,
        max_connections_per_host: int = 4,
        keepalive_expiry: float = KEEPALIVE_EXPIRY_SECONDS,
        deadline_seconds: float | None = None,
        proxy: ProxyRoutes | None = None,
    ) -> None:
        if max_connections_per_host < 1:
            raise ValueError("max_connections_per_host must be at least 1")
        self.network_backend = network_backend
        self._ssl_context = ssl_context
        self._max_connections = max_connections_per_host
        self._keepalive_expiry = keepalive_expiry
        self._deadline_seconds = deadline_seconds
        self._proxy = proxy
        self._pools: dict[tuple[bytes, bytes, int | None], httpcore.AsyncConnectionPool] = {}

    def _pool_for(self, url: httpx.URL, proxy: Proxy | None) -> httpcore.AsyncConnectionPool:
        origin = (url.raw_scheme, url.raw_host, url.port)
        pool = self._pools.get(origin)
        if pool is None:
            common: dict[str, Any] = {
                "ssl_context": self._ssl_context,
                "max_connections": self._max_connections,
                "max_keepalive_connections": self._max_connections,
                "keepalive_expiry": self._keepalive_expiry,
                "http1": True,
                "http2": False,
                "retries": 0,  # the callers own retries and their backoff
                "socket_options": SOCKET_OPTIONS,
            }
            if proxy is None:
                pool = httpcore.AsyncConnectionPool(network_backend=self.network_backend, **common)
            else:
                # The proxy's own address is the operator's choice: connected to as given.
                pool = httpcore.AsyncHTTPProxy(
                    proxy_url=str(proxy.url), proxy_auth=proxy.auth, **common
                )
            self._pools[origin] = pool
        return pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not isinstance(request.stream, httpx.AsyncByteStream):
            raise TypeError("PinnedTransport needs an async request body")
        deadline = None
        if self._deadline_seconds is not None:
            deadline = asyncio.get_running_loop().time() + self._deadline_seconds
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        proxy = self._proxy.proxy_for(request.url) if self._proxy is not None else None
        with _httpx_exceptions(request, self._deadline_seconds):
            async with asyncio.timeout_at(deadline):
                if proxy is not None:
                    await self.network_backend.vet_proxied(
                        request.url.host,
                        request.url.port or (HTTPS_PORT if request.url.scheme == "https" else 80),
                        request.extensions.get("timeout", {}).get("connect"),
                    )
                pool = self._pool_for(request.url, proxy)
                response = await pool.handle_async_request(core_request)
        if not isinstance(response.stream, AsyncIterable):
            raise TypeError("httpcore returned a synchronous response body")
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_DeadlineResponseStream(
                response.stream, request, deadline, self._deadline_seconds
            ),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.aclose()


class _NoCookies(httpx.Cookies):
    """A cookie jar that keeps nothing: each delivery stands alone. A receiver's Set-Cookie
    must never ride along on later deliveries, which may go to another organization's
    endpoint on the same host (and reading every response's cookies costs CPU per attempt)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


class DeliveryClient(httpx.AsyncClient):
    """An httpx.AsyncClient for webhook attempts; call `vet_destination` before each send."""

    _no_cookies = _NoCookies()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._no_cookies

    @cookies.setter
    def cookies(self, cookies: object) -> None:
        # httpx's constructor sets an empty jar; there is never anything else to keep.
        if cookies:
            raise ValueError("webhook deliveries carry no cookies")

    def __init__(self, *, transport: PinnedTransport, timeout: float) -> None:
        super().__init__(
            transport=transport,
            timeout=timeout,
            follow_redirects=False,  # a redirect is a failed attempt, never followed
            trust_env=False,  # no proxies or netrc from the environment
            headers={"User-Agent": USER_AGENT},
        )
        self.network_backend = transport.network_backend
        self._resolve_timeout = timeout

    async def vet_destination(self, url: str | httpx.URL) -> httpx.URL:
        """Re-check the URL and resolve its host now; the next connection goes to that address.
        Returns the URL parsed, to send the request to.

        Raises DestinationBlocked if the URL breaks a rule or the host has a non-public answer,
        httpx.ConnectError if the name does not resolve, httpx.ConnectTimeout if resolving
        takes longer than the client's timeout.
        """
        reasons = _url_reasons(str(url), self.network_backend.override_hosts)
        if reasons:
            raise DestinationBlocked("; ".join(reasons))
        parsed = _parsed_url(url) if isinstance(url, str) else url
        host = parsed.raw_host.decode("ascii")
        try:
            async with asyncio.timeout(self._resolve_timeout):
                await self.network_backend.vet(host, parsed.port or HTTPS_PORT)
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"resolving {host} timed out") from exc
        except OSError as exc:
            raise httpx.ConnectError(f"could not resolve {host}: {exc}") from exc
        return parsed


# The URL text rules are pure: judging the same URL again at every attempt need not cost anything.
_url_reasons = functools.lru_cache(maxsize=4096)(check_destination_url)
# Nor parsing it (httpx.URL is immutable): a few endpoints receive attempt after attempt.
_parsed_url = functools.lru_cache(maxsize=4096)(httpx.URL)


def delivery_ssl_context(ca_bundle: str | None) -> ssl.SSLContext:
    """Verify certificates against the system store, plus `ca_bundle` (tests) if given."""
    context = ssl.create_default_context()
    if ca_bundle:
        context.load_verify_locations(cafile=ca_bundle)
    return context


def make_delivery_client(
    *,
    timeout: float,
    ca_bundle: str | None,
    overrides: dict[str, tuple[str, int]],
    max_connections_per_host: int = 4,
) -> DeliveryClient:
    """The client the delivery worker sends attempts with.

    HTTP/1.1 with keep-alive, redirects not followed, nothing taken from the environment, `timeout`
    seconds per network operation and in total per request, connections pinned to vetted
    addresses.
    """
    transport = PinnedTransport(
        ssl_context=delivery_ssl_context(ca_bundle),
        network_backend=PinnedNetworkBackend(overrides),
        max_connections_per_host=max_connections_per_host,
        deadline_seconds=timeout,
    )
    return DeliveryClient(transport=transport, timeout=timeout)
