"""The TikTok adapter: direct posts of a video or of photos through the Content Posting API,
metrics from the Display API, and health.

Publish: the account's creator info first (creator.py: the options it cannot use are refused
before anything is sent), then
- a video (https://developers.tiktok.com/doc/content-posting-api-reference-direct-post):
  `POST /v2/post/publish/video/init/` with `post_info` (`title` = the text, `privacy_level`,
  `disable_comment`, `disable_duet`, `disable_stitch`) and `source_info`: FILE_UPLOAD (size and
  chunking, upload.py: the bytes are then PUT to the answer's `upload_url`) or, when the
  deployment verified its media domain at TikTok (PRESSROOM_TIKTOK_PULL_FROM_URL),
  PULL_FROM_URL with `video_url` = a signed link to the stored file -> `data.publish_id`;
- photos (https://developers.tiktok.com/doc/content-posting-api-reference-photo-post):
  `POST /v2/post/publish/content/init/` with `post_mode=DIRECT_POST`, `media_type=PHOTO`,
  `post_info` (`title` = options.title, `description` = the text, `privacy_level`,
  `disable_comment`) and `source_info` (PULL_FROM_URL only: `photo_images`, `photo_cover_index`);
then the publishing status is polled until PUBLISH_COMPLETE or FAILED (status.py).

Delete: the Content Posting API has no delete endpoint: refused, permanently (and declared so).
Metrics: `POST /v2/video/query/?fields=id,view_count,like_count,comment_count,share_count`
with `filters.video_ids` (scope video.list, https://developers.tiktok.com/doc/tiktok-api-v2-video-query).
Health: the token's expiry and whether it can be renewed, then `GET /v2/user/info/`.
Revoke (on disconnect): `POST /v2/oauth/revoke/` with the access token (tokens.py), which ends
the app's access to the account. An access token that has expired, or that TikTok refuses as
invalid, cannot be revoked itself: the refresh token is traded for a fresh one (never stored:
the channel is gone), which is revoked; a refresh token TikTok refuses means the grant is
already over.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Unpack

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.adapter import Revocation
from pressroom.providers.adapter import counter_metrics
from pressroom.providers.connection import OAuthApp
from pressroom.providers.http import MediaReader
from pressroom.providers.http import PublicMediaUrl
from pressroom.providers.http import Sleep
from pressroom.providers.session import OAuthAdapter
from pressroom.providers.session import RefreshingOptions
from pressroom.providers.tiktok.creator import CREATOR_INFO_PATH
from pressroom.providers.tiktok.creator import CreatorInfo
from pressroom.providers.tiktok.posts import PostBuilder
from pressroom.providers.tiktok.posts import post_url
from pressroom.providers.tiktok.progress import PROCESS_PENDING
from pressroom.providers.tiktok.progress import PendingPublishes
from pressroom.providers.tiktok.session import TikTokSession
from pressroom.providers.tiktok.session import renewal_blocker
from pressroom.providers.tiktok.status import DEFAULT_POLL_INTERVAL
from pressroom.providers.tiktok.status import DEFAULT_TIMEOUT
from pressroom.providers.tiktok.status import StatusPoll
from pressroom.providers.tiktok.tokens import refresh_tokens
from pressroom.providers.tiktok.tokens import revoke_token
from pressroom.providers.tiktok.upload import DEFAULT_CHUNK_BYTES

METRIC_FIELDS = "id,view_count,like_count,comment_count,share_count"
_METRICS = {
    "views": ("view_count",),
    "likes": ("like_count",),
    "comments": ("comment_count",),
    "shares": ("share_count",),
}
# Warn this long before the refresh token (365 days) runs out: the channel needs reconnecting.
REFRESH_WARNING_SECONDS = 7 * 86400


class TikTokAdapter(OAuthAdapter[OAuthApp, TikTokSession]):
    """Posts as the account that authorised the channel (scope video.publish)."""

    provider = "tiktok"

    def __init__(
        self,
        *,
        app: OAuthApp | None,
        read_media: MediaReader,
        media_url: PublicMediaUrl | None = None,
        audited: bool = False,
        pull_from_url: bool = False,
        pending: PendingPublishes = PROCESS_PENDING,
        sleep: Sleep = asyncio.sleep,
        chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        processing_timeout: float = DEFAULT_TIMEOUT,
        **options: Unpack[RefreshingOptions],
    ) -> None:
        """`app` refreshes tokens (without it, an expired token is `auth_expired`); `audited`
        lifts the SELF_ONLY restriction of unaudited apps; `pull_from_url` has TikTok fetch
        videos from signed links (their domain verified at TikTok) instead of receiving them."""
        super().__init__(app, TikTokSession, **options)
        self._pending = pending
        self._poll = StatusPoll(sleep, poll_interval, processing_timeout)
        self._builder = PostBuilder(
            http=self._http,
            read_media=read_media,
            media_url=media_url,
            audited=audited,
            pull_from_url=pull_from_url,
            chunk_bytes=chunk_bytes,
        )

    async def publish(self, request: PublishRequest) -> PublishResult:
        channel, key = request.channel, request.idempotency_key
        session = self._session(channel)
        photo = request.content_kind == "photo" or (
            bool(request.media) and all(item.kind == "image" for item in request.media)
        )
        publish_id = self._pending.get(channel.id, key)
        try:
            if publish_id is None:
                creator = CreatorInfo.from_data(
                    await session.call(
                        "POST", CREATOR_INFO_PATH, "reading the account's creator info"
                    )
                )
                start = self._builder.photo if photo else self._builder.video
                publish_id = await start(session, request, creator)
                self._pending.keep(channel.id, key, publish_id)
            post_id = await self._poll.published_id(session, publish_id)
        except ProviderError as error:
            if not error.retryable:
                self._pending.forget(channel.id, key)
            raise
        self._pending.forget(channel.id, key)
        username = session.credentials.get("username") or (channel.handle or "").lstrip("@")
        return PublishResult(
            provider_post_id=post_id,
            url=post_url(username, post_id, publish_id, photo=photo),
            published_at=self._clock(),
        )

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        raise ProviderError(
            "invalid_request",
            "The TikTok Content Posting API cannot delete posts; delete it in the TikTok app.",
        )

    async def fetch_metrics(
        self, channel: ChannelContext, provider_post_id: str, published_at: datetime
    ) -> dict[str, int]:
        if not provider_post_id.isdigit():
            raise ProviderError(
                "not_found",
                "TikTok gave no video id for this post (it is not public), so it has no "
                "metrics to read.",
            )
        data = await self._session(channel).call(
            "POST",
            "/v2/video/query/",
            "reading the post's counts",
            params={"fields": METRIC_FIELDS},
            json={"filters": {"video_ids": [provider_post_id]}},
        )
        videos = data.get("videos")
        video = next(
            (
                v
                for v in videos or []
                if isinstance(v, dict) and str(v.get("id")) == provider_post_id
            ),
            None,
        )
        if video is None:
            raise ProviderError(
                "not_found", f"TikTok no longer shows video {provider_post_id}; it may be deleted."
            )
        return counter_metrics(video, _METRICS)

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        try:
            session = self._session(channel)
        except ProviderError as error:
            return HealthResult.failed(error)
        now = self._unix_time()
        blocker = renewal_blocker(session.credentials, self._app, now)
        if session.expiring() and blocker is not None:
            return HealthResult(
                "reconnect_required",
                f"The TikTok access token expires within minutes and cannot be refreshed "
                f"({blocker}). Reconnect the channel.",
            )
        try:
            await session.call(
                "GET", "/v2/user/info/", "checking the token", params={"fields": "open_id"}
            )
        except ProviderError as error:
            return HealthResult.failed(error)
        refresh_expires = session.credentials.get("refreshExpiresAt")
        if isinstance(refresh_expires, int | float) and (
            refresh_expires - now < REFRESH_WARNING_SECONDS
        ):
            when = time.strftime("%Y-%m-%d", time.gmtime(refresh_expires))
            return HealthResult(
                "degraded",
                f"The TikTok refresh token expires on {when}; reconnect the channel before then.",
            )
        return HealthResult("healthy")

    async def revoke(self, channel: ChannelContext) -> Revocation:
        """Revoke the channel's grant at TikTok; revoking needs the deployment's app (its client
        key and secret): without it, `unsupported`."""
        credentials = self._credential_store.current(channel, "refreshToken")
        access, refresh = credentials.get("accessToken"), credentials.get("refreshToken")
        access = access if isinstance(access, str) and access else None
        refresh = refresh if isinstance(refresh, str) and refresh else None
        if access is None and refresh is None:
            return "nothing_to_revoke"
        if self._app is None:
            return "unsupported"
        expires_at = credentials.get("expiresAt")
        expired = isinstance(expires_at, int | float) and expires_at <= self._unix_time()
        if access is not None and not expired and await revoke_token(self._http, self._app, access):
            return "revoked"
        if refresh is None:
            return "revoked"  # a dead access token and nothing to mint another: no access left
        try:
            fresh = await refresh_tokens(self._http, self._app, refresh, self._unix_time)
        except ProviderError as error:
            if error.code == "auth_expired":
                return "revoked"  # the refresh token is spent or revoked: the grant is over
            raise
        await revoke_token(self._http, self._app, str(fresh["accessToken"]))
        return "revoked"
