"""A minimal forward proxy on 127.0.0.1 for tests: it answers `CONNECT host:port` by opening a
tunnel to the address the test maps that host to (it never resolves a name), and refuses
anything else. It records each request line and its headers."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from dataclasses import field
from types import TracebackType
from typing import Self


@dataclass
class ProxiedRequest:
    line: str
    headers: dict[str, str] = field(default_factory=dict)


class ForwardProxy:
    def __init__(self, routes: dict[str, tuple[str, int]]) -> None:
        """`routes`: `host:port` as the client asks for it -> the address to tunnel to."""
        self.routes = routes
        self.requests: list[ProxiedRequest] = []
        self._server: asyncio.Server | None = None
        self._tunnels: set[asyncio.Task[None]] = set()

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._tunnels:
            task.cancel()
        await asyncio.gather(*self._tunnels, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tunnels.add(task)
        try:
            await self._tunnel(reader, writer)
        finally:
            self._tunnels.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _tunnel(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = (await reader.readline()).decode("latin-1").strip()
        request = ProxiedRequest(line)
        while (header := (await reader.readline()).decode("latin-1").strip()) != "":
            name, _, value = header.partition(":")
            request.headers[name.strip().lower()] = value.strip()
        self.requests.append(request)
        method, _, target = line.partition(" ")
        target = target.rsplit(" ", 1)[0]
        if method != "CONNECT" or target not in self.routes:
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            return
        upstream_reader, upstream_writer = await asyncio.open_connection(*self.routes[target])
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        try:
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        finally:
            upstream_writer.close()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    with contextlib.suppress(OSError):
        if sink.can_write_eof():
            sink.write_eof()
