"""The Pinterest adapter: pins (one image or GIF, a carousel of 2 to 5 images, one video) saved
to a board, deletion, pin analytics and the channel's health, over the API v5.

The request of each kind is in pins.py (with the retry recovery) and video.py (the upload);
tokens are kept fresh by the session (api.py). Images go to Pinterest as the asset's signed
public URL (`media_url`); a video's bytes are uploaded (`read_media`).

Health: an access token that expires within a day and cannot be refreshed (no refresh token,
an expired one, or no app) is `reconnect_required` before any call; otherwise
`GET /v5/user_account`, refreshing the token first when it is due.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from typing import Any

import httpx

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.connection import OAuthApp
from pressroom.providers.credentials import PROCESS_CREDENTIALS
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.credentials import CredentialsChanged
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.http import MediaReader
from pressroom.providers.http import Polling
from pressroom.providers.http import PublicMediaUrl
from pressroom.providers.http import Sleep
from pressroom.providers.http import public_link
from pressroom.providers.pinterest import pins
from pressroom.providers.pinterest.api import PinterestSession
from pressroom.providers.pinterest.metrics import pin_metrics
from pressroom.providers.pinterest.video import DEFAULT_POLL_BUDGET
from pressroom.providers.pinterest.video import DEFAULT_POLL_INTERVAL
from pressroom.providers.pinterest.video import upload_video


class PinterestAdapter:
    """Publishes as the Pinterest account whose OAuth token the channel holds."""

    provider = "pinterest"

    def __init__(
        self,
        *,
        http: httpx.AsyncClient,
        app: OAuthApp | None,
        media_url: PublicMediaUrl | None,
        read_media: MediaReader,
        on_credentials_changed: CredentialsChanged | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.time,
        cache: CredentialCache = PROCESS_CREDENTIALS,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        poll_budget: float = DEFAULT_POLL_BUDGET,
    ) -> None:
        """`http` is the caller's client (it closes it); `app` (the deployment's Pinterest
        app) refreshes tokens; `media_url` gives the public URL Pinterest fetches images from;
        `read_media` streams a video's bytes for its upload."""
        self._http = http
        self._app = app
        self._media_url = media_url
        self._read_media = read_media
        self._store = CredentialStore(cache, on_credentials_changed)
        self._clock = clock
        self._polling = Polling(sleep, poll_interval, poll_budget)

    def _session(self, channel: ChannelContext) -> PinterestSession:
        return PinterestSession(self._http, self._app, channel, self._store, clock=self._clock)

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self._clock(), UTC)

    async def publish(self, request: PublishRequest) -> PublishResult:
        if request.content_kind not in ("pin", "carousel"):
            raise ProviderError(
                "invalid_request",
                f"Pinterest has no content kind {request.content_kind!r}; use pin or carousel.",
            )
        session = self._session(request.channel)
        board_id = pins.board_of(request)
        if request.attempt > 1:
            found = await pins.find_earlier_pin(session, board_id, pins.note_of(request))
            if found is not None:
                return PublishResult(found, pins.pin_url(found), self._now())
        source = await self._media_source(session, request)
        body = await session.call(
            "POST", "/pins", "creating the pin", json=pins.pin_body(request, board_id, source)
        )
        pin_id = body.get("id")
        if not isinstance(pin_id, str) or not pin_id:
            raise ProviderError("provider_unavailable", "Pinterest created the pin without an id.")
        return PublishResult(pin_id, pins.pin_url(pin_id), self._now())

    async def _media_source(
        self, session: PinterestSession, request: PublishRequest
    ) -> dict[str, Any]:
        media = request.media
        if request.content_kind == "carousel":
            if not 2 <= len(media) <= 5 or any(item.kind != "image" for item in media):
                raise ProviderError("invalid_request", "A Pinterest carousel takes 2 to 5 images.")
            urls = [{"url": await self._url(item)} for item in media]
            return {"source_type": "multiple_image_urls", "items": urls}
        if len(media) != 1:
            raise ProviderError(
                "invalid_request", "A Pinterest pin takes exactly one image, GIF or video."
            )
        item = media[0]
        if item.kind == "video":
            media_id = await upload_video(session, item, self._read_media, self._polling)
            return {
                "source_type": "video_id",
                "media_id": media_id,
                "cover_image_key_frame_time": 0,
            }
        return {"source_type": "image_url", "url": await self._url(item)}

    async def _url(self, item: MediaItem) -> str:
        return await public_link(self._media_url, item, "Pinterest fetches images")

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        """`DELETE /v5/pins/{pin_id}`; a pin already gone counts as deleted."""
        await self._session(channel).delete(f"/pins/{provider_post_id}", "deleting the pin")

    async def fetch_metrics(
        self, channel: ChannelContext, provider_post_id: str, published_at: datetime
    ) -> dict[str, int]:
        return await pin_metrics(
            self._session(channel), provider_post_id, published_at, self._now()
        )

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        try:
            session = self._session(channel)
            if session.expiring() and not session.refreshable():
                return HealthResult(
                    "reconnect_required",
                    "The Pinterest access token has expired or expires within a day, and "
                    "cannot be refreshed (no refresh token, an expired one, or no Pinterest "
                    "app configured): reconnect the channel.",
                )
            await session.call("GET", "/user_account", "checking the account")
        except ProviderError as error:
            return HealthResult.failed(error)
        return HealthResult("healthy")
