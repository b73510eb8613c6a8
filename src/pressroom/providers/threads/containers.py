"""Threads media containers: made, waited for, published.

Follows https://developers.facebook.com/docs/threads/posts and .../reference/publishing:

- `POST /{threads-user-id}/threads` makes a container: `media_type` `TEXT`, `IMAGE` (with
  `image_url`) or `VIDEO` (with `video_url`), optional `text`, `alt_text` for images and videos
  (.../posts/accessibility), `reply_to_id` for a reply, `reply_control`. A carousel is one
  container per item (`is_carousel_item=true`, no text) and then `media_type=CAROUSEL` with
  `children`, the items' container ids comma-separated, and the text -> `{"id"}`. Threads
  fetches each media URL itself: it gets the signed public link of the stored file.
- `GET /{threads-container-id}?fields=id,status,error_message` -> `status` `IN_PROGRESS`,
  `FINISHED` (ready), `PUBLISHED`, `ERROR` (with `error_message`: FAILED_DOWNLOADING_VIDEO,
  INVALID_ASPEC_RATIO, ...) or `EXPIRED` (not published within 24 hours)
  (.../troubleshooting). Every container is waited for before it is published: publishing one
  Threads has not finished answers "Media Not Found" (code 24, subcode 4279009).
- `POST /{threads-user-id}/threads_publish` with `creation_id` -> `{"id"}`, the post's media id.

Polling: the first look is at once (text and images are usually ready), then every
`poll_interval` seconds, for at most `processing_timeout` seconds of waiting in all per publish
attempt. Threads recommends looking once a minute for up to 5 minutes; an attempt here is
bounded inside the publisher's time for it (55 s by default), and the containers still
processing are kept (progress.py), so the retry goes on waiting for the same ones instead of
making them again: Threads goes on processing them between attempts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import PollBudget
from pressroom.providers.http import Polling
from pressroom.providers.http import PublicMediaUrl
from pressroom.providers.http import response_json
from pressroom.providers.threads.session import ThreadsSession

DEFAULT_POLL_INTERVAL = 5.0
DEFAULT_PROCESSING_TIMEOUT = 45.0
# What a container's media type becomes on the published post (GET /{threads-media-id}).
POST_MEDIA_TYPES = {
    "TEXT": "TEXT_POST",
    "IMAGE": "IMAGE",
    "VIDEO": "VIDEO",
    "CAROUSEL": "CAROUSEL_ALBUM",
}


@dataclass(frozen=True)
class Step:
    """One post of a publish: the post itself, a thread's follow-up or the first comment."""

    index: int
    label: str
    text: str
    media: tuple[MediaItem, ...] = ()
    alts: tuple[str | None, ...] = ()
    # The step this one replies to (None: the post itself).
    reply_to: int | None = None
    reply_control: str | None = None

    @property
    def media_type(self) -> str:
        if len(self.media) > 1:
            return "CAROUSEL"
        if self.media:
            return "VIDEO" if self.media[0].kind == "video" else "IMAGE"
        return "TEXT"


