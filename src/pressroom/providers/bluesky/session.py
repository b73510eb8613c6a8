"""XRPC calls for one Bluesky channel, with its app-password session kept alive.

Sessions (https://docs.bsky.app/docs/api/com-atproto-server-create-session and
.../com-atproto-server-refresh-session): `com.atproto.server.createSession` with the account
identifier and an app password returns an access JWT (short-lived), a refresh JWT, the DID, the
handle and the DID document, whose `#atproto_pds` service is the PDS to talk to. When a call
answers the XRPC error `ExpiredToken`, the session is refreshed with
`com.atproto.server.refreshSession` (authorised by the refresh JWT, which rotates) and the call
is sent once more; if the refresh token is spent too, a new session is created from the app
password. Every new set of tokens is handed to `on_credentials_changed`.

XRPC errors are JSON `{"error": "<Name>", "message": "..."}`
(https://atproto.com/specs/xrpc#error-responses). Rate limits answer 429 with `ratelimit-*`
headers, `ratelimit-reset` being a Unix time (https://docs.bsky.app/docs/advanced-guides/rate-limits).

Credentials (the dict the caller stores encrypted):
`{"identifier", "appPassword", "service", "did", "handle", "accessJwt", "refreshJwt", "pds"}`;
only `identifier` and `appPassword` are needed to start, the rest is filled by the first login.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import fields
from typing import Any

import httpx

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import ProviderError
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.http import provider_request
from pressroom.providers.http import rate_limited
from pressroom.providers.http import response_json
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure
from pressroom.providers.session import BearerSession

PROVIDER = "Bluesky"
DEFAULT_SERVICE = "https://bsky.social"
# XRPC errors meaning the credentials themselves are refused (not merely expired).
AUTH_ERRORS = frozenset(
    {
        "AuthenticationRequired",
        "AuthMissing",
        "InvalidToken",
        "AccountTakedown",
        "AccountDeactivated",
        "AuthFactorTokenRequired",
    }
)
EXPIRED = "ExpiredToken"

# Attribute -> key of the stored credentials dict.
CREDENTIAL_KEYS = {
    "identifier": "identifier",
    "app_password": "appPassword",
    "service": "service",
    "did": "did",
    "handle": "handle",
    "access_jwt": "accessJwt",
    "refresh_jwt": "refreshJwt",
    "pds": "pds",
}


@dataclass
class BlueskyCredentials:
    identifier: str | None = None
    app_password: str | None = None
    service: str = DEFAULT_SERVICE
    did: str | None = None
    handle: str | None = None
    access_jwt: str | None = None
    refresh_jwt: str | None = None
    pds: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BlueskyCredentials:
        values: dict[str, Any] = {}
        for name, key in CREDENTIAL_KEYS.items():
            value = data.get(key)
            if isinstance(value, str) and value:
                values[name] = value
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return {
            key: getattr(self, name)
            for name, key in CREDENTIAL_KEYS.items()
            if getattr(self, name) is not None
        }

    def secrets(self) -> tuple[str | None, ...]:
        return (self.app_password, self.access_jwt, self.refresh_jwt)

    def __repr__(self) -> str:  # never print tokens
        shown = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ("app_password", "access_jwt", "refresh_jwt"):
            if shown[name]:
                shown[name] = "[redacted]"
        return f"BlueskyCredentials({shown})"


def xrpc_error(response: httpx.Response) -> tuple[str | None, str | None]:
    body = response_json(response)
    name = body.get("error")
    message = body.get("message")
    return (
        name if isinstance(name, str) else None,
        message if isinstance(message, str) else None,
    )


def classify(
    response: httpx.Response, action: str, secrets: tuple[str | None, ...] = ()
) -> ProviderError:
    """The ProviderError for an XRPC error answer."""
    name, message = xrpc_error(response)
    detail = safe_detail(": ".join(part for part in (name, message) if part), secrets)
    if response.status_code == 429 or name == "RateLimitExceeded":
        return rate_limited(PROVIDER, action, response.headers, detail)
    if name in AUTH_ERRORS or name == EXPIRED or response.status_code == 401:
        return ProviderError(
            "auth_expired",
            f"Bluesky refused the channel's session while {action} ({detail or 'unauthorized'}). "
            "Reconnect the channel with a valid app password.",
        )
    if name in ("BlobTooLarge", "PayloadTooLarge"):
        return ProviderError("media_rejected", f"Bluesky refused the media: {detail}")
    return status_failure(response, PROVIDER, action, detail)


class BlueskySession(BearerSession):
    """One channel's XRPC client (`path` is the method's NSID). Build one per adapter call."""

    provider = PROVIDER

    def __init__(
        self, http: httpx.AsyncClient, channel: ChannelContext, store: CredentialStore
    ) -> None:
        super().__init__(http)
        self._channel = channel
        self._store = store
        self.credentials = BlueskyCredentials.from_dict(store.current(channel, "refreshJwt"))
        self._logged_in_this_call = False

    @property
    def did(self) -> str:
        assert self.credentials.did is not None, "call ensure() first"
        return self.credentials.did

    @property
    def actor(self) -> str:
        """How the post URL names the account: its handle, else its DID."""
        return self.credentials.handle or self.did

    def _base(self) -> str:
        return (self.credentials.pds or self.credentials.service).rstrip("/")

    def url(self, path: str) -> str:
        return f"{self._base()}/xrpc/{path}"

    def access_token(self) -> str:
        assert self.credentials.access_jwt is not None, "call ensure() first"
        return self.credentials.access_jwt

    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        return classify(response, action, self.credentials.secrets())

    async def prepare(self) -> None:
        await self.ensure()

    async def ensure(self) -> None:
        """Make sure there is a session (log in with the app password if there is none)."""
        if not self.credentials.access_jwt or not self.credentials.did:
            async with self._store.lock(self._channel):
                # A concurrent call of this process may have logged in while this one waited.
                if not self._adopt_newer(self.credentials.access_jwt):
                    await self._login()

    async def renewed(self, response: httpx.Response, used: str) -> bool:
        """An expired session is refreshed; a refused one is logged into again, once a call."""
        name, _ = xrpc_error(response)
        if name == EXPIRED:
            await self._refresh(used)
            return True
        if (response.status_code == 401 or name in AUTH_ERRORS) and not self._logged_in_this_call:
            async with self._store.lock(self._channel):
                if not self._adopt_newer(used):
                    await self._login()
            return True
        return False

    def _adopt_newer(self, used_access: str | None) -> bool:
        """Another call of this process may have renewed the session while this one waited
        for the lock: use its tokens rather than spending the refresh token again."""
        latest = BlueskyCredentials.from_dict(self._store.current(self._channel, "refreshJwt"))
        if latest.access_jwt and latest.access_jwt != used_access:
            self.credentials = latest
            return True
        return False

    async def _refresh(self, used_access: str | None) -> None:
        async with self._store.lock(self._channel):
            if self._adopt_newer(used_access):
                return
            refresh_jwt = self.credentials.refresh_jwt
            if refresh_jwt:
                response = await provider_request(
                    self._http,
                    "POST",
                    self.url("com.atproto.server.refreshSession"),
                    provider=PROVIDER,
                    action="refreshing the session",
                    bearer=refresh_jwt,
                )
                if response.is_success:
                    await self._store_session(response_json(response), spent=refresh_jwt)
                    return
                name, _ = xrpc_error(response)
                if not (name in AUTH_ERRORS or name == EXPIRED or response.status_code == 401):
                    raise self.classify(response, "refreshing the session")
            await self._login()

    async def _login(self) -> None:
        """com.atproto.server.createSession with the app password (caller holds the lock)."""
        creds = self.credentials
        if not creds.identifier or not creds.app_password:
            raise ProviderError(
                "auth_expired",
                "The Bluesky session has expired and no app password is stored to renew it. "
                "Reconnect the channel with an app password.",
            )
        self._logged_in_this_call = True
        response = await provider_request(
            self._http,
            "POST",
            f"{creds.service.rstrip('/')}/xrpc/com.atproto.server.createSession",
            provider=PROVIDER,
            action="logging in",
            json={"identifier": creds.identifier, "password": creds.app_password},
        )
        if not response.is_success:
            error = self.classify(response, f"logging in as {creds.identifier}")
            if error.code == "auth_expired":
                raise ProviderError(
                    "auth_expired",
                    f"Bluesky refused the app password for {creds.identifier} "
                    f"({safe_detail(xrpc_error(response)[1] or 'unauthorized', creds.secrets())})."
                    " Create a new app password and reconnect the channel.",
                ) from None
            raise error
        body = response_json(response)
        if body.get("active") is False:
            raise ProviderError(
                "auth_expired",
                f"The Bluesky account {creds.identifier} is {body.get('status') or 'inactive'}; "
                "reactivate it, then reconnect the channel.",
            )
        await self._store_session(body, spent=creds.refresh_jwt or creds.access_jwt or "")

    async def _store_session(self, body: Mapping[str, Any], *, spent: str) -> None:
        access, refresh = body.get("accessJwt"), body.get("refreshJwt")
        if not isinstance(access, str) or not isinstance(refresh, str):
            raise ProviderError(
                "provider_unavailable", "Bluesky answered a session request without tokens."
            )
        creds = self.credentials
        creds.access_jwt, creds.refresh_jwt = access, refresh
        if isinstance(body.get("did"), str):
            creds.did = body["did"]
        if isinstance(body.get("handle"), str):
            creds.handle = body["handle"]
        pds = pds_endpoint(body.get("didDoc"))
        if pds:
            creds.pds = pds
        await self._store.replace(self._channel, spent, creds.to_dict())


def pds_endpoint(did_doc: object) -> str | None:
    """The `#atproto_pds` service endpoint of a DID document (https://atproto.com/specs/did)."""
    if not isinstance(did_doc, dict):
        return None
    services = did_doc.get("service")
    if not isinstance(services, list):
        return None
    for service in services:
        if (
            isinstance(service, dict)
            and str(service.get("id", "")).endswith("#atproto_pds")
            and isinstance(service.get("serviceEndpoint"), str)
        ):
            endpoint: str = service["serviceEndpoint"]
            return endpoint
    return None
