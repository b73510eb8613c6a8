"""The Threads adapter: posts, carousels, threads, a first comment, deletion, insights and health.

- Publish (containers.py): the post's container (text, an image or a video by its signed
  public link, or a carousel of 2 to 20), waited for and published; then each follow-up of
  `options.thread` as a reply to the one before (`reply_to_id`), and `options.firstComment` as a
  reply to the post, all from the same account. `options.replyControl` goes with the post and
  its follow-ups. The account's publishing quota is checked first (quota.py).
- Retries (progress.py, recovery.py): Threads takes no idempotency key. A retry resumes from the
  containers and posts this process already made; after a crash, it looks for what the earlier
  attempt published among the account's recent posts before posting again.
- Delete: `DELETE /{threads-media-id}` -> `{"success": true, "deleted_id"}`
  (https://developers.facebook.com/docs/threads/posts/delete-posts; at most 100 a day). A post
  already gone counts as deleted.
- Metrics: `GET /{threads-media-id}/insights?metric=views,likes,replies,reposts,quotes,shares`
  (https://developers.facebook.com/docs/threads/insights) -> `{"data": [{"name", "period":
  "lifetime", "values": [{"value"}]}]}`. views -> views, likes -> likes, replies -> comments,
  and reposts + quotes + shares -> shares: each puts the post in front of other people, as X's
  retweets and quotes do.
- Health: the token's expiry (refreshed when due, session.py), then `GET /me`.
"""

from __future__ import annotations

from typing import Any
from typing import Unpack

from pressroom.kit.clock import utc_minute
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.adapter import SessionMetrics
from pressroom.providers.http import PublicMediaUrl
from pressroom.providers.session import ContainerAdapter
from pressroom.providers.session import ContainerOptions
from pressroom.providers.threads.containers import DEFAULT_POLL_INTERVAL
from pressroom.providers.threads.containers import DEFAULT_PROCESSING_TIMEOUT
from pressroom.providers.threads.containers import Containers
from pressroom.providers.threads.progress import PROCESS_PROGRESS
from pressroom.providers.threads.progress import ProgressBook
from pressroom.providers.threads.publishing import publish_steps
from pressroom.providers.threads.session import DAY
from pressroom.providers.threads.session import ThreadsSession
from pressroom.providers.threads.steps import plan_steps

# check_health warns this long before a token that cannot be refreshed expires.
EXPIRY_WARNING = 7 * DAY
INSIGHTS = "views,likes,replies,reposts,quotes,shares"


async def post_insights(session: ThreadsSession, post_id: str) -> dict[str, int]:
    """The canonical metrics of a post from its lifetime insights."""
    body = await session.call(
        "GET", f"/{post_id}/insights", "reading the post's insights", params={"metric": INSIGHTS}
    )
    data = body.get("data")
    values = {
        entry["name"]: _value(entry)
        for entry in (data if isinstance(data, list) else [])
        if isinstance(entry, dict) and isinstance(entry.get("name"), str)
    }
    if not values:
        raise ProviderError("not_found", f"Threads gave no insights for post {post_id}.")
    count = values.get
    return {
        "views": count("views", 0),
        "likes": count("likes", 0),
        "comments": count("replies", 0),
        "shares": count("reposts", 0) + count("quotes", 0) + count("shares", 0),
    }


class ThreadsAdapter(ContainerAdapter, SessionMetrics):
    """Publishes as the Threads account whose long-lived token the channel holds."""

    provider = "threads"
    read_metrics = staticmethod(post_insights)
    POLL_INTERVAL = DEFAULT_POLL_INTERVAL
    PROCESSING_TIMEOUT = DEFAULT_PROCESSING_TIMEOUT

    def __init__(
        self,
        *,
        media_url: PublicMediaUrl | None,
        progress: ProgressBook = PROCESS_PROGRESS,
        **options: Unpack[ContainerOptions],
    ) -> None:
        super().__init__(media_url=media_url, **options)
        self._progress = progress

    def _session(self, channel: ChannelContext) -> ThreadsSession:
        return ThreadsSession(self._http, channel, self._credential_store, clock=self._unix_time)

    async def publish(self, request: PublishRequest) -> PublishResult:
        steps = plan_steps(request)
        session = self._session(request.channel)
        containers = Containers(
            session,
            self._media_url,
            self._polling,
        )
        channel_id, key = request.channel.id, request.idempotency_key
        progress = self._progress.open(channel_id, key)
        try:
            post_id = await publish_steps(session, containers, steps, progress, request.attempt)
        except ProviderError as error:
            if not error.retryable:
                self._progress.close(channel_id, key)
            raise
        self._progress.close(channel_id, key)
        return PublishResult(
            provider_post_id=post_id,
            url=await containers.permalink(post_id),
            published_at=self._clock(),
        )

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        session = self._session(channel)
        action = "deleting the post"
        response = await session.request("DELETE", f"/{provider_post_id}", action)
        if response.is_success:
            return
        error = session.classify(response, action)
        if error.code != "not_found":
            raise error

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        try:
            session = self._session(channel)
            refusal = await session.ensure_fresh()
            await session.call("GET", "/me", "checking the token", params={"fields": "id"})
        except ProviderError as error:
            return HealthResult.failed(error)
        expires_at = session.expires_at
        if refusal is None or expires_at is None:
            return HealthResult("healthy")
        reason = (
            f"The Threads token expires on {utc_minute(expires_at)} and could not be "
            f"refreshed: {refusal.message}"
        )
        if expires_at - session.clock() <= EXPIRY_WARNING:
            return HealthResult("reconnect_required", f"{reason} Reconnect it before then.")
        return HealthResult("degraded", reason)


def _value(entry: dict[str, Any]) -> int:
    """A media insight's lifetime value: `values[0].value` (or `total_value.value`)."""
    values = entry.get("values")
    first = values[0] if isinstance(values, list) and values else entry.get("total_value")
    value = first.get("value") if isinstance(first, dict) else None
    return value if isinstance(value, int) and value >= 0 else 0
