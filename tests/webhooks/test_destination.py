"""Webhook destination rules: URL text, address vetting, resolve overrides, DNS vetting."""

from __future__ import annotations

import ipaddress
import logging

import pytest

from pressroom.kit.outbound.destination import DestinationBlocked
from pressroom.kit.outbound.destination import check_destination_url
from pressroom.kit.outbound.destination import is_public_address
from pressroom.kit.outbound.destination import parse_resolve_overrides
from pressroom.kit.outbound.destination import pick_vetted_address
from pressroom.kit.outbound.destination import resolve_destination

HOSTILE = [
    # scheme
    ("http", "http://example.com/hook"),
    ("ftp", "ftp://example.com/hook"),
    ("no scheme", "//example.com/hook"),
    ("relative", "/hook"),
    ("javascript", "javascript:alert(1)"),
    ("single slash", "https:/example.com/hook"),
    ("no slashes", "https:example.com/hook"),
    # credentials, query, fragment, port
    ("userinfo", "https://user:pass@example.com/hook"),
    ("user only", "https://user@example.com/hook"),
    ("empty userinfo", "https://@example.com/hook"),
    ("userinfo hiding loopback", "https://example.com@127.0.0.1/hook"),
    ("query", "https://example.com/hook?a=1"),
    ("empty query", "https://example.com/hook?"),
    ("fragment", "https://example.com/hook#top"),
    ("empty fragment", "https://example.com/hook#"),
    ("port 8443", "https://example.com:8443/hook"),
    ("port 80", "https://example.com:80/hook"),
    ("empty port", "https://example.com:/hook"),
    ("port not a number", "https://example.com:https/hook"),
    ("port on ipv6", "https://[2606:4700::1111]:8443/hook"),
    # empty or malformed hosts
    ("empty host", "https:///hook"),
    ("empty host with port", "https://:443/hook"),
    ("underscore", "https://exa_mple.com/hook"),
    ("space", "https://exa mple.com/hook"),
    ("tab", "https://example.com\t/hook"),
    ("newline", "https://example.com/ho\nok"),
    ("backslash", "https://example.com\\@127.0.0.1/hook"),
    ("percent-encoded host", "https://%6c%6fcalhost/hook"),
    ("empty label", "https://example..com/hook"),
    ("leading hyphen", "https://-example.com/hook"),
    ("label over 63", f"https://{'a' * 64}.com/hook"),
    ("unbracketed ipv6", "https://::1/hook"),
    ("unclosed bracket", "https://[::1/hook"),
    ("bad ipv6", "https://[::g]/hook"),
    ("circled letter", "https://\u24dbocalhost/hook"),  # NFKC would make it "localhost"
    ("fullwidth idna", "https://\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com/hook"),
    ("too long", "https://example.com/" + "a" * 2040),
    # local names
    ("localhost", "https://localhost/hook"),
    ("LOCALHOST", "https://LOCALHOST/hook"),
    ("localhost trailing dot", "https://localhost./hook"),
    ("sub.localhost", "https://foo.localhost/hook"),
    ("localhost port", "https://localhost:443/hook"),
    ("dot local", "https://printer.local/hook"),
    ("dot internal", "https://metadata.google.internal/hook"),
    ("home.arpa", "https://router.home.arpa/hook"),
    ("bare internal", "https://internal/hook"),
    ("bare local", "https://local/hook"),
    ("upper dot local", "https://Printer.LOCAL./hook"),
    ("idna localhost", "https://xn--lcalhost-g1a.localhost/hook"),
    # IPv4 literals
    ("loopback", "https://127.0.0.1/hook"),
    ("loopback range", "https://127.255.0.9/hook"),
    ("private 10", "https://10.0.0.1/hook"),
    ("private 172", "https://172.16.5.4/hook"),
    ("private 192", "https://192.168.1.1/hook"),
    ("link-local", "https://169.254.10.10/hook"),
    ("metadata", "https://169.254.169.254/latest/meta-data"),
    ("azure wireserver", "https://168.63.129.16/hook"),
    ("cgnat", "https://100.64.0.1/hook"),
    ("unspecified", "https://0.0.0.0/hook"),
    ("this network", "https://0.1.2.3/hook"),
    ("broadcast", "https://255.255.255.255/hook"),
    ("multicast", "https://224.0.0.1/hook"),
    ("reserved 240", "https://240.0.0.1/hook"),
    ("documentation", "https://192.0.2.10/hook"),
    ("documentation 2", "https://198.51.100.7/hook"),
    ("documentation 3", "https://203.0.113.200/hook"),
    ("benchmarking", "https://198.18.0.1/hook"),
    ("ietf assignment", "https://192.0.0.8/hook"),
    # numeric IPv4 spellings
    ("decimal", "https://2130706433/hook"),
    ("hex dword", "https://0x7f000001/hook"),
    ("hex and short", "https://0x7f.1/hook"),
    ("octal", "https://0177.0.0.1/hook"),
    ("short form", "https://127.1/hook"),
    ("three parts", "https://127.0.1/hook"),
    ("leading zero", "https://010.0.0.1/hook"),
    ("mixed hex octet", "https://127.0.0.0x1/hook"),
    ("octet over 255", "https://256.0.0.1/hook"),
    ("numeric trailing dot", "https://2130706433./hook"),
    ("public ip decimal", "https://1572395022/hook"),
    ("uppercase hex", "https://0X7F.0.0.1/hook"),
    ("numeric last label", "https://example.123/hook"),
    # IPv6 literals
    ("ipv6 loopback", "https://[::1]/hook"),
    ("ipv6 unspecified", "https://[::]/hook"),
    ("ipv4-mapped dotted", "https://[::ffff:127.0.0.1]/hook"),
    ("ipv4-mapped hex", "https://[::ffff:7f00:1]/hook"),
    ("ipv4-mapped public", "https://[::ffff:8.8.8.8]/hook"),
    ("ipv4-compatible", "https://[::127.0.0.1]/hook"),
    ("nat64 private", "https://[64:ff9b::a00:1]/hook"),
    ("nat64 public", "https://[64:ff9b::808:808]/hook"),
    ("nat64 local-use", "https://[64:ff9b:1::1]/hook"),
    ("6to4 private", "https://[2002:c0a8:0101::1]/hook"),
    ("6to4 loopback", "https://[2002:7f00:1::1]/hook"),
    ("teredo", "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook"),
    ("zone id", "https://[fe80::1%25eth0]/hook"),
    ("link-local v6", "https://[fe80::1]/hook"),
    ("ula", "https://[fc00::1]/hook"),
    ("ula fd", "https://[fd12:3456::1]/hook"),
    ("aws metadata v6", "https://[fd00:ec2::254]/hook"),
    ("site-local", "https://[fec0::1]/hook"),
    ("multicast v6", "https://[ff02::1]/hook"),
    ("documentation v6", "https://[2001:db8::1]/hook"),
    ("discard-only", "https://[100::1]/hook"),
    ("benchmarking v6", "https://[2001:2::1]/hook"),
]

