"""The network stream of a pinned outbound connection (kit/outbound/transport.py)."""

from __future__ import annotations

import select
import socket
import ssl
from typing import Any

import httpcore

# Writes smaller than this together are sent as one (see ConnectionStream): a request's head
# and a webhook's body go out in one TLS record.
COALESCED_BYTES = 64 * 1024


class ConnectionStream(httpcore.AsyncNetworkStream):
    """A connection's network stream that looks its socket up once and sends each request in
    one piece.

    httpcore asks every pooled connection for its socket (`has_expired`) on each request and
    each response close; through anyio's TLS stream every such lookup builds a dict of
    closures. The socket of a connection never changes, so it is looked up once (measured:
    about a fifth of a webhook attempt's CPU, bench/README.md).

    httpcore writes a request's head and its body separately: two TLS records and two sends
    for a webhook of a kilobyte. Small writes are held until the first read (when the request
    is complete and its answer awaited) or until they add up to `COALESCED_BYTES`, then sent
    together; a large body still goes out as it comes."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._socket: Any = None
        self._held: list[bytes] = []
        self._held_bytes = 0
        self._write_timeout: float | None = None

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        if self._held:
            await self._send_held()
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        if not buffer:
            return
        self._held.append(buffer)
        self._held_bytes += len(buffer)
        self._write_timeout = timeout
        if self._held_bytes >= COALESCED_BYTES:
            await self._send_held()

    async def _send_held(self) -> None:
        data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
        self._held.clear()
        self._held_bytes = 0
        await self._inner.write(data, self._write_timeout)

    async def aclose(self) -> None:
        self._held.clear()  # an unfinished request: nothing waits for its answer
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
    ) -> httpcore.AsyncNetworkStream:
        if self._held:
            await self._send_held()
        return ConnectionStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        if info == "socket":
            return self._raw_socket()
        if info == "is_readable":
            # Asked of every idle pooled connection: data (or EOF) waiting means the server
            # closed it. A socket that is gone counts as readable, so it is discarded.
            sock = self._raw_socket()
            descriptor = sock.fileno() if sock is not None else -1
            if descriptor < 0:
                return True
            # poll, not select: select cannot watch descriptors above 1023.
            poller = select.poll()
            poller.register(descriptor, select.POLLIN)
            return bool(poller.poll(0))
        return self._inner.get_extra_info(info)

    def _raw_socket(self) -> socket.socket | None:
        if self._socket is None:
            self._socket = self._inner.get_extra_info("socket")
        return self._socket  # type: ignore[no-any-return]
