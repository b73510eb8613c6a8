"""Where webhooks may be sent: URL rules, public-address vetting and pinned DNS resolution.

Webhook URLs are chosen by API users and fetched by our servers, so every rule here exists to keep
a delivery from reaching the service's own network (SSRF). Two layers:

1. `check_destination_url` judges the URL text when an endpoint is created or changed: https on
   port 443 only, nothing that could smuggle a second host (userinfo, percent-encoded or odd
   numeric host spellings), no literal non-public address, no local-only names.
2. `resolve_destination` resolves the name right before each attempt and refuses it if any answer
   is non-public; the connection then goes to the vetted address, so a DNS answer that changes
   between the check and the connect (rebinding) cannot redirect it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import socket
from collections.abc import Collection
from collections.abc import Sequence
from typing import Final

import httpx
import idna

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

log = logging.getLogger(__name__)

MAX_URL_LENGTH: Final = 2048
HTTPS_PORT: Final = 443

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

# Non-public IPv4 ranges, most specific first (the first match names the reason). The stdlib's
# `is_global` is consulted as well, but it varies between Python patch releases and calls
# multicast global, so the ranges that matter are spelled out here (IANA special-purpose
# registry, RFC 6890 and successors).
_IPV4_RANGES: Final[tuple[tuple[ipaddress.IPv4Network, str], ...]] = (
    (_V4("0.0.0.0/32"), "an unspecified address"),
    (_V4("0.0.0.0/8"), "a reserved address"),  # "this network"
    (_V4("10.0.0.0/8"), "a private address"),
    (_V4("100.64.0.0/10"), "a shared (carrier-grade NAT) address"),
    (_V4("127.0.0.0/8"), "a loopback address"),
    # AWS, GCP, Azure and others serve instance credentials here.
    (_V4("169.254.169.254/32"), "a cloud metadata address"),
    (_V4("169.254.0.0/16"), "a link-local address"),
    (_V4("172.16.0.0/12"), "a private address"),
    (_V4("192.0.0.0/24"), "an IETF protocol assignment address"),
    (_V4("192.0.2.0/24"), "a documentation address"),
    (_V4("192.88.99.0/24"), "a reserved address"),  # deprecated 6to4 relay anycast
    (_V4("192.168.0.0/16"), "a private address"),
    (_V4("198.18.0.0/15"), "a benchmarking address"),
    (_V4("198.51.100.0/24"), "a documentation address"),
    (_V4("203.0.113.0/24"), "a documentation address"),
    (_V4("224.0.0.0/4"), "a multicast address"),
    (_V4("255.255.255.255/32"), "a broadcast address"),
    (_V4("240.0.0.0/4"), "a reserved address"),
    # Azure's platform endpoint (wireserver, DHCP, DNS) is reachable from every VM.
    (_V4("168.63.129.16/32"), "a cloud metadata address"),
)

# Non-public IPv6 ranges that are not translations of IPv4 (those are unwrapped first).
_IPV6_RANGES: Final[tuple[tuple[ipaddress.IPv6Network, str], ...]] = (
    (_V6("::/128"), "an unspecified address"),
    (_V6("::1/128"), "a loopback address"),
    (_V6("::/96"), "an IPv4-compatible IPv6 address"),  # deprecated by RFC 4291
    (_V6("64:ff9b:1::/48"), "a local-use NAT64 address"),
    (_V6("100::/64"), "a discard-only address"),
    # Teredo tunnels traffic through relays to an obfuscated client; nothing public lives there.
    (_V6("2001::/32"), "a Teredo tunnelling address"),
    (_V6("2001:2::/48"), "a benchmarking address"),
    (_V6("2001:10::/28"), "a reserved (ORCHID) address"),
    (_V6("2001:20::/28"), "a reserved (ORCHIDv2) address"),
    (_V6("2001:db8::/32"), "a documentation address"),
    (_V6("3fff::/20"), "a documentation address"),
    (_V6("fd00:ec2::254/128"), "a cloud metadata address"),  # AWS IMDS over IPv6
    (_V6("fc00::/7"), "a unique local (private) address"),
    (_V6("fe80::/10"), "a link-local address"),
    (_V6("fec0::/10"), "a site-local address"),
    (_V6("ff00::/8"), "a multicast address"),
)

_IPV4_MAPPED: Final = _V6("::ffff:0:0/96")
_NAT64_WELL_KNOWN: Final = _V6("64:ff9b::/96")
_SIX_TO_FOUR: Final = _V6("2002::/16")
# Every global unicast allocation lies here; anything outside is reserved or special.
_GLOBAL_UNICAST: Final = _V6("2000::/3")

# Names the contract refuses in the URL text: they only ever mean this host or a private network
# (RFC 6761 `localhost`, RFC 6762 `.local`, RFC 8375 `.home.arpa`, and `.internal`, reserved for
# private use and where cloud metadata services live). Other reserved names (`.test`,
# `.example`, `.invalid`, single labels, ...) are accepted: they cannot resolve to a public
# address, and every attempt resolves and vets the name anyway, so refusing them here would only
# break integrators' test setups (which register `https://receiver.test/hook` and point it at a
# local receiver with PRESSROOM_WEBHOOK_RESOLVE).
_LOCAL_SUFFIXES: Final = ("localhost", "local", "internal", "home.arpa")

_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"  # no leading zeros: those read as octal
_CANONICAL_IPV4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")
# A last label like this makes WHATWG URL parsers and inet_aton read the host as an IPv4 address.
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(.*)", re.DOTALL)
_PORT = re.compile(r"[0-9]{1,5}")


class DestinationBlocked(Exception):
    """A webhook destination that must not be contacted; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def describe_non_public(ip: IPAddress) -> str | None:
    """Why `ip` is not a public unicast address (`"a private address"`), or None if it is."""
    if isinstance(ip, ipaddress.IPv6Address):
        return _describe_ipv6(ip)
    for network, description in _IPV4_RANGES:
        if ip in network:
            return description
    if not ip.is_global:
        return "a non-public address"
    return None


