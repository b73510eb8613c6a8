"""The delivery client against a real TLS receiver on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator

import httpcore
import httpx
import pytest

from pressroom.kit.outbound.destination import DestinationBlocked
from pressroom.kit.outbound.stream import COALESCED_BYTES
from pressroom.kit.outbound.stream import ConnectionStream
from pressroom.kit.outbound.transport import DeliveryClient
from pressroom.kit.outbound.transport import make_delivery_client

from .receiver import WebhookReceiver

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver("hooks.example.com", extra_hostnames=("other.example.com",)) as r:
        yield r


def client_for(
    receiver: WebhookReceiver,
    *,
    timeout: float = 5.0,
    ca_bundle: str | None = "receiver",
    overrides: dict[str, tuple[str, int]] | None = None,
    max_connections_per_host: int = 4,
) -> DeliveryClient:
    return make_delivery_client(
        timeout=timeout,
        ca_bundle=receiver.ca_bundle_path if ca_bundle == "receiver" else ca_bundle,
        overrides=receiver.overrides if overrides is None else overrides,
        max_connections_per_host=max_connections_per_host,
    )


async def test_request_reaches_the_vetted_address_with_the_name_in_sni_and_host(
    receiver: WebhookReceiver,
) -> None:
    url = receiver.url_for("/hook")
    async with client_for(receiver) as client:
        await client.vet_destination(url)
        assert client.network_backend.vetted_address("hooks.example.com", 443) == (
            "127.0.0.1",
            receiver.port,
        )
        response = await client.post(url, content=b'{"id":"evt_1"}')
        # The socket went to the vetted address while TLS verified the certificate by name.
        stream = response.extensions["network_stream"]
        assert stream.get_extra_info("server_addr") == ("127.0.0.1", receiver.port)
        assert stream.get_extra_info("ssl_object").server_hostname == "hooks.example.com"

    assert response.status_code == 200
    (request,) = receiver.requests
    assert request.method == "POST"
    assert request.path == "/hook"
    assert request.body == b'{"id":"evt_1"}'
    assert request.headers["host"] == "hooks.example.com"
    assert request.sni == "hooks.example.com"


async def test_connection_without_prior_vetting_resolves_and_pins_itself(
    receiver: WebhookReceiver,
) -> None:
    async with client_for(receiver) as client:
        response = await client.post(receiver.url_for("/x"), content=b"{}")
    assert response.status_code == 200
    assert receiver.requests[0].headers["host"] == "hooks.example.com"


async def test_certificate_for_another_name_is_rejected(receiver: WebhookReceiver) -> None:
    overrides = {"unlisted.example.com": ("127.0.0.1", receiver.port)}
    async with client_for(receiver, overrides=overrides) as client:
        with pytest.raises(httpx.ConnectError, match="certificate"):
            await client.post("https://unlisted.example.com/hook", content=b"{}")
    assert receiver.requests == []


async def test_certificate_from_an_untrusted_ca_is_rejected(receiver: WebhookReceiver) -> None:
    async with client_for(receiver, ca_bundle=None) as client:
        with pytest.raises(httpx.ConnectError, match="certificate"):
            await client.post(receiver.url_for(), content=b"{}")
    assert receiver.requests == []


async def test_redirect_is_returned_and_not_followed(receiver: WebhookReceiver) -> None:
    receiver.respond(302, location=receiver.url_for("/elsewhere"))
    async with client_for(receiver) as client:
        response = await client.post(receiver.url_for("/hook"), content=b"{}")
    assert response.status_code == 302
    assert response.headers["location"] == "https://hooks.example.com/elsewhere"
    assert [r.path for r in receiver.requests] == ["/hook"]


async def test_retry_after_reaches_the_caller(receiver: WebhookReceiver) -> None:
    receiver.respond(503, retry_after=7)
    async with client_for(receiver) as client:
        response = await client.post(receiver.url_for(), content=b"{}")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "7"


async def test_slow_receiver_times_out(receiver: WebhookReceiver) -> None:
    receiver.respond(200, delay=3.0)
    started = time.monotonic()
    async with client_for(receiver, timeout=0.3) as client:
        with pytest.raises(httpx.TimeoutException):
            await client.post(receiver.url_for(), content=b"{}")
    assert time.monotonic() - started < 2.0


async def test_dripping_body_hits_the_total_deadline(receiver: WebhookReceiver) -> None:
    # Each byte arrives well within the per-read timeout; only a total deadline stops it.
    receiver.respond(200, body=b"x" * 20, chunk_delay=0.1)
    started = time.monotonic()
    async with client_for(receiver, timeout=0.5) as client:
        with pytest.raises(httpx.TimeoutException, match="total deadline"):
            await client.post(receiver.url_for(), content=b"{}")
    assert time.monotonic() - started < 1.5


async def test_name_resolving_to_loopback_is_blocked_before_connecting(
    receiver: WebhookReceiver,
) -> None:
    async with client_for(receiver, overrides={}) as client:
        with pytest.raises(DestinationBlocked, match="localhost is not a public destination"):
            await client.post(f"https://localhost:{receiver.port}/hook", content=b"{}")
    assert receiver.accepted_connections == 0


async def test_vetting_blocks_a_local_destination(receiver: WebhookReceiver) -> None:
    async with client_for(receiver, overrides={}) as client:
        with pytest.raises(DestinationBlocked):
            await client.vet_destination("https://localhost/hook")
        with pytest.raises(DestinationBlocked, match="custom port"):
            await client.vet_destination("https://hooks.example.com:8443/hook")


async def test_keep_alive_reuses_one_connection(receiver: WebhookReceiver) -> None:
    async with client_for(receiver) as client:
        for _ in range(2):
            await client.vet_destination(receiver.url_for())
            response = await client.post(receiver.url_for(), content=b"{}")
            assert response.status_code == 200
    assert receiver.accepted_connections == 1
    assert [r.connection for r in receiver.requests] == [1, 1]


async def test_connections_per_host_are_limited(receiver: WebhookReceiver) -> None:
    receiver.respond(200, delay=0.2, times=2)
    async with client_for(receiver, max_connections_per_host=1) as client:
        responses = await asyncio.gather(
            *(client.post(receiver.url_for(), content=b"{}") for _ in range(2))
        )
    assert [r.status_code for r in responses] == [200, 200]
    assert receiver.accepted_connections == 1
    assert receiver.max_in_flight == 1


async def test_receiver_serves_concurrent_deliveries(receiver: WebhookReceiver) -> None:
    receiver.respond(200, delay=0.3, times=3)
    async with client_for(receiver) as client:
        responses = await asyncio.gather(
            *(client.post(receiver.url_for(f"/{i}"), content=b"{}") for i in range(3))
        )
    assert [r.status_code for r in responses] == [200, 200, 200]
    assert receiver.max_in_flight >= 2


async def test_proxy_settings_in_the_environment_are_ignored(
    receiver: WebhookReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    async with client_for(receiver) as client:
        response = await client.post(receiver.url_for(), content=b"{}")
    assert response.status_code == 200


def fake_dns(monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[str]]) -> list[str]:
    """Answer getaddrinfo from `answers` (no answer: NXDOMAIN), so no query leaves the host."""
    asked: list[str] = []

    async def getaddrinfo(host: str, port: int, **kwargs: object) -> list[tuple[object, ...]]:
        asked.append(host)
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in answers[host]
        ]

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", getaddrinfo)
    return asked


async def test_name_with_one_private_answer_is_blocked(
    receiver: WebhookReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_dns(monkeypatch, {"mixed.example.com": ["93.184.215.14", "10.0.0.7"]})
    async with client_for(receiver, overrides={}) as client:
        with pytest.raises(DestinationBlocked, match="resolves to a private address") as caught:
            await client.vet_destination("https://mixed.example.com/hook")
        assert "10.0.0.7" not in caught.value.reason
        assert client.network_backend.vetted_address("mixed.example.com", 443) is None


async def test_each_vetting_resolves_again_and_records_the_new_answer(
    receiver: WebhookReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = {"moving.example.com": ["93.184.215.14"]}
    asked = fake_dns(monkeypatch, answers)
    async with client_for(receiver, overrides={}) as client:
        await client.vet_destination("https://moving.example.com/hook")
        assert client.network_backend.vetted_address("moving.example.com", 443) == (
            "93.184.215.14",
            443,
        )
        answers["moving.example.com"] = ["127.0.0.1"]  # rebinding to loopback
        with pytest.raises(DestinationBlocked, match="loopback"):
            await client.vet_destination("https://moving.example.com/hook")
        assert client.network_backend.vetted_address("moving.example.com", 443) is None
    assert asked == ["moving.example.com", "moving.example.com"]


async def test_unresolvable_name_is_a_connect_error(
    receiver: WebhookReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_dns(monkeypatch, {})
    async with client_for(receiver, overrides={}) as client:
        with pytest.raises(httpx.ConnectError, match="could not resolve"):
            await client.vet_destination("https://gone.example.com/hook")
        with pytest.raises(httpx.ConnectError, match="could not resolve"):
            await client.post("https://gone.example.com/hook", content=b"{}")


class _FakeStream(httpcore.AsyncNetworkStream):
    """A network stream over one end of a socket pair; counts socket lookups, keeps writes."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lookups = 0
        self.writes: list[bytes] = []

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        return self.sock.recv(max_bytes)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        self.writes.append(buffer)
        self.sock.sendall(buffer)

    async def aclose(self) -> None:
        self.sock.close()

    def get_extra_info(self, info: str) -> object:
        if info == "socket":
            self.lookups += 1
            return self.sock
        return None


