"""OAuth 2.0 for Mastodon, storage-agnostic: any instance, an app registered on it first.

Follows https://docs.joinmastodon.org/client/token/ and .../methods/apps/ and .../methods/oauth/:

1. `register_app(http, base_url, redirect_uri)`: `POST /api/v1/apps` with `client_name`,
   `redirect_uris` and `scopes` -> `{"client_id", "client_secret", ...}`. An app is
   per instance and redirect URI; the caller keeps it and reuses it for later connections.
2. `authorization_url(app, state, code_verifier)`: `GET /oauth/authorize?response_type=code
   &client_id=...&redirect_uri=...&scope=...&state=...`, with a PKCE S256 challenge (Mastodon
   4.3 and later check it; earlier servers ignore it, and the confidential client secret still
   protects the code).
3. `exchange_code(http, app, code, code_verifier)`: `POST /oauth/token` with
   `grant_type=authorization_code` -> `{"access_token", "token_type": "Bearer", "scope",
   "created_at"}`; the account is then read with `GET /api/v1/accounts/verify_credentials`.
   Mastodon tokens do not expire.

Scopes are the granular ones the adapter needs (Mastodon 2.4.3 and later): read the account,
read statuses (metrics), write statuses (post, reply, delete) and write media (upload, poll).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any
from urllib.parse import urlencode

import httpx

from pressroom.kit.outbound.destination import check_destination_url
from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import provider_request
from pressroom.providers.http import response_json
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure
from pressroom.providers.mastodon.adapter import PROVIDER
from pressroom.providers.mastodon.adapter import verify_credentials
from pressroom.providers.x.oauth import code_challenge

SCOPES = ("read:accounts", "read:statuses", "write:media", "write:statuses")
CLIENT_NAME = "Pressroom"
MAX_INSTANCE_URL_LENGTH = 500


@dataclass(frozen=True)
class MastodonApp:
    """An app registered on one instance for one redirect URI."""

    base_url: str
    redirect_uri: str
    client_id: str
    client_secret: str = field(repr=False)


def check_instance_url(url: str) -> str:
    """The instance's base URL in its comparable form (`https://host[/path]`); ValueError
    saying what is wrong otherwise. The service contacts the URL a person typed, so it must be
    a public https origin: the rules of webhook destinations (no credentials, query, fragment
    or custom port, no literal loopback, private or local address) apply, and the addresses it
    resolves to are vetted again at every connection (network.py)."""
    url = url.strip()
    if len(url) > MAX_INSTANCE_URL_LENGTH:
        raise ValueError(f"the instance URL must be at most {MAX_INSTANCE_URL_LENGTH} characters")
    if "://" not in url:
        url = f"https://{url}"  # "mastodon.social" names https://mastodon.social
    reasons = check_destination_url(url)
    if reasons:
        raise ValueError(f"the instance URL {'; '.join(reasons)}")
    parts = httpx.URL(url)
    host = parts.raw_host.decode("ascii").lower().removesuffix(".")
    return f"https://{host}{parts.path.rstrip('/')}"


async def register_app(http: httpx.AsyncClient, base_url: str, redirect_uri: str) -> MastodonApp:
    """Register Pressroom on the instance (POST /api/v1/apps); raises ProviderError."""
    action = "registering the app on the instance"
    response = await provider_request(
        http,
        "POST",
        f"{base_url}/api/v1/apps",
        provider=PROVIDER,
        action=action,
        json={
            "client_name": CLIENT_NAME,
            "redirect_uris": redirect_uri,
            "scopes": " ".join(SCOPES),
        },
    )
    body = response_json(response)
    if not response.is_success:
        raise _oauth_failure(response, body, action)
    client_id, client_secret = body.get("client_id"), body.get("client_secret")
    if not isinstance(client_id, str) or not isinstance(client_secret, str):
        raise ProviderError(
            "invalid_request",
            f"{base_url} answered the app registration without a client id and secret; is it "
            "a Mastodon instance?",
        )
    return MastodonApp(base_url, redirect_uri, client_id, client_secret)


def authorization_url(app: MastodonApp, state: str, code_verifier: str) -> str:
    query = urlencode(
        {
            "response_type": "code",
            "client_id": app.client_id,
            "redirect_uri": app.redirect_uri,
            "scope": " ".join(SCOPES),
            "state": state,
            "code_challenge": code_challenge(code_verifier),
            "code_challenge_method": "S256",
        }
    )
    return f"{app.base_url}/oauth/authorize?{query}"


async def exchange_code(
    http: httpx.AsyncClient, app: MastodonApp, code: str, code_verifier: str
) -> tuple[dict[str, Any], str]:
    """Trade the callback's code for a token (POST /oauth/token), read the account, and return
    the channel's credentials and handle (`@user@instance`); raises ProviderError."""
    action = "exchanging the authorization code"
    response = await provider_request(
        http,
        "POST",
        f"{app.base_url}/oauth/token",
        provider=PROVIDER,
        action=action,
        data={
            "grant_type": "authorization_code",
            "code": code,
            "client_id": app.client_id,
            "client_secret": app.client_secret,
            "redirect_uri": app.redirect_uri,
            "code_verifier": code_verifier,
            "scope": " ".join(SCOPES),
        },
    )
    body = response_json(response)
    if not response.is_success:
        raise _oauth_failure(response, body, action, (code, app.client_secret))
    token = body.get("access_token")
    if not isinstance(token, str) or not token:
        raise ProviderError(
            "provider_unavailable", f"{PROVIDER} answered {action} without a token."
        )
    credentials, handle = await verify_credentials(app.base_url, token, http=http)
    # Kept to revoke the token (POST /oauth/revoke needs the app's id and secret).
    credentials.update(clientId=app.client_id, clientSecret=app.client_secret)
    return credentials, handle


def _oauth_failure(
    response: httpx.Response,
    body: dict[str, object],
    action: str,
    secrets: tuple[str | None, ...] = (),
) -> ProviderError:
    described = body.get("error_description") or body.get("error") or ""
    detail = safe_detail(described, secrets)
    if response.status_code in (400, 401):
        # invalid_grant / invalid_client: the code is spent, expired or not for this app.
        return ProviderError(
            "auth_expired",
            f"{PROVIDER} refused {action} ({detail or 'invalid grant'}). Start the connection "
            "again.",
        )
    if response.status_code == 422:
        return ProviderError(
            "invalid_request", f"{PROVIDER} refused {action}: {detail or 'unprocessable'}"
        )
    return status_failure(response, PROVIDER, action, detail)