def _describe_ipv6(ip: ipaddress.IPv6Address) -> str | None:
    if ip.scope_id is not None:
        return "an address with a zone id"
    # Translation prefixes carry an IPv4 address: judge the embedded address, because a DNS64
    # resolver legitimately answers 64:ff9b::<public v4> and 6to4 hosts are as public as their v4.
    embedded: ipaddress.IPv4Address | None = None
    if ip in _IPV4_MAPPED:
        embedded = ip.ipv4_mapped
    elif ip in _NAT64_WELL_KNOWN:
        embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    elif ip in _SIX_TO_FOUR:
        embedded = ip.sixtofour
    if embedded is not None:
        inner = describe_non_public(embedded)
        # The embedded address is not quoted: for a resolved name, it is what the name points at.
        return None if inner is None else f"an IPv6 address embedding {inner}"
    for network, description in _IPV6_RANGES:
        if ip in network:
            return description
    if ip not in _GLOBAL_UNICAST:
        return "a reserved address"
    if not ip.is_global:
        return "a non-public address"
    return None


def is_public_address(ip: IPAddress) -> bool:
    """True if `ip` is a public unicast address a webhook may be delivered to."""
    return describe_non_public(ip) is None


def _describe_literal_ipv6(ip: ipaddress.IPv6Address) -> str | None:
    """Like describe_non_public, but stricter for addresses typed into a URL.

    Nobody types an IPv4-mapped or NAT64 address into a webhook URL except to dodge an IPv4
    check, so these are refused whatever they embed (the contract lists them as non-public).
    """
    if ip in _IPV4_MAPPED:
        return "an IPv4-mapped IPv6 address"
    if ip in _NAT64_WELL_KNOWN:
        return "a NAT64 address"
    return _describe_ipv6(ip)


def normalize_hostname(host: str) -> str:
    """The comparable form of a host name: lowercase ASCII (IDNA), without a trailing dot.

    Raises ValueError if the name cannot be encoded.
    """
    name = host.lower()
    if name.endswith("."):
        name = name[:-1]
    if not name.isascii():
        try:
            # The same IDNA 2008 encoding httpx applies, so we vet the name it will connect to.
            name = idna.encode(name, uts46=False).decode("ascii")
        except idna.IDNAError as exc:
            raise ValueError(f"host {host!r} is not a valid internationalized domain name") from exc
    return name


