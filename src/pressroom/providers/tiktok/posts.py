"""Starting a TikTok post: the init request of a video or of photos, and a video's upload.

Each returns the `publish_id` TikTok answered; status.py then waits for the post. Request shapes
are described in adapter.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.http import MediaReader
from pressroom.providers.http import PublicMediaUrl
from pressroom.providers.tiktok.creator import CreatorInfo
from pressroom.providers.tiktok.creator import interactions
from pressroom.providers.tiktok.creator import privacy_level
from pressroom.providers.tiktok.session import TikTokSession
from pressroom.providers.tiktok.upload import ChunkPlan
from pressroom.providers.tiktok.upload import send_chunks

VIDEO_INIT_PATH = "/v2/post/publish/video/init/"
CONTENT_INIT_PATH = "/v2/post/publish/content/init/"


def post_url(username: str | None, post_id: str, publish_id: str, *, photo: bool) -> str | None:
    """The post's public page; None while TikTok gave no post id or the username is unknown."""
    if post_id == publish_id or not username:
        return None
    return f"https://www.tiktok.com/@{username}/{'photo' if photo else 'video'}/{post_id}"


@dataclass(frozen=True)
class PostBuilder:
    http: httpx.AsyncClient
    read_media: MediaReader
    media_url: PublicMediaUrl | None
    audited: bool
    pull_from_url: bool
    chunk_bytes: int

    async def video(
        self, session: TikTokSession, request: PublishRequest, creator: CreatorInfo
    ) -> str:
        if len(request.media) != 1 or request.media[0].kind != "video":
            raise ProviderError("invalid_request", "A TikTok video post takes exactly one video.")
        item = request.media[0]
        post_info: dict[str, Any] = {
            "title": request.text,
            "privacy_level": privacy_level(request.options, creator, audited=self.audited),
            **interactions(
                request.options, creator, ("disableComment", "disableDuet", "disableStitch")
            ),
        }
        plan: ChunkPlan | None = None
        if self.pull_from_url:
            source: dict[str, Any] = {
                "source": "PULL_FROM_URL",
                "video_url": await self._link(item, "a video"),
            }
        else:
            plan = ChunkPlan.for_size(item.size_bytes, self.chunk_bytes)
            source = plan.source_info()
        data = await session.call(
            "POST",
            VIDEO_INIT_PATH,
            "starting the video post",
            json={"post_info": post_info, "source_info": source},
        )
        publish_id = _publish_id(data, "starting the video post")
        if plan is not None:
            upload_url = data.get("upload_url")
            if not isinstance(upload_url, str) or not upload_url.startswith("https://"):
                raise ProviderError(
                    "provider_unavailable", "TikTok started the video post without an upload URL."
                )
            await send_chunks(self.http, upload_url, item, plan, self.read_media)
        return publish_id

    async def photo(
        self, session: TikTokSession, request: PublishRequest, creator: CreatorInfo
    ) -> str:
        if not request.media or any(item.kind != "image" for item in request.media):
            raise ProviderError("invalid_request", "A TikTok photo post takes images only.")
        title = request.options.get("title")
        if title is not None and not isinstance(title, str):
            raise ProviderError("invalid_request", "options.title must be a text.")
        post_info: dict[str, Any] = {
            "title": title or "",
            "description": request.text,
            "privacy_level": privacy_level(request.options, creator, audited=self.audited),
            **interactions(request.options, creator, ("disableComment",)),
        }
        images = [await self._link(item, "photos") for item in request.media]
        data = await session.call(
            "POST",
            CONTENT_INIT_PATH,
            "starting the photo post",
            json={
                "post_info": post_info,
                "source_info": {
                    "source": "PULL_FROM_URL",
                    "photo_cover_index": 0,
                    "photo_images": images,
                },
                "post_mode": "DIRECT_POST",
                "media_type": "PHOTO",
            },
        )
        return _publish_id(data, "starting the photo post")

    async def _link(self, item: MediaItem, what: str) -> str:
        if self.media_url is None:
            raise ProviderError(
                "invalid_request",
                f"TikTok fetches {what} from a public link, and this process cannot make "
                "signed media links (PRESSROOM_PUBLIC_URL must be an HTTPS address).",
            )
        return await self.media_url(item)


def _publish_id(data: dict[str, Any], action: str) -> str:
    publish_id = data.get("publish_id")
    if not isinstance(publish_id, str) or not publish_id:
        raise ProviderError(
            "provider_unavailable", f"TikTok answered {action} without a publish id."
        )
    return publish_id
