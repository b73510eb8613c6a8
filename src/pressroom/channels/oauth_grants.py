"""How each provider's OAuth authorization starts, and how the callback's code becomes the
accounts it grants (the steps of channels/authorization.py that talk to the network).

- `x`: OAuth 2.0 with PKCE through the X package (the deployment's X app may be a public
  client, without a secret).
- `mastodon`: Pressroom's app registered on the instance (kept in `mastodon_apps`), then PKCE.
- Every provider in `registry.CONNECTORS`: its connector, given the deployment's app
  (`oauth_app`: PRESSROOM_{PROVIDER}_CLIENT_ID and _CLIENT_SECRET); what its `start` keeps
  comes back to its `exchange`, which may grant several accounts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from pressroom.channels import repository
from pressroom.channels import service as channels
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.kit.errors import PressroomError
from pressroom.kit.errors import field_error
from pressroom.providers import registry
from pressroom.providers import x as x_oauth
from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.connection import OAuthApp
from pressroom.providers.connection import oauth_app
from pressroom.providers.mastodon import oauth as mastodon_oauth
from pressroom.providers.mastodon.oauth import MastodonApp
from pressroom.providers.x.oauth import new_code_verifier
from pressroom.runtime import Runtime

# Providers with a flow of their own here; the others are those of registry.CONNECTORS.
OWN_FLOWS = ("mastodon", "x")


def connected_through_oauth(provider: str) -> bool:
    return provider in OWN_FLOWS or provider in registry.CONNECTORS


def callback_url(runtime: Runtime, provider: str) -> str:
    """The redirect URI registered with the provider (PRESSROOM_PUBLIC_URL + the callback)."""
    return f"{runtime.settings.public_url}/connect/{provider}/callback"


@dataclass(frozen=True)
class Started:
    """The provider's authorization URL, and what its callback will need (kept encrypted)."""

    url: str
    secret: dict[str, str] = field(repr=False)
    # Mastodon: the instance, in its comparable form.
    instance: str | None = None


async def start(runtime: Runtime, provider: str, state: str, instance: str | None) -> Started:
    """Build the authorization URL. For Mastodon, the app is looked up, or registered on the
    instance, in transactions of its own (a registration is kept even if the request then
    fails): call this before the request's transaction begins."""
    if provider == "x":
        x_app = registry.x_app(runtime.settings, redirect_uri=callback_url(runtime, provider))
        assert x_app is not None  # checked by the caller: x is configured
        pending = x_oauth.start_authorization(x_app, state=state)
        return Started(pending.url, {"codeVerifier": pending.code_verifier})
    if provider == "mastodon":
        base_url = mastodon_oauth.check_instance_url(instance or "")
        mastodon_app = await _mastodon_app(runtime, base_url, callback_url(runtime, provider))
        verifier = new_code_verifier()
        return Started(
            mastodon_oauth.authorization_url(mastodon_app, state, verifier),
            {
                "codeVerifier": verifier,
                "clientId": mastodon_app.client_id,
                "clientSecret": mastodon_app.client_secret,
            },
            base_url,
        )
    started = registry.CONNECTORS[provider].start(_app(runtime, provider), state)
    return Started(started.url, dict(started.secret))


async def exchange(
    runtime: Runtime, provider: str, code: str, kept: Mapping[str, str], instance: str | None
) -> list[ConnectedAccount]:
    """Trade the callback's code for the granted accounts' credentials (network; no
    transaction). Raises ProviderError when the provider refuses."""
    http = runtime.provider_http
    if provider == "x":
        x_app = registry.x_app(runtime.settings, redirect_uri=callback_url(runtime, provider))
        if x_app is None:
            raise _not_configured(runtime, provider)
        credentials = await x_oauth.exchange_code(x_app, code, kept["codeVerifier"], http=http)
        username = credentials.get("username")
        return [ConnectedAccount(credentials, f"@{username}" if username else None)]
    if provider == "mastodon":
        assert instance is not None
        mastodon_app = MastodonApp(
            instance, callback_url(runtime, provider), kept["clientId"], kept["clientSecret"]
        )
        credentials, handle = await mastodon_oauth.exchange_code(
            http, mastodon_app, code, kept["codeVerifier"]
        )
        return [ConnectedAccount(credentials, handle)]
    connector = registry.CONNECTORS.get(provider)
    if connector is None:
        raise _not_configured(runtime, provider)
    return await connector.exchange(_app(runtime, provider), code, kept, http)


def _app(runtime: Runtime, provider: str) -> OAuthApp:
    """The deployment's app at `provider`; 400 `not_configured` naming the missing settings
    (they may have been removed between the start and the callback)."""
    app = oauth_app(runtime.settings, provider)
    if app is None:
        raise _not_configured(runtime, provider)
    return app


def _not_configured(runtime: Runtime, provider: str) -> PressroomError:
    reason = channels.not_configured_reason(provider, runtime.settings)
    return field_error("provider", "not_configured", reason)


async def _mastodon_app(runtime: Runtime, base_url: str, redirect_uri: str) -> MastodonApp:
    async with unit_of_work(runtime.sessions) as session:
        stored = await repository.find_mastodon_app(session, base_url, redirect_uri)
        if stored is not None:
            return MastodonApp(
                base_url,
                redirect_uri,
                stored.client_id,
                runtime.box.decrypt(stored.client_secret_encrypted),
            )
    try:
        registered = await mastodon_oauth.register_app(
            runtime.provider_http, base_url, redirect_uri
        )
    except ProviderError as error:
        raise field_error(
            "instance", "unreachable", f"{base_url} could not register Pressroom: {error.message}"
        ) from None
    async with unit_of_work(runtime.sessions) as session:
        kept = await repository.keep_mastodon_app(
            session,
            base_url=base_url,
            redirect_uri=redirect_uri,
            client_id=registered.client_id,
            client_secret_encrypted=runtime.box.encrypt(registered.client_secret),
            now=utcnow(),
        )
        return MastodonApp(
            base_url,
            redirect_uri,
            kept.client_id,
            runtime.box.decrypt(kept.client_secret_encrypted),
        )
