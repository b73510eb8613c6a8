"""A network connected through an OAuth connector, standing in for Facebook (whose grants may
cover several Pages) in the tests of the generic flows: it records what it is given and
answers what the test says, without any network."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from pressroom.providers import registry
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import ProviderAdapter
from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import AuthorizationStart
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.connection import OAuthApp

PROVIDER = "facebook"
AUTHORIZE = "https://www.facebook.example/v24.0/dialog/oauth"
# What `start` keeps for the callback: must stay encrypted, and never be shown.
KEPT_SECRET = "kept-nonce-for-the-callback-0123456789"
APP_SECRET = "facebook-app-secret-value"


def page(number: int, *, name: str | None = None) -> ConnectedAccount:
    return ConnectedAccount(
        credentials={"pageId": f"10{number}", "accessToken": f"page-token-{number}-secret"},
        handle=f"@page{number}",
        account_name=name or f"Page {number}",
    )


@dataclass
class FakeConnector:
    accounts: list[ConnectedAccount] = field(default_factory=lambda: [page(1)])
    refusal: ProviderError | None = None
    provider: str = PROVIDER
    started: list[tuple[OAuthApp, str]] = field(default_factory=list)
    exchanged: list[dict[str, Any]] = field(default_factory=list)
    tokens: list[tuple[OAuthApp | None, str]] = field(default_factory=list)

    def start(self, app: OAuthApp, state: str) -> AuthorizationStart:
        self.started.append((app, state))
        query = {
            "client_id": app.client_id,
            "redirect_uri": app.redirect_uri,
            "state": state,
            "response_type": "code",
            "scope": "pages_manage_posts,pages_read_engagement",
        }
        return AuthorizationStart(f"{AUTHORIZE}?{urlencode(query)}", {"nonce": KEPT_SECRET})

    async def exchange(
        self, app: OAuthApp, code: str, kept: Mapping[str, str], http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        assert isinstance(http, httpx.AsyncClient)
        self.exchanged.append({"app": app, "code": code, "kept": dict(kept)})
        if self.refusal is not None:
            raise self.refusal
        return self.accounts

    async def from_token(
        self, app: OAuthApp | None, token: str, http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        assert isinstance(http, httpx.AsyncClient)
        self.tokens.append((app, token))
        if self.refusal is not None:
            raise self.refusal
        return self.accounts


def _adapter(channel: ChannelContext, services: registry.AdapterServices) -> ProviderAdapter:
    return registry.UnconfiguredAdapter(channel.provider, "the fake network publishes nothing")


def register(monkeypatch: pytest.MonkeyPatch) -> FakeConnector:
    """A fake registered as Facebook's connector and adapter for the test."""
    fake = FakeConnector()
    monkeypatch.setitem(registry.CONNECTORS, PROVIDER, fake)
    monkeypatch.setitem(registry.REAL_ADAPTERS, PROVIDER, _adapter)
    return fake
