"""Provider traffic honours the operator's forward proxy (HTTPS_PROXY, NO_PROXY): through a real
CONNECT proxy on loopback to a real TLS server on loopback, TLS end to end with the provider's
name. The destination is still vetted; webhook deliveries never use the proxy. Names are
pinned with resolve overrides (or are `localhost`), so no public name is ever resolved."""

from __future__ import annotations

import base64
import socket
import ssl
from collections.abc import AsyncIterator
from collections.abc import Iterator

import httpx
import pytest

from pressroom.kit.outbound.api import build_api_client
from pressroom.kit.outbound.proxy import ProxyRoutes
from pressroom.kit.outbound.transport import PinnedNetworkBackend
from pressroom.kit.outbound.transport import RefusedDestination
from pressroom.kit.outbound.transport import make_delivery_client
from pressroom.providers.adapter import ProviderError
from pressroom.providers.mastodon.adapter import verify_credentials
from tests.publishing.forward_proxy import ForwardProxy
from tests.webhooks.receiver import WebhookReceiver

HOST = "api.provider.example"


@pytest.fixture
def provider() -> Iterator[WebhookReceiver]:
    """The provider's API: TLS for its public-looking name, served on loopback."""
    with WebhookReceiver(HOST) as server:
        yield server


@pytest.fixture
async def proxy(provider: WebhookReceiver) -> AsyncIterator[ForwardProxy]:
    async with ForwardProxy({f"{HOST}:443": ("127.0.0.1", provider.port)}) as forward:
        yield forward


def provider_client(provider: WebhookReceiver) -> httpx.AsyncClient:
    """The process's provider client, trusting the test CA; the provider's name is pinned to
    the loopback server (so nothing resolves it, with or without the proxy)."""
    return build_api_client(
        network_backend=PinnedNetworkBackend(provider.overrides, vet_every_connection=True),
        ssl_context=ssl.create_default_context(cafile=provider.ca_bundle_path),
    )


