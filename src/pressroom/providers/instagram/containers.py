"""Publishing through media containers (Content Publishing,
https://developers.facebook.com/docs/instagram-platform/content-publishing/, and the IG User
Media, IG Container and IG User Media Publish references).

1. `POST /{ig-user-id}/media` makes a container from a public URL Instagram fetches the media
   from: `image_url` (a single image, with `caption` and `alt_text`), `media_type=REELS` with
   `video_url` (and `share_to_feed`), `media_type=STORIES` with either URL, and for a carousel
   one container per item (`is_carousel_item=true`; `media_type=VIDEO` for a video) then a
   parent `media_type=CAROUSEL` with `children` (comma-separated ids) and `caption`.
   `alt_text` exists for images only ("Reels and stories are not supported"). Answer `{"id"}`.
2. `GET /{container-id}?fields=status_code,status` until `FINISHED`; `ERROR` names an error
   subcode in `status`, `EXPIRED` is a container not published within 24 hours. Polls are
   spaced (doubling up to 30 s) and bounded in number and in total wait.
3. `POST /{ig-user-id}/media_publish` with `creation_id` -> `{"id": <ig-media-id>}`.

Before any of it, `GET /{ig-user-id}/content_publishing_limit?fields=quota_usage,config`
(`{"data": [{"quota_usage", "config": {"quota_total", "quota_duration"}}]}`): an account whose
quota is spent is not sent a container; the publish waits for the window instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import Polling
from pressroom.providers.http import PublicMediaUrl
from pressroom.providers.instagram.errors import DAY
from pressroom.providers.instagram.errors import TRANSIENT_SUBCODES
from pressroom.providers.instagram.errors import content_rejection
from pressroom.providers.instagram.errors import publishing_limit_reached
from pressroom.providers.instagram.errors import status_subcode
from pressroom.providers.instagram.session import InstagramSession

DEFAULT_POLL_INTERVAL = 3.0
MAX_POLL_INTERVAL = 30.0
DEFAULT_PROCESSING_TIMEOUT = 300.0
MAX_POLLS = 40


class ContainerPublisher:
    """Builds, waits for and publishes the containers of one publish."""

    def __init__(
        self,
        session: InstagramSession,
        media_url: PublicMediaUrl,
        polling: Polling,
    ) -> None:
        """`polling.interval` is the first wait, doubled after each poll up to
        MAX_POLL_INTERVAL; `polling.budget` bounds the whole wait."""
        self._session = session
        self._media_url = media_url
        self._polling = polling

    async def check_quota(self) -> None:
        """Raise `rate_limited` (retry after the window) when the account has no post left."""
        action = "checking the content-publishing limit"
        body = await self._session.get(
            f"{self._session.user_id}/content_publishing_limit",
            action,
            {"fields": "quota_usage,config"},
        )
        data = body.get("data")
        entry = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
        usage = entry.get("quota_usage")
        config = entry.get("config")
        if not isinstance(config, dict):
            config = {}
        total = config.get("quota_total")
        window = config.get("quota_duration")
        if isinstance(usage, int) and isinstance(total, int) and usage >= total:
            wait = float(window) if isinstance(window, int) and window > 0 else DAY
            detail = f"{usage} of {total} posts used"
            raise publishing_limit_reached("publishing", wait, detail)

    async def build(
        self,
        kind: str,
        text: str,
        media: Sequence[MediaItem],
        alts: Sequence[str | None],
        *,
        share_to_feed: bool | None = None,
    ) -> str:
        """The id of a container of `kind`, processed and ready to publish."""
        if kind == "carousel":
            return await self._carousel(text, media, alts)
        if len(media) != 1:
            raise ProviderError(
                "invalid_request", f"An Instagram {kind} takes exactly one media item."
            )
        item, alt = media[0], alts[0]
        params: dict[str, str] = {}
        if kind == "post" and item.kind == "image":
            params = {"image_url": await self._media_url(item), **_alt(alt)}
        elif kind == "reel" and item.kind == "video":
            params = {"media_type": "REELS", "video_url": await self._media_url(item)}
            if share_to_feed is not None:
                params["share_to_feed"] = "true" if share_to_feed else "false"
        elif kind == "story" and item.kind in ("image", "video"):
            field = "image_url" if item.kind == "image" else "video_url"
            params = {"media_type": "STORIES", field: await self._media_url(item)}
        else:
            raise ProviderError(
                "invalid_request", f"An Instagram {kind} cannot be made of a {item.kind}."
            )
        if kind != "story" and text:
            # Stories publish no caption (the declaration says so).
            params["caption"] = text
        container = await self._create(params, f"the {kind}")
        await self.wait_finished(container, f"the {kind}")
        return container

    async def _carousel(
        self, text: str, media: Sequence[MediaItem], alts: Sequence[str | None]
    ) -> str:
        children: list[str] = []
        for position, (item, alt) in enumerate(zip(media, alts, strict=True)):
            label = f"carousel item {position + 1} ({item.id})"
            url = await self._media_url(item)
            if item.kind == "image":
                params = {"is_carousel_item": "true", "image_url": url, **_alt(alt)}
            elif item.kind == "video":
                params = {"is_carousel_item": "true", "media_type": "VIDEO", "video_url": url}
            else:
                raise ProviderError(
                    "invalid_request", f"An Instagram carousel cannot hold a {item.kind}."
                )
            children.append(await self._create(params, label))
        # Instagram processes the items side by side: wait once they all exist.
        for position, child in enumerate(children):
            await self.wait_finished(child, f"carousel item {position + 1}")
        params = {"media_type": "CAROUSEL", "children": ",".join(children)}
        if text:
            params["caption"] = text
        parent = await self._create(params, "the carousel")
        await self.wait_finished(parent, "the carousel")
        return parent

    async def _create(self, params: dict[str, str], label: str) -> str:
        action = f"creating the container of {label}"
        body = await self._session.post(f"{self._session.user_id}/media", action, params)
        return _id(body, action)

    async def wait_finished(self, container: str, label: str) -> None:
        action = f"checking the processing of {label}"
        waited, interval = 0.0, self._polling.interval
        for _ in range(MAX_POLLS):
            body = await self._session.get(container, action, {"fields": "status_code,status"})
            state = body.get("status_code")
            if state == "FINISHED":
                return
            if state == "ERROR":
                raise container_failure(str(body.get("status") or ""), label)
            if state == "EXPIRED":
                raise ProviderError(
                    "provider_unavailable",
                    f"Instagram let the container of {label} expire before it was published; "
                    "the publish will be retried with a new one.",
                )
            if state == "PUBLISHED":
                raise ProviderError(
                    "invalid_request", f"The container of {label} was already published."
                )
            if waited + interval > self._polling.budget:
                break
            await self._polling.sleep(interval)
            waited += interval
            interval = min(interval * 2, MAX_POLL_INTERVAL)
        raise ProviderError(
            "provider_unavailable",
            f"Instagram was still processing {label} after {math.ceil(waited)} s; the publish "
            "will be retried.",
        )

    async def publish(self, container: str) -> str:
        action = "publishing the container"
        body = await self._session.post(
            f"{self._session.user_id}/media_publish", action, {"creation_id": container}
        )
        return _id(body, action)


def container_failure(status: str, label: str) -> ProviderError:
    """A container whose status_code is ERROR: retryable where Instagram says to try again."""
    subcode = status_subcode(status)
    detail = status or "no reason given"
    if subcode in TRANSIENT_SUBCODES:
        return ProviderError(
            "provider_unavailable",
            f"Instagram could not process {label} ({detail}); it will be retried.",
        )
    rejected = content_rejection(subcode, detail)
    if rejected is not None and rejected.code == "text_rejected":
        return rejected
    return ProviderError("media_rejected", f"Instagram could not process {label}: {detail}")


def _alt(alt: str | None) -> dict[str, str]:
    return {"alt_text": alt} if alt else {}


def _id(body: dict[str, Any], action: str) -> str:
    value = body.get("id")
    if isinstance(value, int | str) and str(value):
        return str(value)
    raise ProviderError("provider_unavailable", f"Instagram answered {action} without an id.")
