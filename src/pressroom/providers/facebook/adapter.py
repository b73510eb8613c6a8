"""The Facebook Pages adapter: posts, Reels and stories as the Page, a first comment, deletion,
post metrics and the channel's health, over the Graph API (`providers/graph.py`).

What each content kind publishes (its requests are in posts.py and videos.py):

- `post`: no media -> a text post (`options.link` adds a link preview); one image or GIF -> a
  photo post with its caption and alt text; several -> one post with the photos attached; one
  video -> a feed video. Media goes to Facebook as the asset's signed public URL.
- `reel`: one vertical video through the Reels upload session.
- `story`: one photo or video; Facebook publishes no caption with a story, and no comment.

`provider_post_id` is the Page post id (`{page-id}_{post-id}`) for posts and photos, the video
id for feed videos and Reels (their comments and deletion take it; metrics.py finds the post
that carries it), and the story's post id for stories. Retries: recovery.py. First comment:
comments.py; its failure after the post is live fails the publish only when it is retryable and
the retry can find the post (it has text); otherwise it is logged and the publish succeeds.

Health: a Page token that expires within `EXPIRY_WARNING` is `reconnect_required` before any
call (Facebook offers no refresh of Page tokens: the person must log in again); otherwise
`GET /{page-id}?fields=id,name` with the Page token.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import httpx

from pressroom.kit.clock import utcnow
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.adapter import SessionMetrics
from pressroom.providers.facebook import posts
from pressroom.providers.facebook import videos
from pressroom.providers.facebook.comments import post_first_comment
from pressroom.providers.facebook.metrics import post_metrics
from pressroom.providers.facebook.page import DEFAULT_GRAPH_VERSION
from pressroom.providers.facebook.page import PROVIDER
from pressroom.providers.facebook.page import PageApi
from pressroom.providers.facebook.recovery import find_published
from pressroom.providers.facebook.videos import DEFAULT_POLL_BUDGET
from pressroom.providers.facebook.videos import DEFAULT_POLL_INTERVAL
from pressroom.providers.graph import GraphClient
from pressroom.providers.http import PollBudget
from pressroom.providers.http import Polling
from pressroom.providers.http import PublicMediaUrl
from pressroom.providers.http import Sleep
from pressroom.providers.http import public_link
from pressroom.providers.options import alt_texts
from pressroom.providers.options import first_comment

log = logging.getLogger(__name__)

EXPIRY_WARNING = timedelta(days=7)
WEB = "https://www.facebook.com"


@dataclass(frozen=True)
class Published:
    object_id: str
    url: str | None
    # Found from an earlier attempt rather than made by this one.
    recovered: bool = False


class FacebookAdapter(SessionMetrics):
    """Publishes as the Facebook Page whose Page access token the channel holds."""

    provider = "facebook"
    read_metrics = staticmethod(post_metrics)

    def __init__(
        self,
        *,
        http: httpx.AsyncClient,
        media_url: PublicMediaUrl | None,
        graph_version: str = DEFAULT_GRAPH_VERSION,
        app_secret: str | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], datetime] = utcnow,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        poll_budget: float = DEFAULT_POLL_BUDGET,
    ) -> None:
        """`http` is the caller's client (it closes it); `app_secret` (the deployment's
        Facebook app) signs every call with `appsecret_proof`; `media_url` gives the public URL
        Facebook fetches media from."""
        self._http = http
        self._graph = GraphClient(
            http, provider=PROVIDER, version=graph_version, app_secret=app_secret
        )
        self._media_url = media_url
        self._clock = clock
        self._polling = Polling(sleep, poll_interval, poll_budget)

    def _session(self, channel: ChannelContext) -> PageApi:
        return PageApi(self._graph, channel)

    def _budget(self) -> PollBudget:
        return PollBudget(self._polling)

    async def publish(self, request: PublishRequest) -> PublishResult:
        api = self._session(request.channel)
        comment = first_comment(request.options)
        if request.content_kind == "story":
            published = await self._story(api, request)
        elif request.content_kind in ("post", "reel"):
            published = await self._post_or_reel(api, request)
        else:
            raise ProviderError(
                "invalid_request",
                f"Facebook has no content kind {request.content_kind!r}; use post, reel or story.",
            )
        if comment is not None and request.content_kind != "story":
            await self._comment(api, published, comment, request)
        return PublishResult(published.object_id, published.url, self._clock())

    async def _post_or_reel(self, api: PageApi, request: PublishRequest) -> Published:
        kind = _recovery_kind(request)
        if request.attempt > 1:
            found = await find_published(api, kind, request.text, self._clock())
            if found is not None:
                return Published(found, _url(api, kind, found), recovered=True)
        media = request.media
        text = request.text
        link = _link(request.options)
        if link is not None and media:
            raise ProviderError(
                "invalid_request",
                "options.link is for Facebook posts without media: a photo or video post "
                "shows no link preview. Put the link in the text instead.",
            )
        if kind == "reel":
            reel = self._one(media, "video", "A reel")
            object_id = await videos.publish_reel(api, await self._url(reel), text, self._budget())
        elif kind == "video":
            video = self._one(media, "video", "A video post")
            object_id = await videos.publish_video(
                api, await self._url(video), text, self._budget()
            )
        elif not media:
            object_id = await posts.publish_text(api, text, link)
        else:
            photos = [
                (await self._url(item), alt)
                for item, alt in zip(media, alt_texts(request.options, media), strict=True)
            ]
            if len(photos) == 1:
                object_id = await posts.publish_photo(api, photos[0][0], text, photos[0][1])
            else:
                object_id = await posts.publish_photos(api, photos, text)
        return Published(object_id, _url(api, kind, object_id))

    async def _story(self, api: PageApi, request: PublishRequest) -> Published:
        if len(request.media) != 1:
            raise ProviderError(
                "invalid_request", "A Facebook story takes exactly one photo or video."
            )
        item = request.media[0]
        url = await self._url(item)
        if item.kind == "video":
            story_id = await videos.publish_video_story(api, url, self._budget())
        else:
            story_id = await posts.publish_photo_story(api, url)
        return Published(story_id, None)

    def _one(self, media: tuple[MediaItem, ...], kind: str, what: str) -> MediaItem:
        if len(media) != 1 or media[0].kind != kind:
            raise ProviderError("invalid_request", f"{what} on Facebook takes exactly one {kind}.")
        return media[0]

    async def _url(self, item: MediaItem) -> str:
        return await public_link(self._media_url, item, "Facebook fetches media")

    async def _comment(
        self, api: PageApi, published: Published, comment: str, request: PublishRequest
    ) -> None:
        try:
            await post_first_comment(
                api, published.object_id, comment, recovered=published.recovered
            )
        except ProviderError as error:
            # A retry finds a post by its text (recovery.py) and comments again; without text it
            # would publish the post a second time, so the comment is given up instead.
            if error.retryable and request.text.strip():
                raise ProviderError(
                    error.code,
                    f"The post was published ({published.object_id}) but its first comment "
                    f"was not: {error.message}",
                    retryable=True,
                    retry_after=error.retry_after,
                ) from None
            log.warning(
                "facebook first comment not posted",
                extra={"channel_id": str(request.channel.id), "reason": error.message},
            )

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        """`DELETE /{id}` (posts, photos, videos, Reels); one already gone counts as deleted."""
        try:
            await self._session(channel).delete(provider_post_id, "deleting the post")
        except ProviderError as error:
            if error.code != "not_found":
                raise

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        try:
            api = self._session(channel)
            expiring = self._expiry_warning(api)
            if expiring is not None:
                return HealthResult("reconnect_required", expiring)
            await api.get(api.page_id, "checking the Page token", {"fields": "id,name"})
        except ProviderError as error:
            return HealthResult.failed(error)
        return HealthResult("healthy")

    def _expiry_warning(self, api: PageApi) -> str | None:
        if api.expires_at is None:
            return None
        expires = datetime.fromtimestamp(api.expires_at, UTC)
        left = expires - self._clock()
        if left > EXPIRY_WARNING:
            return None
        when = expires.strftime("%Y-%m-%d %H:%M UTC")
        verb = "expired" if left.total_seconds() <= 0 else "expires"
        return (
            f"The Facebook Page token {verb} on {when} and Facebook offers no way to refresh "
            "it: reconnect the channel (connecting through Facebook Login gives a Page token "
            "that does not expire)."
        )


def _recovery_kind(request: PublishRequest) -> str:
    if request.content_kind == "reel":
        return "reel"
    if any(item.kind == "video" for item in request.media):
        return "video"
    return "post"


def _url(api: PageApi, kind: str, object_id: str) -> str:
    if kind == "reel":
        return f"{WEB}/reel/{object_id}"
    if kind == "video":
        return f"{WEB}/{api.page_id}/videos/{object_id}"
    return f"{WEB}/{object_id}"


def _link(options: dict[str, Any]) -> str | None:
    value = options.get("link")
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not value.startswith(("https://", "http://")):
        raise ProviderError("invalid_request", "options.link must be an http(s) URL.")
    return value
