"""The Instagram adapter: single images, carousels, reels and stories on a professional account,
through the Instagram API with Instagram Login (graph.instagram.com).

- Publish: media containers made from signed public links to the stored media, polled until
  processed, then published (containers.py), after a look at the account's publishing quota.
  `options.altTexts` go on images, `options.shareToFeed` on reels. The published media's
  `permalink` is read back for the result's URL.
- First comment (`options.firstComment`, posts, carousels and reels):
  `POST /{ig-media-id}/comments` with `message` (Comment Moderation, "Reply to a comment" /
  IG Media Comments). The post is live by then: a comment Instagram refuses for good is logged,
  not reported as a failed publish; a comment that failed for a passing reason fails the attempt
  (retryable) only where the retry can find the post again (recovery.py) and add the comment.
- Delete: the API cannot delete published media (IG Media has no delete operation for the
  Instagram API with Instagram Login); `delete` says so, permanently.
- Metrics: IG Media insights (metrics.py).
- Health: `GET /me` with the token (refreshed first when due); a token that expires within
  seven days and could not be refreshed asks for a reconnect before publishing fails.

Idempotency: see recovery.py. A retried publish (`attempt > 1`) first looks for the post an
earlier attempt may have made and returns it.
"""

from __future__ import annotations

import logging
from typing import Unpack

from pressroom.kit.clock import utc_minute
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.adapter import SessionMetrics
from pressroom.providers.http import PublicMediaUrl
from pressroom.providers.instagram.containers import DEFAULT_POLL_INTERVAL
from pressroom.providers.instagram.containers import DEFAULT_PROCESSING_TIMEOUT
from pressroom.providers.instagram.containers import ContainerPublisher
from pressroom.providers.instagram.metrics import media_metrics
from pressroom.providers.instagram.recovery import PublishedMedia
from pressroom.providers.instagram.recovery import find_published
from pressroom.providers.instagram.recovery import has_comment
from pressroom.providers.instagram.recovery import recognisable
from pressroom.providers.instagram.session import DEFAULT_GRAPH_VERSION
from pressroom.providers.instagram.session import InstagramSession
from pressroom.providers.options import alt_texts
from pressroom.providers.options import first_comment
from pressroom.providers.session import ContainerAdapter
from pressroom.providers.session import ContainerOptions

# A token this close to its expiry that could not be refreshed needs the person now.
EXPIRY_WARNING_SECONDS = 7 * 24 * 3600
_KINDS = frozenset({"post", "carousel", "reel", "story"})

logger = logging.getLogger(__name__)


class InstagramAdapter(ContainerAdapter, SessionMetrics):
    """Publishes as the professional account whose long-lived Instagram User token the channel
    holds."""

    provider = "instagram"
    read_metrics = staticmethod(media_metrics)
    POLL_INTERVAL = DEFAULT_POLL_INTERVAL
    PROCESSING_TIMEOUT = DEFAULT_PROCESSING_TIMEOUT

    def __init__(
        self,
        *,
        media_url: PublicMediaUrl | None = None,
        graph_version: str = DEFAULT_GRAPH_VERSION,
        **options: Unpack[ContainerOptions],
    ) -> None:
        super().__init__(media_url=media_url, **options)
        self._graph_version = graph_version

    def _session(self, channel: ChannelContext) -> InstagramSession:
        return InstagramSession(
            self._http,
            channel,
            self._credential_store,
            graph_version=self._graph_version,
            clock=self._unix_time,
        )

    async def publish(self, request: PublishRequest) -> PublishResult:
        kind = request.content_kind
        if kind not in _KINDS:
            raise ProviderError("invalid_request", f"Instagram has no content kind {kind!r}.")
        if self._media_url is None:
            raise ProviderError(
                "invalid_request",
                "Instagram fetches media from a public link, and public media links are "
                "unavailable in this process (configure the public URL and media links).",
            )
        comment = first_comment(request.options) if kind != "story" else None
        alts = alt_texts(request.options, request.media)
        share_to_feed = request.options.get("shareToFeed")
        if share_to_feed is not None and not isinstance(share_to_feed, bool):
            raise ProviderError("invalid_request", "options.shareToFeed must be true or false.")
        session = self._session(request.channel)
        found = None
        if request.attempt > 1:
            found = await find_published(session, kind, request.text, self._clock())
        if found is None:
            publisher = ContainerPublisher(
                session,
                self._media_url,
                self._polling,
            )
            await publisher.check_quota()
            container = await publisher.build(
                kind, request.text, request.media, alts, share_to_feed=share_to_feed
            )
            media_id = await publisher.publish(container)
            found = PublishedMedia(media_id, await self._permalink(session, media_id))
        if comment is not None:
            await self._first_comment(session, request, found.id, comment)
        return PublishResult(
            provider_post_id=found.id, url=found.permalink, published_at=self._clock()
        )

    async def _permalink(self, session: InstagramSession, media_id: str) -> str | None:
        """The post's address; its absence never fails a publish that succeeded."""
        try:
            body = await session.get(media_id, "reading the post's link", {"fields": "permalink"})
        except ProviderError:
            return None
        permalink = body.get("permalink")
        return permalink if isinstance(permalink, str) and permalink else None

    async def _first_comment(
        self, session: InstagramSession, request: PublishRequest, media_id: str, text: str
    ) -> None:
        # A retry can only add the comment if it can find the post again.
        recoverable = recognisable(request.content_kind, request.text)
        try:
            if request.attempt > 1 and await has_comment(session, media_id, text):
                return
            await session.post(
                f"{media_id}/comments", "posting the first comment", {"message": text}
            )
        except ProviderError as error:
            if error.retryable and recoverable:
                raise
            logger.warning(
                "instagram first comment not posted",
                extra={"target_id": str(request.target_id), "code": error.code},
            )

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        raise ProviderError(
            "invalid_request",
            "The Instagram API does not delete published media; delete the post in the "
            "Instagram app.",
        )

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        try:
            session = self._session(channel)
            await session.get("me", "checking the token", {"fields": "user_id,username"})
        except ProviderError as error:
            return HealthResult.failed(error)
        expires_at = session.expires_at()
        now = self._unix_time()
        if expires_at is not None and expires_at - now < EXPIRY_WARNING_SECONDS:
            refusal = session.refresh_refusal
            why = f": {refusal.message}" if refusal is not None else ""
            return HealthResult(
                "reconnect_required",
                f"The Instagram token expires on {utc_minute(expires_at)} and could not be "
                f"refreshed{why}. Reconnect the channel.",
            )
        return HealthResult("healthy")