def check_destination_url(url: str, allowed_hosts: Collection[str] = ()) -> list[str]:
    """Every reason `url` is not an acceptable webhook destination; empty if it is acceptable.

    Only the text is judged; names are resolved and vetted at each attempt. `allowed_hosts`
    (normalized names, from PRESSROOM_WEBHOOK_RESOLVE, tests only) skip the host rules; the
    scheme, userinfo, port, query and fragment rules still apply to them.
    """
    if len(url) > MAX_URL_LENGTH:
        return [f"must be at most {MAX_URL_LENGTH} characters"]
    # Parsers disagree on (and silently strip) whitespace, controls and backslashes; a URL that
    # means different things to different parsers could pass this check and go elsewhere.
    if any(c.isspace() or c == "\\" or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return ["must not contain whitespace, control characters or backslashes"]
    match = _SCHEME.fullmatch(url)
    if match is None:
        return ["must be an absolute https URL"]
    scheme, rest = match.groups()

    reasons: list[str] = []
    if scheme.lower() != "https":
        reasons.append("must use https")
    if not rest.startswith("//"):
        reasons.append("must have a host")
        return reasons

    rest = rest[2:]
    authority_end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:authority_end], rest[authority_end:]
    if "@" in authority:
        reasons.append("must not contain credentials (user information)")
        authority = authority.rpartition("@")[2]
    host, port_reason = _split_port(authority)
    host_reason, normalized = _check_host(host)
    if host_reason is not None and normalized in allowed_hosts and not host.startswith("["):
        host_reason = None
    if host_reason is not None:
        reasons.append(host_reason)
    if port_reason is not None:
        reasons.append(port_reason)
    if "?" in tail.partition("#")[0]:
        reasons.append("must not contain a query string")
    if "#" in tail:
        reasons.append("must not contain a fragment")
    if not reasons and not _httpx_agrees(url, normalized):
        reasons.append("host is ambiguous")
    return reasons


def _split_port(authority: str) -> tuple[str, str | None]:
    """The host part of an authority and the reason its port is unacceptable, if any."""
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            return authority, None  # _check_host reports the broken literal
        host, after = authority[: end + 1], authority[end + 1 :]
        if not after:
            return host, None
        if not after.startswith(":"):
            return authority, None
        port = after[1:]
    elif ":" in authority:
        host, _, port = authority.rpartition(":")
    else:
        return authority, None
    if not _PORT.fullmatch(port):
        return host, "must not contain an empty or non-numeric port"
    if int(port) != HTTPS_PORT:
        return host, f"must not use a custom port (only {HTTPS_PORT})"
    return host, None


def _check_host(host: str) -> tuple[str | None, str]:
    """The reason `host` (as written in a URL) is unacceptable, and its normalized form."""
    if not host:
        return "must have a host", host
    if host.startswith("["):
        return _check_ipv6_literal(host), host.strip("[]").lower()
    if "%" in host:
        return "host must not contain percent-encoded characters", host
    try:
        name = normalize_hostname(host)
    except ValueError as exc:
        return str(exc), host
    if not name:
        return "must have a host", name

    labels = name.split(".")
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        if not _CANONICAL_IPV4.fullmatch(name):
            return f"host {host} is a numeric IPv4 spelling that is not a dotted quad", name
        description = describe_non_public(ipaddress.IPv4Address(name))
        if description is not None:
            return f"host {name} is {description}", name
        return None, name

    if not all(_LABEL.fullmatch(label) for label in labels) or len(name) > 253:
        return f"host {host} is not a valid host name", name
    for suffix in _LOCAL_SUFFIXES:
        if name == suffix or name.endswith("." + suffix):
            return f"host {name} is a local-only name", name
    return None, name


def _check_ipv6_literal(host: str) -> str | None:
    if not host.endswith("]") or host.count("[") != 1 or host.count("]") != 1:
        return f"host {host} is not a valid IPv6 literal"
    inner = host[1:-1]
    if "%" in inner:
        return "host must not contain an IPv6 zone id"
    try:
        ip = ipaddress.IPv6Address(inner)
    except ValueError:
        return f"host {host} is not a valid IPv6 literal"
    description = _describe_literal_ipv6(ip)
    return None if description is None else f"host {ip} is {description}"


