"""Facebook Page feed posts and photo stories, each photo fetched by Facebook from the asset's
signed public URL.

- Text or link post (https://developers.facebook.com/docs/graph-api/reference/page/feed/):
  `POST /{page-id}/feed` with `message` and `link` -> `{"id": "{page-id}_{post-id}"}`.
- One photo (https://developers.facebook.com/docs/graph-api/reference/page/photos/):
  `POST /{page-id}/photos` with `url`, `caption` and `alt_text_custom` (the photo's alternative
  text) -> `{"id": photo-id, "post_id"}`.
- Several photos as one post: each `POST /{page-id}/photos` with `published=false` (and its
  `alt_text_custom`) -> `{"id"}`, then `POST /{page-id}/feed` with `message` and
  `attached_media[i]={"media_fbid": photo-id}` in media order.
- Photo story (https://developers.facebook.com/docs/page-stories-api): an unpublished photo as
  above, then `POST /{page-id}/photo_stories` with `photo_id` -> `{"success", "post_id"}`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from pressroom.providers.adapter import ProviderError
from pressroom.providers.facebook.page import PageApi
from pressroom.providers.facebook.page import required_value


async def publish_text(api: PageApi, text: str, link: str | None) -> str:
    """A text post, with the link Facebook previews under it; returns the post id."""
    form: dict[str, str] = {}
    if text:
        form["message"] = text
    if link:
        form["link"] = link
    if not form:
        raise ProviderError("invalid_request", "A Facebook post needs a text, a link or media.")
    body = await api.post(f"{api.page_id}/feed", "publishing the post", form)
    return required_value(body, "id", "publishing the post")


async def publish_photo(api: PageApi, url: str, text: str, alt: str | None) -> str:
    """One photo published with its caption; returns the post id."""
    form = {"url": url}
    if text:
        form["caption"] = text
    if alt:
        form["alt_text_custom"] = alt
    body = await api.post(f"{api.page_id}/photos", "publishing the photo", form)
    return required_value(body, "post_id", "publishing the photo")


async def publish_photos(api: PageApi, photos: Sequence[tuple[str, str | None]], text: str) -> str:
    """Several photos (URL, alt text) as one post; returns the post id."""
    # Facebook fetches each photo while the call is open: fetching them side by side keeps the
    # publish within its lease. Unpublished photos left by a failure are never shown.
    photo_ids = await asyncio.gather(
        *(unpublished_photo(api, url, alt, position) for position, (url, alt) in enumerate(photos))
    )
    form = {
        f"attached_media[{index}]": json.dumps({"media_fbid": photo_id})
        for index, photo_id in enumerate(photo_ids)
    }
    if text:
        form["message"] = text
    body = await api.post(f"{api.page_id}/feed", "publishing the post", form)
    return required_value(body, "id", "publishing the post")


async def unpublished_photo(api: PageApi, url: str, alt: str | None, position: int = 0) -> str:
    """A photo uploaded without a post of its own, to be attached; returns its id."""
    action = f"uploading photo {position + 1}"
    form = {"url": url, "published": "false"}
    if alt:
        form["alt_text_custom"] = alt
    body = await api.post(f"{api.page_id}/photos", action, form)
    return required_value(body, "id", action)


async def publish_photo_story(api: PageApi, url: str) -> str:
    """A photo story (stories carry no caption); returns the story's post id."""
    photo_id = await unpublished_photo(api, url, None)
    body = await api.post(
        f"{api.page_id}/photo_stories", "publishing the story", {"photo_id": photo_id}
    )
    return required_value(body, "post_id", "publishing the story")
