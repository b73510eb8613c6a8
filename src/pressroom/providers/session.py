"""One channel's client of a network's API, authorised by a bearer token.

X, Bluesky and Mastodon talk to their APIs the same way: every request carries the channel's
bearer token, an error answer is read by the network's own classifier, and a request refused
for its token is sent once more when the session could renew the token (X refreshes its OAuth
token, Bluesky its XRPC session; Mastodon tokens do not expire). Each network's session says
where a path goes, which token to send, how to read an error and how to renew.

`RefreshingSession` is the OAuth flavour shared by X, YouTube, LinkedIn, Pinterest and TikTok:
an access token with an expiry and a refresh token to renew it with. `OAuthAdapter` is the
adapter base that opens one per call (X, YouTube and TikTok). Its base, `RefreshingAdapter`,
keeps the credential store and clock of every adapter whose tokens are renewed (Bluesky,
Instagram and Threads too) and takes the keywords they share (`RefreshingOptions`).
`ContainerAdapter` is the one of Instagram and Threads, whose media containers are made from
signed public links and processed before they are published (`ContainerOptions`).
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC
from abc import abstractmethod
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from typing import ClassVar
from typing import Generic
from typing import Protocol
from typing import TypedDict
from typing import TypeVar
from typing import Unpack

import httpx

from pressroom.kit.clock import utcnow
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import ProviderError
from pressroom.providers.credentials import PROCESS_CREDENTIALS
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.credentials import CredentialsChanged
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.http import HttpAdapter
from pressroom.providers.http import Polling
from pressroom.providers.http import PublicMediaUrl
from pressroom.providers.http import Sleep
from pressroom.providers.http import provider_request
from pressroom.providers.http import response_json

# A request body is rebuilt for every send: a request sent again re-reads the media.
BodyFactory = Callable[[], Any]


class BearerSession(ABC):
    """Requests to one network's API for one channel. Build one per adapter call."""

    # The network's name in error messages.
    provider: ClassVar[str]

    def __init__(self, http: httpx.AsyncClient) -> None:
        self._http = http

    @abstractmethod
    def url(self, path: str) -> str:
        """The URL of an API path (read at every send: a renewal may move the account)."""

    @abstractmethod
    def access_token(self) -> str:
        """The token to send now."""

    @abstractmethod
    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        """The ProviderError for an error answer."""

    def fixed_headers(self) -> Mapping[str, str]:
        """Headers every request of this network carries (an API version, a protocol)."""
        return {}

    async def prepare(self) -> None:
        """Before a request: make sure there is a token worth sending (one that never expires,
        like Mastodon's, always is)."""
        return None

    async def renewed(self, response: httpx.Response, used: str) -> bool:
        """Whether `response` refused the token `used` and the session obtained another one,
        so that the request is worth sending once more."""
        return False

    async def call(self, method: str, path: str, action: str, **options: Any) -> dict[str, Any]:
        """A request's JSON object; an error answer is raised, classified the default way."""
        response = await self.request(method, path, action, **options)
        if response.is_success:
            return response_json(response)
        raise self.classify(response, action)

    async def delete(self, path: str, action: str) -> None:
        """A DELETE of something that may be gone already: 404 counts as deleted."""
        response = await self.request("DELETE", path, action)
        if response.is_success or response.status_code == 404:
            return
        raise self.classify(response, action)

    async def request(
        self,
        method: str,
        path: str,
        action: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        body: BodyFactory | None = None,
    ) -> httpx.Response:
        """An authorised request, sent once more if its token was refused and renewed; the
        final answer is returned whatever its status."""

        async def send() -> httpx.Response:
            return await provider_request(
                self._http,
                method,
                self.url(path),
                provider=self.provider,
                action=action,
                bearer=self.access_token(),
                headers={**self.fixed_headers(), **(headers or {})},
                json=json,
                params=params,
                content=body() if body is not None else None,
            )

        await self.prepare()
        used = self.access_token()
        response = await send()
        if await self.renewed(response, used):
            response = await send()
        return response