GOOD = [
    "https://example.com/hooks",
    "https://hooks.example.com:443/x",
    "https://hooks.example.com/",
    "https://hooks.example.com",
    "HTTPS://Hooks.Example.COM/Path/With/Case",
    "https://hooks.example.com./trailing-dot",
    "https://api.hooks.example.co.uk/v1/receive",
    "https://bücher.de/hooks",
    "https://例え.jp/hooks",
    "https://xn--bcher-kva.de/hooks",
    "https://93.184.215.14/h",
    "https://[2606:4700:4700::1111]/h",
    "https://[2002:5db8:d70e::1]/6to4-of-a-public-address",
    "https://0x7f.example.com/hex-looking-first-label",
    "https://127.0.0.1.example.com/ip-looking-labels",
    "https://example.com/path@with-at",
    "https://example.com/" + "a" * (2048 - len("https://example.com/")),
]

# Names outside the contract's list are accepted as text: none of them can reach a non-public
# address unnoticed, because every attempt resolves the name and vets each answer.
RESERVED_BUT_ACCEPTED = [
    "https://receiver.test/hook",
    "https://hooks.example/hook",
    "https://nothing.invalid/hook",
    "https://example.org/hook",
    "https://shop.onion/hook",
    "https://nas.lan/hook",
    "https://intranet/hook",
    "https://box.localdomain/hook",
    "https://1.0.0.127.in-addr.arpa/hook",
    "https://my-service.corp/hook",
]


