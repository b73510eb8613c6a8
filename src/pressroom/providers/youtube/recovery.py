"""Finding the video an earlier attempt uploaded, when this process no longer has its upload
session (the worker crashed, or another process took the retry).

YouTube has no idempotency key and no way to look a video up by anything of ours, so a retry
(`attempt > 1`) without a remembered session looks through the channel's latest uploads: the
channel's uploads playlist (`GET /channels?part=contentDetails&mine=true` ->
`contentDetails.relatedPlaylists.uploads`), then its newest items (`GET /playlistItems
?part=snippet&playlistId=...&maxResults=RECENT_UPLOADS`). An item added within `RECENT_WINDOW` with
the same title and description is taken as that attempt's video. The two reads cost 2 quota units
against videos.insert's 1,600. A failure to read them starts a new upload: a lost read must not
block the publish, and the worst case is the duplicate the lookup tries to avoid.
"""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta
from typing import Any

from pressroom.providers.adapter import ProviderError
from pressroom.providers.youtube.oauth import API
from pressroom.providers.youtube.session import YouTubeSession

RECENT_UPLOADS = 10
RECENT_WINDOW = timedelta(days=1)


async def find_uploaded(
    session: YouTubeSession, resource: dict[str, Any], now: datetime
) -> str | None:
    """The id of a just-uploaded video with this resource's title and description, if any."""
    action = "looking for the video an earlier attempt uploaded"
    try:
        channels = await session.call(
            "GET", f"{API}/channels", action, params={"part": "contentDetails", "mine": "true"}
        )
        playlist = _uploads_playlist(channels)
        if playlist is None:
            return None
        items = await session.call(
            "GET",
            f"{API}/playlistItems",
            action,
            params={"part": "snippet", "playlistId": playlist, "maxResults": str(RECENT_UPLOADS)},
        )
    except ProviderError:
        return None
    wanted = resource["snippet"]
    for item in items.get("items") or []:
        snippet = item.get("snippet") if isinstance(item, dict) else None
        if not isinstance(snippet, dict):
            continue
        video = snippet.get("resourceId")
        video_id = video.get("videoId") if isinstance(video, dict) else None
        if (
            isinstance(video_id, str)
            and snippet.get("title") == wanted["title"]
            and snippet.get("description") == wanted["description"]
            and _recent(snippet.get("publishedAt"), now)
        ):
            return video_id
    return None


def _uploads_playlist(body: dict[str, Any]) -> str | None:
    items = body.get("items")
    first = items[0] if isinstance(items, list) and items else None
    details = first.get("contentDetails") if isinstance(first, dict) else None
    playlists = details.get("relatedPlaylists") if isinstance(details, dict) else None
    uploads = playlists.get("uploads") if isinstance(playlists, dict) else None
    return uploads if isinstance(uploads, str) and uploads else None


def _recent(value: object, now: datetime) -> bool:
    if not isinstance(value, str):
        return False
    try:
        added = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return added.tzinfo is not None and now - added <= RECENT_WINDOW