# Renews a channel's credentials from its refresh token: the new keys to merge in.
Renewal = Callable[[str], Awaitable[dict[str, Any]]]


class ClientApp(Protocol):
    """The deployment's app at a network, as far as a session needs it: its secret, to be kept
    out of error messages."""

    @property
    def client_secret(self) -> str | None: ...


AppT = TypeVar("AppT", bound=ClientApp)


class RefreshingSession(BearerSession, Generic[AppT]):
    """A session whose OAuth access token expires and is refreshed: before a call when it
    expires within `expiry_margin` seconds, and once a call when the network refuses it. The new
    set goes to the `CredentialStore` (this process's cache and the caller) at once; a
    per-channel lock keeps two calls from refreshing together.

    What differs between networks is data: the margin, the credential that tells a caller's
    stale copy (`rotation_key`: the refresh token, or the access token where the network keeps
    the refresh token), the wording of "cannot be refreshed, reconnect", which answers refuse
    the token (`refused`), and whether a refused token that cannot be renewed is classified as
    the network's own error (`classify_unrenewable`) or reported as that wording."""

    expiry_margin: ClassVar[float] = 60.0
    rotation_key: ClassVar[str] = "refreshToken"
    classify_unrenewable: ClassVar[bool] = True
    # What a token that must be renewed and cannot be is reported as (None: the wording below).
    unrenewable: ClassVar[str | None] = None

    def __init__(
        self,
        http: httpx.AsyncClient,
        app: AppT | None,
        channel: ChannelContext,
        store: CredentialStore,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(http)
        self._app = app
        self._channel = channel
        self._store = store
        self._clock = clock
        self.credentials: dict[str, Any] = store.current(channel, self.rotation_key)
        self._refreshed_this_call = False
        if not isinstance(self.credentials.get("accessToken"), str):
            raise ProviderError(
                "auth_expired", f"The {self.provider} channel has no access token; reconnect it."
            )

    @abstractmethod
    def renewal(self) -> Renewal | None:
        """How to renew the credentials now, or None when they cannot be (no refresh token, an
        expired one, no app configured)."""

    def cannot_refresh(self) -> ProviderError:
        """The error for a token that must be renewed and cannot be."""
        return ProviderError(
            "auth_expired",
            self.unrenewable
            or f"The {self.provider} access token has expired (or is about to) and cannot "
            "be refreshed (no refresh token, an expired one, or no app configured). "
            "Reconnect the channel.",
        )

    def refused(self, response: httpx.Response) -> bool:
        """Whether `response` refused the token it carried."""
        return response.status_code == 401

    def access_token(self) -> str:
        token: str = self.credentials["accessToken"]
        return token

    def token_secrets(self) -> tuple[str | None, ...]:
        """The channel's tokens, to be kept out of error messages."""
        return (self.credentials.get("accessToken"), self.credentials.get("refreshToken"))

    def secrets(self) -> tuple[str | None, ...]:
        """The channel's tokens and the app's secret, to be kept out of error messages."""
        return (*self.token_secrets(), self._app.client_secret if self._app else None)

    def expiring(self) -> bool:
        """Whether the access token ends within the margin (an unknown expiry: it is used)."""
        expires_at = self.credentials.get("expiresAt")
        return isinstance(expires_at, int | float) and (
            self._clock() >= expires_at - self.expiry_margin
        )

    async def prepare(self) -> None:
        if self.expiring():
            await self._refresh(self.access_token())

    async def renewed(self, response: httpx.Response, used: str) -> bool:
        if not self.refused(response) or self._refreshed_this_call:
            return False
        if self.classify_unrenewable and self.renewal() is None:
            return False
        await self._refresh(used)
        return True

    async def _refresh(self, used_access: str) -> None:
        self.credentials = await self._store.renew(
            self._channel, used_access, self._renew, rotation_key=self.rotation_key
        )

    async def _renew(self, newest: dict[str, Any]) -> dict[str, Any]:
        self.credentials = newest
        renew = self.renewal()
        if renew is None:
            raise self.cannot_refresh()
        self._refreshed_this_call = True
        return {**newest, **await renew(str(newest.get("refreshToken") or ""))}


class RefreshingOptions(TypedDict, total=False):
    """The keywords every `RefreshingAdapter` takes (its network's adapter passes them on), each
    with its default there: `http`, a client shared with the caller (else the adapter builds
    its own); `on_credentials_changed`, told of renewed credentials at once;
    `credential_cache`, this process's newest credentials; `clock`, the time of results and of
    token expiries."""

    http: httpx.AsyncClient | None
    on_credentials_changed: CredentialsChanged | None
    credential_cache: CredentialCache
    clock: Callable[[], datetime]


class RefreshingAdapter(HttpAdapter):
    """An HttpAdapter whose channels' tokens are renewed while it works: the new credentials go
    to `_credential_store`, that is to this process's `credential_cache` and to the caller's
    `on_credentials_changed` (see credentials.py). `clock` tells the time of its results and,
    in Unix seconds (`_unix_time`), the time its sessions compare token expiries with."""

    def __init__(
        self,
        *,
        http: httpx.AsyncClient | None = None,
        on_credentials_changed: CredentialsChanged | None = None,
        credential_cache: CredentialCache = PROCESS_CREDENTIALS,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        super().__init__(http)
        self._credential_store = CredentialStore(credential_cache, on_credentials_changed)
        self._clock = clock

    def _unix_time(self) -> float:
        return self._clock().timestamp()


class ContainerOptions(RefreshingOptions, total=False):
    """The keywords a `ContainerAdapter` takes besides a `RefreshingAdapter`'s: `sleep`, which
    waits between polls of a container being processed, `poll_interval` and
    `processing_timeout` (seconds; by default the network's own)."""

    sleep: Sleep
    poll_interval: float
    processing_timeout: float


class ContainerAdapter(RefreshingAdapter):
    """A RefreshingAdapter whose network publishes through media containers: it fetches the
    media from the signed public links `media_url` makes (None where this process cannot make
    them), then processes it, polled as `_polling` says (every `POLL_INTERVAL` seconds, for
    `PROCESSING_TIMEOUT` seconds at the most, unless the caller says otherwise)."""

    POLL_INTERVAL: ClassVar[float]
    PROCESSING_TIMEOUT: ClassVar[float]

    def __init__(
        self,
        *,
        media_url: PublicMediaUrl | None,
        sleep: Sleep = asyncio.sleep,
        poll_interval: float | None = None,
        processing_timeout: float | None = None,
        **options: Unpack[RefreshingOptions],
    ) -> None:
        super().__init__(**options)
        self._media_url = media_url
        self._polling = Polling(
            sleep,
            self.POLL_INTERVAL if poll_interval is None else poll_interval,
            self.PROCESSING_TIMEOUT if processing_timeout is None else processing_timeout,
        )


SessionT = TypeVar("SessionT", bound=RefreshingSession[Any])


class OAuthAdapter(RefreshingAdapter, Generic[AppT, SessionT]):
    """An adapter whose channels hold OAuth tokens that the deployment's `app` refreshes: each
    call opens a `session_type` session for its channel (without an app, an expired token is
    `auth_expired`)."""

    def __init__(
        self,
        app: AppT | None,
        session_type: type[SessionT],
        **options: Unpack[RefreshingOptions],
    ) -> None:
        super().__init__(**options)
        self._app = app
        self._session_type = session_type

    def _session(self, channel: ChannelContext) -> SessionT:
        return self._session_type(
            self._http, self._app, channel, self._credential_store, clock=self._unix_time
        )
