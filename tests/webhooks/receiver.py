"""A real HTTPS webhook receiver on 127.0.0.1 for tests.

It serves a certificate for a public-looking name (default `hooks.example.com`) issued by a
throwaway trustme CA. Point the delivery client at it with the receiver's `overrides` (or
`resolve_setting` for PRESSROOM_WEBHOOK_RESOLVE) and `ca_bundle_path` (PRESSROOM_WEBHOOK_CA_BUNDLE):

    with WebhookReceiver() as receiver:
        receiver.respond(status=503, retry_after="7")
        ... deliver to receiver.url_for("/hook") ...
        (request,) = receiver.wait_for_requests(1)
        assert request.headers["webhook-id"] == event_id

Each connection is served on its own thread, so concurrent deliveries are handled concurrently.
Responses are scripted in a FIFO queue; when it is empty the default response (200) is sent.
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import ssl
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from types import TracebackType
from typing import Any
from typing import Self

import trustme


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received. Header names are lowercased."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    sni: str | None  # the TLS server name the client asked for
    connection: int  # 1-based number of the TCP connection it arrived on


@dataclass(frozen=True)
class ScriptedResponse:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering
    chunk_delay: float = 0.0  # if set, the body is written one byte at a time with this pause


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    timeout = 5  # drop idle keep-alive connections so stop() never waits long
    server: _TLSServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        body = self._read_body()
        receiver = self.server.receiver
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers=_lowercased(self.headers.items()),
            body=body,
            sni=self.server.local.sni,
            connection=self.server.local.connection,
        )
        scripted = receiver._record(request)
        try:
            if scripted.delay and receiver._stopping.wait(scripted.delay):
                self.close_connection = True
                return
            self.send_response(scripted.status)
            for name, value in scripted.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(scripted.body)))
            self.end_headers()
            if self.command == "HEAD":
                return
            if scripted.chunk_delay:
                for i in range(len(scripted.body)):
                    if receiver._stopping.wait(scripted.chunk_delay):
                        self.close_connection = True
                        return
                    self.wfile.write(scripted.body[i : i + 1])
                    self.wfile.flush()
            else:
                self.wfile.write(scripted.body)
        finally:
            receiver._finished(request.path)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""


def _lowercased(items: Any) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return headers


class _TLSServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = True
    # socketserver's default backlog is 5: a burst of new connections from several delivery
    # workers would overflow it, and a dropped SYN is retried only after a second, which reads
    # as a connect timeout to a healthy receiver.
    request_queue_size = 128

    def __init__(self, receiver: WebhookReceiver, context: ssl.SSLContext) -> None:
        self.receiver = receiver
        self.context = context
        self.local = threading.local()
        self.connections: set[socket.socket] = set()
        self.numbers: dict[socket.socket, int] = {}
        self.connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = self.socket.accept()
        number = self.receiver._accepted()
        with self.connections_lock:
            self.numbers[sock] = number
        return sock, address

    def finish_request(self, request: Any, client_address: Any) -> None:
        # The TLS handshake runs here, on the connection's own thread, so a slow or failing
        # client never blocks the accept loop.
        raw: socket.socket = request
        with self.connections_lock:
            self.connections.add(raw)
            self.local.connection = self.numbers.pop(raw, 0)
        self.local.sni = None
        tls: ssl.SSLSocket | None = None
        try:
            tls = self.context.wrap_socket(raw, server_side=True)
            with self.connections_lock:
                self.connections.add(tls)
            self.RequestHandlerClass(tls, client_address, self)  # type: ignore[arg-type]
        finally:
            with self.connections_lock:
                self.connections.discard(raw)
                if tls is not None:
                    self.connections.discard(tls)
            if tls is not None:
                tls.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that give up (timeouts, rejected certificates) are part of the tests.
        pass


class WebhookReceiver:
    """An HTTPS server on 127.0.0.1:<ephemeral port> that records requests and scripts replies."""

    def __init__(
        self, hostname: str = "hooks.example.com", *, extra_hostnames: tuple[str, ...] = ()
    ) -> None:
        self.hostname = hostname
        self.hostnames = (hostname, *extra_hostnames)
        self._ca = trustme.CA()
        self._dir = tempfile.TemporaryDirectory(prefix="pressroom-receiver-")
        self.ca_bundle_path = str(Path(self._dir.name) / "ca.pem")
        self._ca.cert_pem.write_to_path(self.ca_bundle_path)
        self._lock = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._script: deque[ScriptedResponse] = deque()
        self._path_scripts: dict[str, deque[ScriptedResponse]] = {}
        self._path_in_flight: dict[str, int] = {}
        self.max_in_flight_by_path: dict[str, int] = {}
        self._default = ScriptedResponse()
        self._accepted_count = 0
        self._in_flight = 0
        self.max_in_flight = 0
        self._stopping = threading.Event()
        self._server: _TLSServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> Self:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._ca.issue_cert(*self.hostnames).configure_cert(context)
        context.sni_callback = self._remember_sni
        self._server = _TLSServer(self, context)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            with server.connections_lock:
                open_connections = list(server.connections)
            for sock in open_connections:
                # socket.socket.shutdown on the fd wakes a handler blocked in recv without
                # touching the SSL object another thread is using.
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)
            server.server_close()  # joins the connection threads
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._dir.cleanup()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # addressing

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the receiver is not running")
        return int(self._server.server_address[1])

    def url_for(self, path: str = "/hook", hostname: str | None = None) -> str:
        return f"https://{hostname or self.hostname}{path}"

    @property
    def overrides(self) -> dict[str, tuple[str, int]]:
        """Resolve overrides sending every name of the certificate here."""
        return {name: ("127.0.0.1", self.port) for name in self.hostnames}

    @property
    def resolve_setting(self) -> str:
        """The same overrides as a PRESSROOM_WEBHOOK_RESOLVE value."""
        return ",".join(f"{name}=127.0.0.1:{self.port}" for name in self.hostnames)

    # scripting

    def respond(
        self,
        status: int = 200,
        *,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
        chunk_delay: float = 0.0,
        location: str | None = None,
        retry_after: str | int | None = None,
        times: int = 1,
        path: str | None = None,
    ) -> None:
        """Queue the reply for the next `times` requests (in arrival order); with `path`,
        for the next requests to that path only (these scripts are used first)."""
        all_headers = dict(headers or {})
        if location is not None:
            all_headers["Location"] = location
        if retry_after is not None:
            all_headers["Retry-After"] = str(retry_after)
        scripted = ScriptedResponse(status, body, all_headers, delay, chunk_delay)
        with self._lock:
            if path is None:
                self._script.extend([scripted] * times)
            else:
                self._path_scripts.setdefault(path, deque()).extend([scripted] * times)

    def set_default_response(self, status: int = 200, *, body: bytes = b"") -> None:
        """The reply once the scripted queue is empty."""
        with self._lock:
            self._default = ScriptedResponse(status, body)

    # observation

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def accepted_connections(self) -> int:
        """How many TCP connections were accepted (keep-alive reuse keeps this low)."""
        with self._lock:
            return self._accepted_count

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least `count` requests arrived; fail after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self._requests) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        f"expected {count} webhook requests, received {len(self._requests)}"
                    )
                self._lock.wait(remaining)
            return list(self._requests)

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self._script.clear()
            self._path_scripts.clear()
            self._path_in_flight.clear()
            self.max_in_flight_by_path.clear()
            self.max_in_flight = 0
            self._default = ScriptedResponse()

    # called from the server threads

    def _remember_sni(self, sslobj: Any, server_name: str | None, context: ssl.SSLContext) -> None:
        if self._server is not None:
            self._server.local.sni = server_name

    def _accepted(self) -> int:
        with self._lock:
            self._accepted_count += 1
            return self._accepted_count

    def _record(self, request: RecordedRequest) -> ScriptedResponse:
        with self._lock:
            self._requests.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            in_path = self._path_in_flight.get(request.path, 0) + 1
            self._path_in_flight[request.path] = in_path
            self.max_in_flight_by_path[request.path] = max(
                self.max_in_flight_by_path.get(request.path, 0), in_path
            )
            self._lock.notify_all()
            for_path = self._path_scripts.get(request.path)
            if for_path:
                return for_path.popleft()
            return self._script.popleft() if self._script else self._default

    def _finished(self, path: str) -> None:
        with self._lock:
            self._in_flight -= 1
            if path in self._path_in_flight:
                self._path_in_flight[path] -= 1