def _httpx_agrees(url: str, normalized_host: str) -> bool:
    """True if httpx, which sends the deliveries, parses the same host out of `url`."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return False
    theirs = parsed.raw_host.decode("ascii").lower().removesuffix(".")
    if parsed.port not in (None, HTTPS_PORT):
        return False
    try:
        return ipaddress.ip_address(theirs) == ipaddress.ip_address(normalized_host)
    except ValueError:
        return theirs == normalized_host


def parse_resolve_overrides(value: str | None) -> dict[str, tuple[str, int]]:
    """Parse PRESSROOM_WEBHOOK_RESOLVE: `host=ip:port,...` (IPv6 as `[::1]:8443`).

    Test-only: these hosts skip the public-address check and connect to the given address.
    Raises ValueError naming the first malformed entry.
    """
    overrides: dict[str, tuple[str, int]] = {}
    if not value or not value.strip():
        return overrides
    for entry in value.split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, sep, target = entry.partition("=")
        if not sep or not name.strip() or not target.strip():
            raise ValueError(f"resolve override {entry!r} is not host=ip:port")
        try:
            host = normalize_hostname(name.strip())
        except ValueError as exc:
            raise ValueError(f"resolve override {entry!r}: {exc}") from exc
        if not host or not all(_LABEL.fullmatch(label) for label in host.split(".")):
            raise ValueError(f"resolve override {entry!r}: {name.strip()!r} is not a host name")
        address, port = _parse_override_target(entry, target.strip())
        if host in overrides:
            raise ValueError(f"resolve override for {host!r} is given twice")
        overrides[host] = (address, port)
    return overrides


def _parse_override_target(entry: str, target: str) -> tuple[str, int]:
    if target.startswith("["):
        address_text, sep, port_text = target[1:].partition("]:")
    else:
        address_text, sep, port_text = target.rpartition(":")
        if ":" in address_text:
            raise ValueError(f"resolve override {entry!r}: write IPv6 addresses as [addr]:port")
    if not sep or not _PORT.fullmatch(port_text) or not 0 < int(port_text) < 65536:
        raise ValueError(f"resolve override {entry!r} needs a port between 1 and 65535")
    try:
        ip = ipaddress.ip_address(address_text)
    except ValueError as exc:
        raise ValueError(f"resolve override {entry!r}: {address_text!r} is not an IP") from exc
    return str(ip), int(port_text)


def pick_vetted_address(host: str, addresses: Sequence[str]) -> str:
    """The first of a name's DNS answers, if every answer is public.

    One non-public answer blocks the name: with several answers the connection could take any
    of them, and a mixed answer is the usual shape of a rebinding attack. The reason says what
    kind of address it is, never which: the address is logged for the operator only.
    """
    if not addresses:
        raise socket.gaierror(socket.EAI_NONAME, f"{host} has no addresses")
    for address in addresses:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError as exc:
            log.warning(
                "destination blocked: unparseable answer", extra={"host": host, "address": address}
            )
            raise DestinationBlocked(f"host {host} does not resolve to a usable address") from exc
        description = describe_non_public(ip)
        if description is not None:
            # What an internal name resolves to is for the operator's logs only: the reason
            # reaches API callers (delivery logs, error messages), who could map the network.
            log.warning(
                "destination blocked: non-public answer",
                extra={"host": host, "address": address, "why": description},
            )
            raise DestinationBlocked(
                f"host {host} is not a public destination (it resolves to {description})"
            )
    return addresses[0]


async def resolve_destination(
    host: str, port: int, overrides: dict[str, tuple[str, int]]
) -> tuple[str, int]:
    """Resolve `host` now and return the vetted `(address, port)` to connect to.

    Hosts in `overrides` (PRESSROOM_WEBHOOK_RESOLVE, tests only) return their configured address
    and port unchecked. Otherwise raises DestinationBlocked if any answer is non-public, and lets
    resolver failures (socket.gaierror, an OSError) propagate.
    """
    try:
        key = normalize_hostname(host)
    except ValueError as exc:
        raise DestinationBlocked(str(exc)) from exc
    if key in overrides:
        return overrides[key]
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    addresses = [str(info[4][0]) for info in infos]
    # getaddrinfo may answer the same address once per socket type; keep the order, drop repeats.
    unique = list(dict.fromkeys(addresses))
    return pick_vetted_address(host, unique), port