@pytest.mark.parametrize(("name", "url"), HOSTILE, ids=[name for name, _ in HOSTILE])
def test_hostile_destination_is_rejected(name: str, url: str) -> None:
    reasons = check_destination_url(url)
    assert reasons, f"{name}: {url!r} was accepted"
    assert all(isinstance(reason, str) and reason for reason in reasons)


def test_hostile_list_is_large_and_distinct() -> None:
    assert len(HOSTILE) >= 60
    assert len({url for _, url in HOSTILE}) == len(HOSTILE)


@pytest.mark.parametrize("url", GOOD)
def test_public_https_destination_is_accepted(url: str) -> None:
    assert check_destination_url(url) == []


@pytest.mark.parametrize("url", RESERVED_BUT_ACCEPTED)
def test_reserved_names_outside_the_contract_list_are_accepted(url: str) -> None:
    assert check_destination_url(url) == []


def test_host_listed_in_resolve_overrides_is_accepted() -> None:
    assert check_destination_url("https://localhost/hook", {"localhost"}) == []
    assert check_destination_url("https://LocalHost./hook", {"localhost"}) == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://localhost/hook", "must use https"),
        ("https://u@localhost/hook", "must not contain credentials (user information)"),
        ("https://localhost:8443/hook", "must not use a custom port (only 443)"),
        ("https://localhost/hook?x", "must not contain a query string"),
        ("https://localhost/hook#x", "must not contain a fragment"),
    ],
)
def test_resolve_override_host_still_obeys_the_other_rules(url: str, reason: str) -> None:
    assert reason in check_destination_url(url, {"localhost"})


def test_resolve_override_does_not_admit_other_hosts() -> None:
    assert check_destination_url("https://printer.local/hook", {"localhost"}) == [
        "host printer.local is a local-only name"
    ]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://example.com/", "must use https"),
        ("https://example.com/?", "must not contain a query string"),
        ("https://example.com/#", "must not contain a fragment"),
        ("https://u@example.com/", "must not contain credentials (user information)"),
        ("https://example.com:8443/", "must not use a custom port (only 443)"),
        ("https://10.0.0.1/", "host 10.0.0.1 is a private address"),
        ("https://[::1]/", "host ::1 is a loopback address"),
        ("https://169.254.169.254/", "host 169.254.169.254 is a cloud metadata address"),
        ("https://foo.localhost/", "host foo.localhost is a local-only name"),
        ("https:///x", "must have a host"),
    ],
)
def test_reason_names_the_problem(url: str, reason: str) -> None:
    assert reason in check_destination_url(url)


def test_every_problem_is_reported() -> None:
    reasons = check_destination_url("http://u@10.0.0.1:8080/x?q#f")
    assert len(reasons) == 6


