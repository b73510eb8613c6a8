"""Waiting for a post TikTok accepted to be published.

`POST /v2/post/publish/status/fetch/` with `{"publish_id"}` answers `data.status`:
PROCESSING_UPLOAD, PROCESSING_DOWNLOAD, SEND_TO_USER_INBOX (inbox uploads only), PUBLISH_COMPLETE
or FAILED, with `fail_reason` on failure and `publicaly_available_post_id` (TikTok's spelling),
the post's id once a public post passed moderation
(https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status). TikTok
gives no post id for a post not visible to the public (SELF_ONLY): its publish id then stands
for it. The endpoint allows 30 requests a minute a token: polls are `poll_interval` apart
(5 s by default), within `timeout` in total; past it the publish is retried later, and the
retry resumes waiting for the same publish id (see progress.py) instead of posting again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import Sleep
from pressroom.providers.http import safe_detail
from pressroom.providers.tiktok.errors import classify_code
from pressroom.providers.tiktok.session import TikTokSession

STATUS_PATH = "/v2/post/publish/status/fetch/"
DEFAULT_POLL_INTERVAL = 5.0
DEFAULT_TIMEOUT = 600.0
_WAITING = frozenset({"PROCESSING_UPLOAD", "PROCESSING_DOWNLOAD", "SEND_TO_USER_INBOX"})


@dataclass(frozen=True)
class StatusPoll:
    sleep: Sleep
    poll_interval: float = DEFAULT_POLL_INTERVAL
    timeout: float = DEFAULT_TIMEOUT

    async def published_id(self, session: TikTokSession, publish_id: str) -> str:
        """The post's id once TikTok published it (its publish id for a post with none);
        raises the classified failure when TikTok says FAILED."""
        waited = 0.0
        while True:
            data = await session.call(
                "POST",
                STATUS_PATH,
                "checking the post's publishing status",
                json={"publish_id": publish_id},
            )
            status = data.get("status")
            if status == "PUBLISH_COMPLETE":
                ids = data.get("publicaly_available_post_id")
                first = ids[0] if isinstance(ids, list) and ids else None
                return str(first) if isinstance(first, int | str) and first else publish_id
            if status == "FAILED":
                raise failure(data.get("fail_reason"), session)
            if status not in _WAITING:
                raise ProviderError(
                    "provider_unavailable",
                    f"TikTok answered an unknown publishing status {status!r}; it will be retried.",
                )
            if waited + self.poll_interval > self.timeout:
                raise ProviderError(
                    "provider_unavailable",
                    f"TikTok was still processing the post after {math.ceil(waited)} s "
                    f"({status}); the publish will be retried and resume waiting for it.",
                )
            await self.sleep(self.poll_interval)
            waited += self.poll_interval


def failure(reason: object, session: TikTokSession) -> ProviderError:
    """The ProviderError of a FAILED post, quoting TikTok's `fail_reason`."""
    said = safe_detail(reason if isinstance(reason, str) else "", session.secrets())
    action = "publishing the post"
    known = classify_code(said, "", action)
    if known is not None:
        return known
    # Most unknown reasons are checks of the media (`*_check_failed`, `*_pull_failed`).
    return ProviderError(
        "media_rejected", f"TikTok could not publish the post: {said or 'no reason given'}"
    )
