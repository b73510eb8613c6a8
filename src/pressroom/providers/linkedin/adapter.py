"""The LinkedIn adapter: posts as a member or a Page, with text, a link (article), one or
several images, one video or one document (a PDF); a first comment; deletion; metrics; the
channel's health.

Retries: LinkedIn's Posts API takes no idempotency key, but it refuses an identical post made
again with 422 "Content is a duplicate of urn:li:share:…". A publish retried after a crash
(attempt > 1) that meets that refusal returns the named post instead of failing, so a post
is never made twice. Media uploaded by the crashed attempt is uploaded again (LinkedIn drops
unused uploads); a first comment is posted once the post exists, and its failure is logged, not
raised, so that a retry cannot make a second post.

Health: a retired `LinkedIn-Version` seen by this process is `degraded` naming
`PRESSROOM_LINKEDIN_VERSION`; a token that expires within `EXPIRY_WARNING_SECONDS` and cannot be
refreshed is `reconnect_required` before any call; otherwise the member is read
(`GET /v2/userinfo`) or, for a Page, `GET /rest/organizations/{id}`, a versioned call that also
checks the version.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from typing import Any

import httpx

from pressroom.kit.clock import utc_minute
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.adapter import SessionMetrics
from pressroom.providers.connection import OAuthApp
from pressroom.providers.credentials import PROCESS_CREDENTIALS
from pressroom.providers.credentials import CredentialsChanged
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.http import HttpAdapter
from pressroom.providers.http import MediaReader
from pressroom.providers.http import Polling
from pressroom.providers.http import Sleep
from pressroom.providers.linkedin import media
from pressroom.providers.linkedin import posts
from pressroom.providers.linkedin.errors import RETIRED_VERSIONS
from pressroom.providers.linkedin.errors import retired_version_error
from pressroom.providers.linkedin.metrics import post_metrics
from pressroom.providers.linkedin.session import DEFAULT_VERSION
from pressroom.providers.linkedin.session import LinkedInSession
from pressroom.providers.linkedin.session import encoded
from pressroom.providers.linkedin.session import refreshable
from pressroom.providers.options import alt_texts
from pressroom.providers.options import first_comment

logger = logging.getLogger(__name__)

# Warn this long before an access token that cannot be refreshed runs out.
EXPIRY_WARNING_SECONDS = 7 * 86400


class LinkedInAdapter(HttpAdapter, SessionMetrics):
    provider = "linkedin"
    read_metrics = staticmethod(post_metrics)

    def __init__(
        self,
        *,
        read_media: MediaReader,
        app: OAuthApp | None = None,
        on_credentials_changed: CredentialsChanged | None = None,
        http: httpx.AsyncClient | None = None,
        version: str = DEFAULT_VERSION,
        sleep: Sleep | None = None,
        clock: Callable[[], float] = time.time,
        poll_interval: float = media.DEFAULT_POLL_INTERVAL,
        poll_budget: float = media.DEFAULT_POLL_BUDGET,
        store: CredentialStore | None = None,
    ) -> None:
        super().__init__(http)
        self._read_media = read_media
        self._app = app
        self._store = store or CredentialStore(PROCESS_CREDENTIALS, on_credentials_changed)
        self.version = version
        self._clock = clock
        self._polling = Polling(sleep or asyncio.sleep, poll_interval, poll_budget)

    def _session(self, channel: ChannelContext) -> LinkedInSession:
        if self.version in RETIRED_VERSIONS:
            raise retired_version_error(self.version, "NONEXISTENT_VERSION")
        return LinkedInSession(
            self._http, self._app, channel, self._store, version=self.version, clock=self._clock
        )

    async def publish(self, request: PublishRequest) -> PublishResult:
        session = self._session(request.channel)
        content = await self._content(session, request)
        body = posts.post_body(session, request.text, request.options, content)
        urn = await posts.create_post(session, body, retried=request.attempt > 1)
        comment = first_comment(request.options)
        if comment is not None:
            try:
                await posts.comment(session, urn, comment)
            except ProviderError as error:
                logger.warning(
                    "LinkedIn first comment failed; the post stands",
                    extra={"target_id": str(request.target_id), "reason": error.message},
                )
        return PublishResult(
            provider_post_id=urn,
            url=f"https://www.linkedin.com/feed/update/{urn}/",
            published_at=datetime.fromtimestamp(self._clock(), UTC),
        )

    async def _content(
        self, session: LinkedInSession, request: PublishRequest
    ) -> dict[str, Any] | None:
        items = request.media
        if not items:
            return posts.article(request.options)
        if any(item.kind == "document" for item in items):
            return {"media": await self._document(session, request)}
        if any(item.kind == "video" for item in items):
            if len(items) != 1:
                raise ProviderError("invalid_request", "A LinkedIn post holds one video alone.")
            video = await media.upload_video(session, self._read_media, items[0], self._polling)
            title = request.options.get("videoTitle")
            found: dict[str, Any] = {"id": video}
            if isinstance(title, str) and title:
                found["title"] = title
            return {"media": found}
        texts = alt_texts(request.options, items)
        images = []
        for item, alt in zip(items, texts, strict=True):
            image: dict[str, Any] = {
                "id": await media.upload_image(session, self._read_media, item)
            }
            if alt:
                image["altText"] = alt
            images.append(image)
        if len(images) == 1:
            return {"media": images[0]}
        return {"multiImage": {"images": images}}

    async def _document(self, session: LinkedInSession, request: PublishRequest) -> dict[str, Any]:
        """`content.media` of a document post: the uploaded document and its title
        (`options.documentTitle`, else the file name without its extension)."""
        if len(request.media) != 1:
            raise ProviderError("invalid_request", "A LinkedIn post holds one document alone.")
        item = request.media[0]
        document = await media.upload_document(session, self._read_media, item, self._polling)
        title = request.options.get("documentTitle")
        if not isinstance(title, str) or not title.strip():
            stem, dot, _ = item.filename.rpartition(".")
            title = (stem if dot and stem else item.filename) or "Document"
        return {"id": document, "title": title[:400]}

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        """`DELETE /rest/posts/{urn}`; a post already gone counts as deleted."""
        await self._session(channel).delete(
            f"/rest/posts/{encoded(provider_post_id)}", "deleting the post"
        )

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        try:
            session = self._session(channel)
        except ProviderError as error:
            return HealthResult.failed(error)
        expiring = self._expiring(session.credentials)
        if expiring is not None:
            return HealthResult("reconnect_required", expiring)
        author = session.author if isinstance(session.credentials.get("author"), str) else ""
        path = (
            f"/rest/organizations/{author.rsplit(':', 1)[1]}"
            if author.startswith("urn:li:organization:")
            else "/v2/userinfo"
        )
        try:
            await session.call("GET", path, "checking the channel")
        except ProviderError as error:
            return HealthResult.failed(error)
        return HealthResult("healthy")

    def _expiring(self, credentials: dict[str, Any]) -> str | None:
        """Why the channel needs reconnecting soon, or None."""
        expires_at = credentials.get("expiresAt")
        now = self._clock()
        if not isinstance(expires_at, int | float) or expires_at - now > EXPIRY_WARNING_SECONDS:
            return None
        if refreshable(credentials, self._app, now):
            return None
        when = utc_minute(expires_at)
        verb = "expired" if expires_at <= now else "expires"
        return (
            f"The LinkedIn access token {verb} {when} and cannot be refreshed (no refresh token, "
            "an expired one, or no LinkedIn app configured). Reconnect the channel."
        )
