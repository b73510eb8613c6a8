"""The account's publishing quota, checked before anything is posted.

"Threads profiles are limited to 250 API-published posts within a 24-hour moving period"
(carousels count once) and to 1,000 replies (https://developers.facebook.com/docs/threads/
overview#rate-limiting, .../retrieve-and-manage-replies). `GET /{threads-user-id}/
threads_publishing_limit?fields=quota_usage,config,reply_quota_usage,reply_config` ->
`{"data": [{"quota_usage", "config": {"quota_total", "quota_duration"}, "reply_quota_usage",
"reply_config": {...}}]}`. Checking first keeps a thread from stopping halfway because the
quota ran out after its first post.

Threads says how many were used in the moving window but not when the oldest of them leaves
it, so an exhausted quota is retried after the window's whole duration (`quota_duration`): by
then every post counted now has left the window.
"""

from __future__ import annotations

from typing import Any

from pressroom.providers.adapter import ProviderError
from pressroom.providers.threads.session import ThreadsSession


async def check_quota(session: ThreadsSession, *, posts: int, replies: int) -> None:
    """Raise a retryable `rate_limited` unless the account may still publish `posts` posts
    and `replies` replies."""
    fields = []
    if posts:
        fields += ["quota_usage", "config"]
    if replies:
        fields += ["reply_quota_usage", "reply_config"]
    if not fields:
        return
    body = await session.call(
        "GET",
        f"/{session.user_id}/threads_publishing_limit",
        "checking the publishing limit",
        params={"fields": ",".join(fields)},
    )
    data = body.get("data")
    usage = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
    _check(usage, "quota_usage", "config", posts, "posts")
    _check(usage, "reply_quota_usage", "reply_config", replies, "replies")


def _check(usage: dict[str, Any], used_key: str, config_key: str, needed: int, what: str) -> None:
    used = usage.get(used_key)
    config = usage.get(config_key)
    if not needed or not isinstance(used, int) or not isinstance(config, dict):
        return
    total, duration = config.get("quota_total"), config.get("quota_duration")
    if not isinstance(total, int) or not isinstance(duration, int) or used + needed <= total:
        return
    hours = round(duration / 3600)
    raise ProviderError(
        "rate_limited",
        f"The Threads account has published {used} of the {total} {what} it may publish in "
        f"{hours} hours, and this publish needs {needed}; it will be retried in {hours} hours.",
        retry_after=float(duration),
    )
