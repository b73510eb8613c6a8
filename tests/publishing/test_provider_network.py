"""The process's provider client reaches only public addresses: a host that resolves to a
loopback or private address is refused before any connection, permanently and saying why.
(Literal addresses resolve locally: these tests send nothing anywhere.)"""

from __future__ import annotations

import httpx
import pytest

from pressroom.kit.outbound.api import build_api_client as build_provider_client
from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import RefusedDestination
from pressroom.providers.http import transport_failure
from pressroom.providers.mastodon.adapter import verify_credentials


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://127.0.0.1/api/v1/accounts/verify_credentials", "a loopback address"),
        ("https://10.1.2.3/api/v1/accounts/verify_credentials", "a private address"),
        ("https://169.254.169.254/latest/meta-data", "a cloud metadata address"),
    ],
)
async def test_non_public_addresses_are_refused_before_connecting(url: str, reason: str) -> None:
    async with build_provider_client() as client:
        with pytest.raises(httpx.ConnectError) as raised:
            await client.get(url)
    refused = raised.value.__cause__
    assert isinstance(refused, RefusedDestination)
    assert reason in refused.reason
    error = transport_failure(raised.value, "Mastodon", "checking the token")
    assert error.code == "invalid_request"
    assert not error.retryable
    assert reason in error.message


async def test_a_mastodon_token_check_against_a_private_instance_fails_permanently() -> None:
    async with build_provider_client() as client:
        with pytest.raises(ProviderError) as raised:
            await verify_credentials("https://192.168.1.20", "a-token-value", http=client)
    assert raised.value.code == "invalid_request"
    assert "a private address" in raised.value.message
    assert "a-token-value" not in raised.value.message


async def test_the_client_follows_no_redirects_and_mounts_nothing_that_skips_the_vetting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The proxy is honoured by the vetting transport itself (test_provider_proxy.py), never by
    # an httpx-mounted proxy transport that would bypass it.
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    async with build_provider_client() as client:
        assert client.follow_redirects is False
        assert client._mounts == {}
