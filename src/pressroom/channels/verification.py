"""Credentials a person hands over on the command line, checked with the network before a
channel is stored: a wrong app password or a revoked token fails the connect, not the first
publish hours later.

- Bluesky: `com.atproto.server.createSession` with the handle (or DID, or email) and an app
  password; the session's tokens are kept, so the first publish needs no second login.
- Mastodon: `GET /api/v1/accounts/verify_credentials` on the instance with the access token;
  the account's id and `@user@instance` handle are kept.
- X: `GET /2/users/me` with the OAuth 2.0 user access token (refreshed once with the refresh
  token if X refuses it and the deployment's X app is configured).
- Every network in `registry.CONNECTORS` (Facebook, Instagram, Threads, ...): its connector's
  `from_token` with an operator's existing long-lived access token; a token may give access to
  several accounts (a Facebook user's Pages), each of which becomes a channel.

Nothing here touches the database: the caller verifies first, outside any transaction, then
stores the result through `channels.service.connect`.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

import httpx

from pressroom.config import Settings
from pressroom.providers import bluesky
from pressroom.providers import x
from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.connection import OAuthConnector
from pressroom.providers.connection import oauth_app
from pressroom.providers.mastodon import adapter as mastodon
from pressroom.providers.mastodon.oauth import check_instance_url
from pressroom.providers.registry import CONNECTORS
from pressroom.providers.registry import x_app

# Providers connected on the command line with credentials, and the options each takes;
# every provider in registry.CONNECTORS also takes an access token (`accepted_options`).
PROVIDER_OPTIONS: dict[str, tuple[str, ...]] = {
    "bluesky": ("--handle", "--app-password", "--service"),
    "mastodon": ("--instance", "--access-token"),
    "x": ("--access-token", "--refresh-token"),
}
CONNECTOR_OPTIONS = ("--access-token",)
# What the providers connected with credentials need, in the order it is checked: each option
# (a `ProviderOptions` field) and what to say when it is missing (or empty).
NEEDED_OPTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "bluesky": (
        ("handle", "bluesky needs --handle (the account's handle, DID or email)"),
        (
            "app_password",
            "bluesky needs an app password: --app-password-env VAR (or --app-password); create "
            "one in Bluesky's Settings > Privacy and security > App passwords",
        ),
    ),
    "mastodon": (
        ("instance", "mastodon needs --instance (e.g. https://mastodon.social)"),
        (
            "access_token",
            "mastodon needs an access token: --access-token-env VAR (or --access-token); create "
            "one in the account's Preferences > Development, with the scopes read and write",
        ),
    ),
    "x": (
        (
            "access_token",
            "x needs an OAuth 2.0 user access token: --access-token-env VAR (or --access-token), "
            "and --refresh-token-env VAR (or --refresh-token) so it can be renewed",
        ),
    ),
}


def accepted_options(provider: str) -> tuple[str, ...]:
    """The credential options `provider` takes on the command line (none: not connected so)."""
    if provider in PROVIDER_OPTIONS:
        return PROVIDER_OPTIONS[provider]
    return CONNECTOR_OPTIONS if provider in CONNECTORS else ()


@dataclass(frozen=True)
class ProviderOptions:
    """What the person gave on the command line (secrets already read from the environment
    where they asked for that)."""

    handle: str | None = None
    app_password: str | None = field(default=None, repr=False)
    service: str | None = None
    instance: str | None = None
    access_token: str | None = field(default=None, repr=False)
    refresh_token: str | None = field(default=None, repr=False)


class VerificationFailed(Exception):
    """The provider refused the credentials, or could not be asked; the message says what to
    do and never quotes a secret."""


async def verify(
    provider: str, options: ProviderOptions, *, settings: Settings, http: httpx.AsyncClient
) -> list[ConnectedAccount]:
    """Check `options` with `provider` now: the accounts they give access to (one, except for
    connectors whose tokens reach several). ValueError for missing or malformed options,
    VerificationFailed when the provider says no."""
    try:
        if provider == "bluesky":
            return [await _bluesky(options, http)]
        if provider == "mastodon":
            return [await _mastodon(options, http)]
        if provider == "x":
            return [await _x(options, settings, http)]
        connector = CONNECTORS.get(provider)
        if connector is not None:
            return await _from_token(connector, options, settings, http)
    except ProviderError as error:
        raise VerificationFailed(_explain(provider, error)) from None
    raise ValueError(f"{provider} channels are not connected with credentials")


async def _from_token(
    connector: OAuthConnector,
    options: ProviderOptions,
    settings: Settings,
    http: httpx.AsyncClient,
) -> list[ConnectedAccount]:
    provider = connector.provider
    (token,) = _required(options, provider)
    accounts = await connector.from_token(oauth_app(settings, provider), token, http)
    if not accounts:
        raise VerificationFailed(
            f"{provider} accepted the access token, but it gives access to no account to connect"
        )
    return accounts


async def _bluesky(options: ProviderOptions, http: httpx.AsyncClient) -> ConnectedAccount:
    identifier, app_password = _required(options, "bluesky")
    credentials = await bluesky.create_session_credentials(
        identifier, app_password, options.service or bluesky.DEFAULT_SERVICE, http=http
    )
    handle = credentials.get("handle") or credentials.get("identifier")
    return ConnectedAccount(credentials, f"@{handle}" if handle else None)


async def _mastodon(options: ProviderOptions, http: httpx.AsyncClient) -> ConnectedAccount:
    instance, token = _required(options, "mastodon")
    base_url = check_instance_url(instance)
    credentials, handle = await mastodon.verify_credentials(base_url, token, http=http)
    return ConnectedAccount(credentials, handle)


async def _x(
    options: ProviderOptions, settings: Settings, http: httpx.AsyncClient
) -> ConnectedAccount:
    (token,) = _required(options, "x")
    credentials = x.credentials_from_cli_options(token, options.refresh_token)
    verified, handle = await x.verify_credentials(credentials, app=x_app(settings), http=http)
    return ConnectedAccount(verified, handle)


def _required(options: ProviderOptions, provider: str) -> list[str]:
    """The values of the options `provider` needs (`NEEDED_OPTIONS`; a connector's, an access
    token), in order; ValueError saying what is missing for the first one not given."""
    needed = NEEDED_OPTIONS.get(provider) or (
        (
            "access_token",
            f"{provider} needs a long-lived access token: --access-token-env VAR (or "
            "--access-token)",
        ),
    )
    values: list[str] = []
    for name, missing in needed:
        value = getattr(options, name)
        if not value:
            raise ValueError(missing)
        values.append(value)
    return values


def _explain(provider: str, error: ProviderError) -> str:
    if error.code == "auth_expired":
        return f"{provider} refused the credentials: {error.message}"
    if error.retryable:
        return f"{provider} could not be asked to verify the credentials: {error.message}"
    return f"{provider} did not accept the connection: {error.message}"