def test_url_of_2048_characters_is_the_limit() -> None:
    base = "https://example.com/"
    assert check_destination_url(base + "a" * (2048 - len(base))) == []
    assert check_destination_url(base + "a" * (2049 - len(base))) == [
        "must be at most 2048 characters"
    ]


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "100.100.100.200",
        "169.254.169.254",
        "224.0.0.251",
        "198.19.255.255",
        "192.0.0.9",
        "255.255.255.255",
        "::1",
        "::ffff:10.0.0.1",
        "64:ff9b::7f00:1",
        "64:ff9b:1::808:808",
        "2002:a00:1::1",
        "2001::1",
        "fd00:ec2::254",
        "fe80::1%eth0",
        "5f00::1",
        "3fff::1",
    ],
)
def test_non_public_address(address: str) -> None:
    assert not is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address",
    [
        "93.184.215.14",
        "8.8.8.8",
        "2606:4700:4700::1111",
        # Translations are judged by the IPv4 address they carry: DNS64 resolvers answer these.
        "64:ff9b::808:808",
        "2002:808:808::1",
        "::ffff:8.8.8.8",
    ],
)
def test_public_address(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address))


def test_overrides_parse_like_curl_resolve() -> None:
    assert parse_resolve_overrides(
        "hooks.example.com=127.0.0.1:8443, Other.Example.com.=[::1]:9000"
    ) == {
        "hooks.example.com": ("127.0.0.1", 8443),
        "other.example.com": ("::1", 9000),
    }


@pytest.mark.parametrize("value", [None, "", "  "])
def test_no_overrides(value: str | None) -> None:
    assert parse_resolve_overrides(value) == {}


@pytest.mark.parametrize(
    "value",
    [
        "hooks.example.com",
        "hooks.example.com=127.0.0.1",
        "hooks.example.com=127.0.0.1:",
        "hooks.example.com=127.0.0.1:0",
        "hooks.example.com=127.0.0.1:70000",
        "hooks.example.com=localhost:8443",
        "hooks.example.com=::1:8443",
        "=127.0.0.1:8443",
        "bad host=127.0.0.1:8443",
        "a.example.com=127.0.0.1:1,a.example.com=127.0.0.1:2",
    ],
)
def test_malformed_overrides_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="resolve override"):
        parse_resolve_overrides(value)


def test_one_non_public_answer_blocks_the_name() -> None:
    with pytest.raises(DestinationBlocked) as caught:
        pick_vetted_address("mixed.example.com", ["93.184.215.14", "10.0.0.5"])
    assert caught.value.reason == (
        "host mixed.example.com is not a public destination (it resolves to a private address)"
    )


@pytest.mark.parametrize(
    "answer", ["10.0.0.5", "::ffff:10.0.0.5", "64:ff9b::a00:5", "2002:a00:5::1", "fd00::5"]
)
def test_a_blocked_reason_never_quotes_what_the_name_resolves_to(
    answer: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="pressroom.kit.outbound.destination")
    with pytest.raises(DestinationBlocked) as caught:
        pick_vetted_address("vm", [answer])
    assert "not a public destination" in caught.value.reason
    for spelling in {answer, str(ipaddress.ip_address(answer)), "10.0.0.5", "a00:5"}:
        assert spelling not in caught.value.reason
    # The operator's log keeps it.
    logged = [(record.__dict__["host"], record.__dict__["address"]) for record in caplog.records]
    assert logged == [("vm", answer)]


def test_first_answer_is_used_when_all_are_public() -> None:
    assert pick_vetted_address("ok.example.com", ["93.184.215.14", "8.8.8.8"]) == "93.184.215.14"


def test_no_answers_is_a_resolver_error() -> None:
    with pytest.raises(OSError, match="no addresses"):
        pick_vetted_address("empty.example.com", [])


@pytest.mark.anyio
async def test_localhost_resolution_is_blocked() -> None:
    with pytest.raises(DestinationBlocked) as caught:
        await resolve_destination("localhost", 443, {})
    assert "loopback" in caught.value.reason
    assert "127.0.0.1" not in caught.value.reason and "::1" not in caught.value.reason


@pytest.mark.anyio
async def test_overridden_host_skips_the_public_check() -> None:
    overrides = {"localhost": ("127.0.0.1", 8443), "hooks.example.com": ("::1", 9443)}
    assert await resolve_destination("localhost", 443, overrides) == ("127.0.0.1", 8443)
    assert await resolve_destination("HOOKS.example.com.", 443, overrides) == ("::1", 9443)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
