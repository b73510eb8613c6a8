"""An OAuth 2.0 token endpoint (RFC 6749 section 4.1.3 and 6): a code or a refresh token
traded for an access token.

X, YouTube (Google), LinkedIn, Pinterest and TikTok speak the same protocol: a form posted by
the deployment's app; a refused grant (400 or 401: `invalid_grant`, a spent, expired or revoked
code or refresh token) is `auth_expired`, since only a new consent helps; any other failure is
the network's; a success carries `access_token`, and, as the network grants them, `expires_in`,
`refresh_token`, a refresh token lifetime and `scope`. What differs between them is data
(`TokenEndpoint`): how the app authenticates, the names of a few fields, and how an error
answer is read. Credentials are the keys adapters keep: `accessToken`, `expiresAt`,
`refreshToken`, `refreshExpiresAt` (Unix seconds) and `scope`.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Protocol

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import provider_request
from pressroom.providers.http import response_json
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure

Secrets = tuple[str | None, ...]
# An error answer's words, made safe to show (the secrets taken out).
Describe = Callable[[httpx.Response, Secrets], str]
# The error for a failure that is not a refused grant: (response, action, detail, secrets).
Failure = Callable[[httpx.Response, str, str, Secrets], ProviderError]


class TokenClient(Protocol):
    """The deployment's app as the token endpoint knows it."""

    @property
    def client_id(self) -> str: ...

    @property
    def client_secret(self) -> str | None: ...


def oauth_error_description(response: httpx.Response, secrets: Secrets) -> str:
    """RFC 6749 section 5.2's `error_description`, else its `error` code."""
    body = response_json(response)
    return safe_detail(body.get("error_description") or body.get("error") or "", secrets)


@dataclass(frozen=True)
class TokenEndpoint:
    """One network's token endpoint and the ways it differs from the protocol's common case."""

    url: str
    # The network's name in status failures, and the one that refuses in messages ("Google").
    provider: str
    refuser: str
    # The form field of the client id (None: not sent in the form), and whether the client
    # secret goes in the form too; if not, the app authenticates with HTTP Basic when it has a
    # secret (a public client has none).
    client_id_field: str | None = "client_id"
    secret_in_form: bool = True
    headers: Mapping[str, str] = field(default_factory=dict)
    # The answer's field for the refresh token's lifetime in seconds.
    refresh_lifetime_field: str = "refresh_token_expires_in"
    # More answer fields to keep: (answer field, credential key).
    kept_fields: tuple[tuple[str, str], ...] = ()
    # A success without an access token is a refused grant (TikTok answers errors with 200).
    refused_without_token: bool = False
    describe: Describe = oauth_error_description
    failure: Failure | None = None

    def form(self, app: TokenClient, grant: Mapping[str, str]) -> dict[str, str]:
        sent = dict(grant)
        if self.client_id_field is not None:
            sent[self.client_id_field] = app.client_id
        if self.secret_in_form and app.client_secret is not None:
            sent["client_secret"] = app.client_secret
        return sent

    def auth(self, app: TokenClient) -> httpx.BasicAuth | None:
        if self.secret_in_form or app.client_secret is None:
            return None
        return httpx.BasicAuth(app.client_id, app.client_secret)

    async def code_grant(
        self,
        http: httpx.AsyncClient,
        app: TokenClient,
        code: str,
        redirect_uri: str,
        clock: Callable[[], float],
        **extra: str,
    ) -> dict[str, Any]:
        """The callback's `code` (sent back to `redirect_uri`) traded for credentials."""
        grant = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        action = "exchanging the authorization code"
        return await request_grant(http, self, app, {**grant, **extra}, action, clock)

    async def refresh_grant(
        self,
        http: httpx.AsyncClient,
        app: TokenClient,
        refresh_token: str,
        clock: Callable[[], float],
        **extra: str,
    ) -> dict[str, Any]:
        """New credentials for `refresh_token` (which the answer may replace)."""
        grant = {"grant_type": "refresh_token", "refresh_token": refresh_token, **extra}
        return await request_grant(http, self, app, grant, "refreshing the access token", clock)

    def refused(self, action: str, detail: str) -> ProviderError:
        return ProviderError(
            "auth_expired",
            f"{self.refuser} refused {action} ({detail or 'invalid grant'}). "
            "Reconnect the channel.",
        )


async def request_grant(
    http: httpx.AsyncClient,
    endpoint: TokenEndpoint,
    app: TokenClient,
    grant: Mapping[str, str],
    action: str,
    clock: Callable[[], float],
) -> dict[str, Any]:
    """The credentials the endpoint gives for `grant` (a code or a refresh token, with its
    `grant_type`); a refused grant raises `auth_expired`, any other failure the network's
    error."""
    auth = endpoint.auth(app)
    response = await provider_request(
        http,
        "POST",
        endpoint.url,
        provider=endpoint.provider,
        action=action,
        data=endpoint.form(app, grant),
        headers=endpoint.headers,
        auth=auth if auth is not None else httpx.USE_CLIENT_DEFAULT,
    )
    secrets = (app.client_secret, grant.get("code"), grant.get("refresh_token"))
    body = response_json(response)
    access = body.get("access_token")
    if response.is_success and isinstance(access, str) and access:
        return token_credentials(endpoint, body, access, int(clock()))
    if response.is_success and not endpoint.refused_without_token:
        raise ProviderError(
            "provider_unavailable", f"{endpoint.refuser} answered {action} without a token."
        )
    detail = endpoint.describe(response, secrets)
    if response.is_success or response.status_code in (400, 401):
        raise endpoint.refused(action, detail)
    if endpoint.failure is not None:
        raise endpoint.failure(response, action, detail, secrets)
    raise status_failure(response, endpoint.provider, action, detail)


def lifetime(value: object) -> int | None:
    """A lifetime in seconds from a token answer (a positive whole number), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def token_credentials(
    endpoint: TokenEndpoint, body: Mapping[str, object], access: str, now: int
) -> dict[str, Any]:
    """The credentials a token answer gives (only the fields it carries)."""
    credentials: dict[str, Any] = {"accessToken": access}
    for source, key in (
        ("expires_in", "expiresAt"),
        (endpoint.refresh_lifetime_field, "refreshExpiresAt"),
    ):
        seconds = lifetime(body.get(source))
        if seconds is not None:
            credentials[key] = now + seconds
    for source, key in (
        ("refresh_token", "refreshToken"),
        ("scope", "scope"),
        *endpoint.kept_fields,
    ):
        value = body.get(source)
        if isinstance(value, str) and value:
            credentials[key] = value
    return credentials


@dataclass(frozen=True)
class TokenSet:
    """An access token with what came with it, for networks whose code reads the fields."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(repr=False)
    expires_at: int | None
    scope: str | None

    @classmethod
    def from_credentials(cls, credentials: Mapping[str, Any]) -> TokenSet:
        return cls(
            access_token=credentials["accessToken"],
            refresh_token=credentials.get("refreshToken"),
            expires_at=credentials.get("expiresAt"),
            scope=credentials.get("scope"),
        )

    def as_credentials(self) -> dict[str, Any]:
        credentials: dict[str, Any] = {"accessToken": self.access_token}
        if self.refresh_token:
            credentials["refreshToken"] = self.refresh_token
        if self.expires_at is not None:
            credentials["expiresAt"] = self.expires_at
        if self.scope:
            credentials["scope"] = self.scope
        return credentials
