"""The YouTube adapter: videos and Shorts, deletion, statistics and health over the YouTube Data
API v3 (https://developers.google.com/youtube/v3/docs).

- Publish: videos.insert through the resumable upload (upload.py) of the target's one video,
  described by video.py; `provider_post_id` is the video id, its URL `youtube.com/watch?v=` (or
  `/shorts/` for the `short` kind). A retry resumes the same upload session when this process
  kept it, else looks for the video an earlier attempt finished (recovery.py). Then the
  custom thumbnail `options.thumbnailMediaId` names, if any (thumbnail.py): its failure is the
  published target's warning, never a failed publish.
- Delete: `DELETE /videos?id=` -> 204 (videos.delete; a video already gone counts as deleted).
- Metrics: `GET /videos?part=statistics&id=`: viewCount -> views, likeCount -> likes,
  commentCount -> comments (counts come as strings). favoriteCount is deprecated (always 0)
  and dislikeCount private since 2021: neither is read.
- Health: a token expiring soon that cannot be refreshed is `reconnect_required` before any
  call; else `GET /channels?part=id&mine=true`.
- Revoke (on disconnect): the refresh token (which ends the grant), else the access token.
"""

from __future__ import annotations

from datetime import datetime
from typing import Unpack

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.adapter import Revocation
from pressroom.providers.adapter import probed_health
from pressroom.providers.adapter import shown_metrics
from pressroom.providers.connection import OAuthApp
from pressroom.providers.http import MediaLookup
from pressroom.providers.http import MediaReader
from pressroom.providers.session import OAuthAdapter
from pressroom.providers.session import RefreshingOptions
from pressroom.providers.youtube.oauth import API
from pressroom.providers.youtube.oauth import revoke_token
from pressroom.providers.youtube.recovery import find_uploaded
from pressroom.providers.youtube.session import ROTATION_KEY
from pressroom.providers.youtube.session import YouTubeSession
from pressroom.providers.youtube.thumbnail import set_thumbnail
from pressroom.providers.youtube.upload import DEFAULT_CHUNK_BYTES
from pressroom.providers.youtube.upload import PROCESS_UPLOADS
from pressroom.providers.youtube.upload import ResumableUpload
from pressroom.providers.youtube.upload import UploadSessions
from pressroom.providers.youtube.video import video_resource

WEB = "https://www.youtube.com"
VIDEOS = f"{API}/videos"

# videos.list `statistics` (counts as digit strings).
METRICS = {
    "views": ("viewCount",),
    "likes": ("likeCount",),
    "comments": ("commentCount",),
}


class YouTubeAdapter(OAuthAdapter[OAuthApp, YouTubeSession]):
    """Publishes to the YouTube channel of the Google account that authorised the channel."""

    provider = "youtube"

    def __init__(
        self,
        *,
        app: OAuthApp | None,
        read_media: MediaReader,
        chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        upload_sessions: UploadSessions = PROCESS_UPLOADS,
        find_media: MediaLookup | None = None,
        **options: Unpack[RefreshingOptions],
    ) -> None:
        """`app` refreshes tokens (without it, an expired token is `auth_expired`);
        `find_media` reads the custom thumbnail an option names (without it, none is set)."""
        super().__init__(app, YouTubeSession, **options)
        if chunk_bytes <= 0 or chunk_bytes % (256 * 1024):
            raise ValueError("YouTube upload chunks must be a multiple of 256 KiB")
        self._read_media = read_media
        self._find_media = find_media
        self._uploads = upload_sessions
        self._chunk_bytes = chunk_bytes

    async def publish(self, request: PublishRequest) -> PublishResult:
        video = _the_video(request.media)
        resource = video_resource(request)
        session = self._session(request.channel)
        key = (str(request.channel.id), request.idempotency_key)
        video_id = None
        if request.attempt > 1 and self._uploads.get(key) is None:
            video_id = await find_uploaded(session, resource, self._clock())
        if video_id is None:
            upload = ResumableUpload(session, self._read_media, self._uploads, self._chunk_bytes)
            uploaded = await upload.upload(video, resource, key)
            video_id = uploaded["id"]
        warning = await set_thumbnail(
            session, request, video_id, find_media=self._find_media, read_media=self._read_media
        )
        path = f"/shorts/{video_id}" if request.content_kind == "short" else f"/watch?v={video_id}"
        return PublishResult(
            provider_post_id=video_id,
            url=WEB + path,
            published_at=self._clock(),
            warning=warning,
        )

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        session = self._session(channel)
        response = await session.request(
            "DELETE", VIDEOS, "deleting the video", params={"id": provider_post_id}
        )
        if response.is_success or response.status_code == 404:
            return
        raise session.classify(response, "deleting the video")

    async def fetch_metrics(
        self, channel: ChannelContext, provider_post_id: str, published_at: datetime
    ) -> dict[str, int]:
        body = await self._session(channel).call(
            "GET",
            VIDEOS,
            "reading the video's statistics",
            params={"part": "statistics", "id": provider_post_id},
        )
        items = body.get("items")
        first = items[0] if isinstance(items, list) and items else None
        statistics = first.get("statistics") if isinstance(first, dict) else None
        return shown_metrics(statistics, METRICS, "YouTube", f"video {provider_post_id}")

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        params = {"part": "id", "mine": "true"}
        return await probed_health(
            lambda: self._session(channel).call(
                "GET", f"{API}/channels", "checking the token", params=params
            )
        )

    async def revoke(self, channel: ChannelContext) -> Revocation:
        credentials = self._credential_store.current(channel, ROTATION_KEY)
        token = credentials.get("refreshToken") or credentials.get("accessToken")
        if not isinstance(token, str) or not token:
            return "nothing_to_revoke"
        await revoke_token(self._http, token)
        return "revoked"


def _the_video(media: tuple[MediaItem, ...]) -> MediaItem:
    videos = [item for item in media if item.kind == "video"]
    if len(videos) != 1 or len(media) != 1:
        raise ProviderError("invalid_request", "A YouTube video target takes exactly one video.")
    return videos[0]
