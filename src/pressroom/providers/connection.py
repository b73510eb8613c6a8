"""Connecting a network's accounts through OAuth: what each network package provides (an
`OAuthConnector`) and what it is given (the deployment's `OAuthApp`).

The channels domain runs the flow (channels/authorization.py): it makes the random `state`,
stores what `start` returns to keep (encrypted, for ten minutes and one callback), sends the
person to the URL, and on the callback hands the code back to `exchange`, outside any
transaction. A grant may cover several accounts (the Facebook Pages the person ticked in
Facebook's own dialog): each `ConnectedAccount` becomes one channel.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import ClassVar
from typing import Protocol
from urllib.parse import urlencode

import httpx

from pressroom.config import Settings
from pressroom.providers.adapter import ProviderError
from pressroom.providers.token_endpoint import TokenEndpoint

# Providers whose deployment app comes from PRESSROOM_{PROVIDER}_CLIENT_ID and _CLIENT_SECRET.
APP_PROVIDERS = (
    "x",
    "linkedin",
    "facebook",
    "instagram",
    "threads",
    "tiktok",
    "youtube",
    "pinterest",
)

# The setting that pins a provider's API version, for the connectors that call a versioned API.
API_VERSION_SETTINGS = {
    "facebook": "meta_graph_version",
    "instagram": "meta_graph_version",
    "linkedin": "linkedin_version",
}


@dataclass(frozen=True)
class OAuthApp:
    """The deployment's app at a network, and where the network sends the browser back."""

    provider: str
    client_id: str
    client_secret: str = field(repr=False)
    redirect_uri: str
    # The API version the deployment's settings pin for this network (`API_VERSION_SETTINGS`);
    # None where the network has no such setting: the connector then uses its own default.
    api_version: str | None = None


@dataclass(frozen=True)
class AuthorizationStart:
    """Where to send the person, and what the callback will need back (a PKCE verifier, ...):
    kept encrypted until the callback, never shown."""

    url: str
    secret: dict[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ConnectedAccount:
    """One account a grant connects: one channel. `credentials` are stored encrypted and given
    back to the adapter as `ChannelContext.credentials`; `account_name` names the account
    (a Page's name) when a grant covers several, so their channels can be told apart."""

    credentials: dict[str, Any] = field(repr=False)
    handle: str | None
    account_name: str | None = None
    # What the account's own server accepts where it differs from the declaration (a Mastodon
    # instance's limits), read before the channel is stored; None: the stock limits apply.
    limits: dict[str, Any] | None = None


class OAuthConnector(Protocol):
    """One per network connected through OAuth (in its package's `oauth.py`)."""

    provider: str

    def start(self, app: OAuthApp, state: str) -> AuthorizationStart:
        """The network's authorization URL (client id, redirect URI, `state`,
        `response_type=code`, the publishing scopes) and what the callback needs back."""
        ...

    async def exchange(
        self, app: OAuthApp, code: str, kept: Mapping[str, str], http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        """Trade the callback's code for long-lived credentials and read the account(s).
        Raise ProviderError (the network's own words in its message) when it refuses."""
        ...

    async def from_token(
        self, app: OAuthApp | None, token: str, http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        """The accounts an operator's existing long-lived token gives access to
        (`pressroom channels connect PROVIDER --access-token-env VAR`), verified with the
        network before anything is stored. Raise ProviderError when it refuses."""
        ...


class CodeFlowConnector:
    """What the connectors of networks using the authorization code flow (RFC 6749 section
    4.1) share: `start` sends the person to `authorize_url` with the app's client id (under
    `client_field`), the redirect URI, `response_type=code`, the `scopes` joined by
    `scope_separator`, `state` and the network's `authorize_extra` parameters; a clock stamps
    the expiries of the tokens `exchange` obtains."""

    provider: str
    authorize_url: ClassVar[str]
    scopes: ClassVar[tuple[str, ...]]
    scope_separator: ClassVar[str] = ","
    client_field: ClassVar[str] = "client_id"
    authorize_extra: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock

    def authorization_endpoint(self, app: OAuthApp) -> str:
        """Where the person is sent (a network may version it)."""
        return self.authorize_url

    def start(self, app: OAuthApp, state: str) -> AuthorizationStart:
        query = {
            self.client_field: app.client_id,
            "redirect_uri": app.redirect_uri,
            "response_type": "code",
            "scope": self.scope_separator.join(self.scopes),
            "state": state,
            **dict(self.authorize_extra),
        }
        return AuthorizationStart(f"{self.authorization_endpoint(app)}?{urlencode(query)}")


class TokenGrantConnector(CodeFlowConnector):
    """A `CodeFlowConnector` whose network's `token_endpoint` trades the callback's code for
    credentials, a grant connecting the one account `account_of` reads with them."""

    token_endpoint: ClassVar[TokenEndpoint]

    async def exchange(
        self, app: OAuthApp, code: str, kept: Mapping[str, str], http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        credentials = await self.token_endpoint.code_grant(
            http, app, code, app.redirect_uri, self._clock
        )
        return [await self.account_of(http, app, credentials)]

    async def account_of(
        self, http: httpx.AsyncClient, app: OAuthApp | None, credentials: dict[str, Any]
    ) -> ConnectedAccount:
        """The account `credentials` act for, verified with the network."""
        raise NotImplementedError


def operator_token(token: str, needed: str) -> str:
    """The token an operator gave `from_token`, without surrounding blanks; `invalid_request`
    saying `needed` when it is empty."""
    token = token.strip()
    if not token:
        raise ProviderError("invalid_request", needed)
    return token


def missing_app_settings(settings: Settings, provider: str) -> list[str]:
    """The settings a provider's deployment app still needs (empty when configured)."""
    prefix = f"PRESSROOM_{provider.upper()}_CLIENT_"
    missing = []
    if not getattr(settings, f"{provider}_client_id", None):
        missing.append(prefix + "ID")
    if getattr(settings, f"{provider}_client_secret", None) is None:
        missing.append(prefix + "SECRET")
    return missing


def oauth_app(settings: Settings, provider: str) -> OAuthApp | None:
    """The deployment's app at `provider`, or None while either setting is missing."""
    if provider not in APP_PROVIDERS or missing_app_settings(settings, provider):
        return None
    secret = getattr(settings, f"{provider}_client_secret")
    return OAuthApp(
        provider=provider,
        client_id=getattr(settings, f"{provider}_client_id"),
        client_secret=secret.get_secret_value(),
        redirect_uri=f"{settings.public_url}/connect/{provider}/callback",
        api_version=_api_version(settings, provider),
    )


def _api_version(settings: Settings, provider: str) -> str | None:
    name = API_VERSION_SETTINGS.get(provider)
    return None if name is None else str(getattr(settings, name))


def api_version(app: OAuthApp | None, default: str) -> str:
    """The version a connector calls its network's API at: the deployment's setting when the
    app carries it, else the connector's own default (an operator token with no app)."""
    return app.api_version if app is not None and app.api_version else default