class Containers:
    """Makes, waits for and publishes the containers of one channel's publish."""

    def __init__(
        self,
        session: ThreadsSession,
        media_url: PublicMediaUrl | None,
        polling: Polling,
    ) -> None:
        """`polling.budget` bounds the seconds this attempt waits for processing in all."""
        self._session = session
        self._media_url = media_url
        # The waiting this attempt may still do for Threads to process its containers.
        self._budget = PollBudget(polling)

    async def create(self, step: Step, parent_id: str | None, items: list[str]) -> str:
        """The container of `step` (a reply to `parent_id` when given). A carousel's items are
        made first and waited for; `items` holds those already made (by an earlier attempt)
        and gets each one made now, so that a retry reuses them."""
        fields: dict[str, str] = {"media_type": step.media_type}
        if len(step.media) > 1:
            for position, (item, alt) in enumerate(zip(step.media, step.alts, strict=True)):
                label = f"item {position + 1} of {step.label}"
                if position >= len(items):
                    item_fields = {**await self._media(item, alt), "is_carousel_item": "true"}
                    items.append(await self._make(item_fields, label))
                status = await self.wait(items[position], label)
                if status != "FINISHED":
                    del items[position:]
                    raise ProviderError(
                        "provider_unavailable",
                        f"Threads answered {status} for {label}; it will be made again.",
                    )
            fields["children"] = ",".join(items)
        elif step.media:
            fields.update(await self._media(step.media[0], step.alts[0]))
        if step.text:
            fields["text"] = step.text
        if parent_id is not None:
            fields["reply_to_id"] = parent_id
        if step.reply_control is not None:
            fields["reply_control"] = step.reply_control
        return await self._make(fields, step.label)

    async def wait(self, container_id: str, label: str) -> str:
        """The container's status once it is no longer processing: `FINISHED`, `PUBLISHED` or
        `EXPIRED`. Raises `media_rejected` on `ERROR`, and a retryable error once this
        attempt has waited `processing_timeout` seconds in all."""
        action = f"checking the processing of {label}"
        while True:
            body = await self._session.call(
                "GET", f"/{container_id}", action, params={"fields": "id,status,error_message"}
            )
            status = body.get("status")
            if status in ("FINISHED", "PUBLISHED", "EXPIRED"):
                return str(status)
            if status == "ERROR":
                reason = body.get("error_message")
                raise ProviderError(
                    "media_rejected", f"Threads could not process {label}: {reason or 'ERROR'}"
                )
            if not await self._budget.wait():
                raise ProviderError(
                    "provider_unavailable",
                    f"Threads was still processing {label} after "
                    f"{math.ceil(self._budget.spent)} s; the publish will be retried and will go "
                    "on with the same container.",
                )

    async def publish(self, container_id: str, label: str) -> str:
        """Publish a finished container; the post's media id."""
        action = f"publishing {label}"
        response = await self._session.request(
            "POST",
            f"/{self._session.user_id}/threads_publish",
            action,
            data={"creation_id": container_id},
        )
        if not response.is_success:
            error = self._session.classify(response, action)
            if error.code == "not_found":
                # The container is not ready after all: the retry waits for it again.
                raise ProviderError(
                    "provider_unavailable", f"{error.message}; it will be retried.", retryable=True
                )
            raise error
        return _id(response_json(response), action)

    async def permalink(self, media_id: str) -> str | None:
        """The published post's link, or None: the post is out, a missing link is no failure."""
        try:
            body = await self._session.call(
                "GET", f"/{media_id}", "reading the post's link", params={"fields": "permalink"}
            )
        except ProviderError:
            return None
        link = body.get("permalink")
        return link if isinstance(link, str) and link.startswith("https://") else None

    async def _make(self, fields: dict[str, str], label: str) -> str:
        action = f"creating the container of {label}"
        body = await self._session.call(
            "POST", f"/{self._session.user_id}/threads", action, data=fields
        )
        return _id(body, action)

    async def _media(self, item: MediaItem, alt: str | None) -> dict[str, str]:
        if item.kind not in ("image", "video"):
            raise ProviderError(
                "media_rejected", f"Threads takes images and videos, not {item.mime_type}."
            )
        if self._media_url is None:
            raise ProviderError(
                "invalid_request",
                "Threads fetches media from a public link, and public media links are "
                "unavailable in this process.",
            )
        url = await self._media_url(item)
        fields = (
            {"media_type": "IMAGE", "image_url": url}
            if item.kind == "image"
            else {"media_type": "VIDEO", "video_url": url}
        )
        if alt:
            fields["alt_text"] = alt
        return fields


def _id(body: object, action: str) -> str:
    found = body.get("id") if isinstance(body, dict) else None
    if not isinstance(found, str | int) or not str(found):
        raise ProviderError("provider_unavailable", f"Threads answered {action} without an id.")
    return str(found)
