"""The operator's forward proxy for third-party API calls: `HTTPS_PROXY`, `HTTP_PROXY`,
`ALL_PROXY` and `NO_PROXY` from the environment, read the way curl reads them.

- `https_proxy` (else `HTTPS_PROXY`, else `all_proxy` / `ALL_PROXY`) carries https requests,
  tunnelled with `CONNECT host:port`; `http_proxy` (lowercase only when running as CGI, as the
  standard library decides) carries plain http ones. A proxy is `http://` or `https://`, with
  `user:password@` for proxy authentication if needed; a bare `host:port` means `http://`.
- `no_proxy` / `NO_PROXY`: a comma-separated list of hosts reached directly. `*` is every host;
  a name matches itself and its subdomains (a leading dot changes nothing); an IP address
  matches itself, a CIDR range (`10.0.0.0/8`) the addresses in it; `host:port` only that port.

Webhook deliveries never use a proxy (their own pinned path, `transport.make_delivery_client`).
"""

from __future__ import annotations

import ipaddress
import urllib.request
from dataclasses import dataclass
from dataclasses import field

import httpx

from pressroom.kit.outbound.destination import normalize_hostname

PROXY_SCHEMES = ("http", "https")


@dataclass(frozen=True)
class Proxy:
    """One proxy: where it is, and the credentials it wants (never logged or shown)."""

    url: httpx.URL
    auth: tuple[str, str] | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, value: str, variable: str) -> Proxy:
        text = value.strip()
        if "://" not in text:
            text = f"http://{text}"
        try:
            url = httpx.URL(text)
        except httpx.InvalidURL:
            raise ValueError(f"{variable} is not a proxy URL") from None
        if url.scheme not in PROXY_SCHEMES or not url.host:
            # Only the variable is named: its value may hold the proxy's password.
            raise ValueError(f"{variable} must be an http:// or https:// proxy (host and port)")
        auth = (url.username, url.password) if url.username else None
        return cls(url.copy_with(username=None, password=None, path="/", query=None), auth)


@dataclass(frozen=True)
class _Bypass:
    """One NO_PROXY entry."""

    host: str | None = None
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None = None
    port: int | None = None

    @classmethod
    def parse(cls, entry: str) -> _Bypass | None:
        entry = entry.strip().lower()
        if not entry:
            return None
        port = None
        if entry.startswith("["):  # [v6]:port
            inner, _, rest = entry[1:].partition("]")
            entry, port = inner, _port(rest.removeprefix(":"))
        elif entry.count(":") == 1:
            entry, port_text = entry.split(":")
            port = _port(port_text)
        try:
            return cls(network=ipaddress.ip_network(entry, strict=False), port=port)
        except ValueError:
            pass
        try:
            host = normalize_hostname(entry.lstrip("."))
        except ValueError:
            return None
        return cls(host=host or None, port=port) if host else None

    def matches(self, host: str, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.network is not None:
            try:
                return ipaddress.ip_address(host) in self.network
            except ValueError:
                return False
        assert self.host is not None
        return host == self.host or host.endswith("." + self.host)


def _port(text: str) -> int | None:
    return int(text) if text.isdigit() and 0 < int(text) < 65536 else None


@dataclass(frozen=True)
class ProxyRoutes:
    """Which proxy, if any, a request goes through."""

    https: Proxy | None = None
    http: Proxy | None = None
    everything_direct: bool = False
    bypass: tuple[_Bypass, ...] = ()

    @classmethod
    def from_environment(cls) -> ProxyRoutes | None:
        """The environment's proxies (None when it names none). ValueError for a proxy
        variable that is not an http(s) proxy URL."""
        # Lowercase names first; HTTP_PROXY is ignored when running as CGI (the standard
        # library's reading: there it can be set by a request's `Proxy:` header).
        found = urllib.request.getproxies_environment()
        https = found.get("https") or found.get("all")
        http = found.get("http") or found.get("all")
        if not https and not http:
            return None
        entries = [part for part in found.get("no", "").replace(" ", ",").split(",") if part]
        return cls(
            https=Proxy.parse(https, "HTTPS_PROXY") if https else None,
            http=Proxy.parse(http, "HTTP_PROXY") if http else None,
            everything_direct="*" in entries,
            bypass=tuple(b for b in map(_Bypass.parse, entries) if b is not None),
        )

    def proxy_for(self, url: httpx.URL) -> Proxy | None:
        """The proxy for `url`, or None to connect directly."""
        proxy = self.https if url.scheme == "https" else self.http
        if proxy is None or self.everything_direct:
            return None
        host = url.host.lower().removesuffix(".")
        port = url.port or (443 if url.scheme == "https" else 80)
        if any(entry.matches(host, port) for entry in self.bypass):
            return None
        return proxy