async def test_provider_requests_tunnel_through_the_proxy_with_tls_to_the_provider(
    monkeypatch: pytest.MonkeyPatch, provider: WebhookReceiver, proxy: ForwardProxy
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    async with provider_client(provider) as client:
        first = await client.get(f"https://{HOST}/api/v1/instance")
        second = await client.get(f"https://{HOST}/api/v1/accounts/verify_credentials")
    assert (first.status_code, second.status_code) == (200, 200)
    # One tunnel, kept alive for both requests.
    assert [request.line for request in proxy.requests] == [f"CONNECT {HOST}:443 HTTP/1.1"]
    assert [(r.path, r.headers["host"], r.sni) for r in provider.requests] == [
        ("/api/v1/instance", HOST, HOST),
        ("/api/v1/accounts/verify_credentials", HOST, HOST),
    ]


async def test_proxy_credentials_go_to_the_proxy_only(
    monkeypatch: pytest.MonkeyPatch, provider: WebhookReceiver, proxy: ForwardProxy
) -> None:
    monkeypatch.setenv("https_proxy", f"http://egress:s3cret@127.0.0.1:{proxy.port}")
    async with provider_client(provider) as client:
        assert (await client.get(f"https://{HOST}/")).status_code == 200
    expected = base64.b64encode(b"egress:s3cret").decode()
    assert proxy.requests[0].headers["proxy-authorization"] == f"Basic {expected}"
    assert "proxy-authorization" not in provider.requests[0].headers
    assert "s3cret" not in repr(ProxyRoutes.from_environment())


@pytest.mark.parametrize("bypass", [HOST, "provider.example", ".provider.example", "*"])
async def test_no_proxy_hosts_are_reached_directly(
    monkeypatch: pytest.MonkeyPatch, provider: WebhookReceiver, proxy: ForwardProxy, bypass: str
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", f"internal.example, {bypass}")
    async with provider_client(provider) as client:
        response = await client.get(f"https://{HOST}/direct")
    assert response.status_code == 200
    assert proxy.requests == []
    assert [request.path for request in provider.requests] == ["/direct"]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://10.1.2.3/api/v1/instance", "a private address"),
        ("https://169.254.169.254/latest/meta-data", "a cloud metadata address"),
        # A name this host resolves into its own network (here through /etc/hosts).
        ("https://localhost/api/v1/instance", "a loopback address"),
    ],
)
async def test_a_non_public_destination_is_refused_before_reaching_the_proxy(
    monkeypatch: pytest.MonkeyPatch,
    provider: WebhookReceiver,
    proxy: ForwardProxy,
    url: str,
    reason: str,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    async with provider_client(provider) as client:
        with pytest.raises(httpx.ConnectError) as raised:
            await client.get(url)
    refused = raised.value.__cause__
    assert isinstance(refused, RefusedDestination)
    assert reason in refused.reason
    assert proxy.requests == []


async def test_a_mastodon_instance_resolving_privately_fails_permanently_through_the_proxy(
    monkeypatch: pytest.MonkeyPatch, provider: WebhookReceiver, proxy: ForwardProxy
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    async with provider_client(provider) as client:
        with pytest.raises(ProviderError) as raised:
            await verify_credentials("https://localhost", "a-token-value", http=client)
    assert (raised.value.code, raised.value.retryable) == ("invalid_request", False)
    assert "a loopback address" in raised.value.message
    assert proxy.requests == []


async def test_a_name_only_the_proxy_can_resolve_is_left_to_the_proxy(
    monkeypatch: pytest.MonkeyPatch, provider: WebhookReceiver, proxy: ForwardProxy
) -> None:
    async def unresolvable(host: str, port: int, overrides: object) -> tuple[str, int]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    # A network whose only way out is the proxy: this host cannot resolve public names.
    monkeypatch.setattr("pressroom.kit.outbound.transport.resolve_destination", unresolvable)
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    async with provider_client(provider) as client:
        response = await client.get(f"https://{HOST}/through")
    assert response.status_code == 200
    assert [request.line for request in proxy.requests] == [f"CONNECT {HOST}:443 HTTP/1.1"]


async def test_a_proxy_that_refuses_the_tunnel_is_a_proxy_error(
    monkeypatch: pytest.MonkeyPatch, provider: WebhookReceiver
) -> None:
    async with ForwardProxy(routes={}) as closed:
        monkeypatch.setenv("HTTPS_PROXY", closed.url)
        async with provider_client(provider) as client:
            with pytest.raises(httpx.ProxyError):
                await client.get(f"https://{HOST}/")
    assert provider.requests == []


def test_a_proxy_that_is_not_http_is_refused_without_quoting_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "socks5://user:s3cret@10.0.0.9:1080")
    with pytest.raises(ValueError, match="HTTPS_PROXY must be an http") as raised:
        build_api_client()
    assert "s3cret" not in str(raised.value)


@pytest.mark.parametrize(
    ("no_proxy", "url", "proxied"),
    [
        ("", "https://api.x.com/2/tweets", True),
        ("x.com", "https://api.x.com/2/tweets", False),
        ("x.com", "https://notx.com/", True),
        ("api.x.com:8443", "https://api.x.com/", True),
        ("api.x.com:443", "https://api.x.com/", False),
        ("203.0.113.0/24", "https://203.0.113.7/", False),
        ("203.0.113.0/24", "https://198.51.100.7/", True),
        ("[2001:db8::1]:443", "https://[2001:db8::1]/", False),
        ("API.X.COM.", "https://api.x.com/", False),
    ],
)
def test_no_proxy_is_read_as_curl_reads_it(
    monkeypatch: pytest.MonkeyPatch, no_proxy: str, url: str, proxied: bool
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", no_proxy)
    routes = ProxyRoutes.from_environment()
    assert routes is not None
    proxy = routes.proxy_for(httpx.URL(url))
    assert (proxy is not None) is proxied
    if proxy is not None:
        assert str(proxy.url) == "http://proxy.internal:3128/"


def test_without_proxy_variables_every_request_goes_directly() -> None:
    assert ProxyRoutes.from_environment() is None


async def test_webhook_deliveries_never_use_the_proxy(
    monkeypatch: pytest.MonkeyPatch, provider: WebhookReceiver, proxy: ForwardProxy
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    url = provider.url_for("/hook")
    async with make_delivery_client(
        timeout=5.0, ca_bundle=provider.ca_bundle_path, overrides=provider.overrides
    ) as client:
        await client.vet_destination(url)
        response = await client.post(url, content=b"{}")
    assert response.status_code == 200
    assert proxy.requests == []
    assert [request.path for request in provider.requests] == ["/hook"]