def test_idle_connection_closed_by_the_server_reads_as_readable() -> None:
    """httpcore discards a pooled connection whose socket is readable while idle (the server
    closed it); the socket is looked up once, not on every check."""
    ours, theirs = socket.socketpair()
    inner = _FakeStream(ours)
    stream = ConnectionStream(inner)
    try:
        assert stream.get_extra_info("is_readable") is False
        assert stream.get_extra_info("is_readable") is False
        theirs.close()  # the server drops the idle keep-alive connection
        assert stream.get_extra_info("is_readable") is True
        assert stream.get_extra_info("socket") is ours
        assert inner.lookups == 1
        ours.close()  # a socket that is gone counts as readable: the pool discards it
        assert stream.get_extra_info("is_readable") is True
    finally:
        ours.close()
        theirs.close()


async def test_a_request_head_and_small_body_are_sent_in_one_write() -> None:
    """One TLS record and one send per webhook: what httpcore writes in pieces goes out
    together once the answer is awaited."""
    ours, theirs = socket.socketpair()
    inner = _FakeStream(ours)
    stream = ConnectionStream(inner)
    try:
        await stream.write(b"POST /hook HTTP/1.1\r\nContent-Length: 2\r\n\r\n")
        await stream.write(b"{}")
        await stream.write(b"")
        assert inner.writes == []
        theirs.sendall(b"HTTP/1.1 204 No Content\r\n\r\n")
        assert await stream.read(1024) == b"HTTP/1.1 204 No Content\r\n\r\n"
        assert inner.writes == [b"POST /hook HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"]
        assert theirs.recv(1024) == inner.writes[0]
    finally:
        ours.close()
        theirs.close()


async def test_a_large_body_is_sent_as_it_comes() -> None:
    ours, theirs = socket.socketpair()
    for end in (ours, theirs):  # room for both pieces: nothing reads them here
        end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
        end.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    inner = _FakeStream(ours)
    stream = ConnectionStream(inner)
    try:
        head = b"POST /upload HTTP/1.1\r\n\r\n"
        await stream.write(head)
        await stream.write(bytes(COALESCED_BYTES))
        assert [len(w) for w in inner.writes] == [len(head) + COALESCED_BYTES]
        await stream.write(bytes(COALESCED_BYTES))
        assert len(inner.writes) == 2
    finally:
        ours.close()
        theirs.close()
