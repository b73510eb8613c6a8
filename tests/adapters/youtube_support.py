"""What the YouTube adapter tests share: the deployment's app, a channel with a fresh token, the
adapter on its own client, and Google's error shape."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import MediaItem
from pressroom.providers.connection import OAuthApp
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.youtube import YouTubeAdapter
from pressroom.providers.youtube.upload import UploadSessions

from .support import CredentialsLog
from .support import MediaShelf
from .support import channel
from .support import fixed_clock

API = "https://www.googleapis.com/youtube/v3"
UPLOAD = "https://www.googleapis.com/upload/youtube/v3/videos"
SESSION_URI = f"{UPLOAD}?uploadType=resumable&part=snippet,status&upload_id=xa298sd_f"
TOKEN_URL = "https://oauth2.googleapis.com/token"
APP = OAuthApp(
    provider="youtube",
    client_id="1234-abc.apps.googleusercontent.com",
    client_secret="GOCSPX-app-secret",
    redirect_uri="https://pressroom.example/connect/youtube/callback",
)
ACCESS_TOKEN = "ya29.access-token-0123456789"
REFRESH_TOKEN = "1//refresh-token-0123456789"
CHANNEL_ID = "UCabcdefghijklmnopqrstuv"
VIDEO_ID = "dQw4w9WgXcQ"
NOW = int(fixed_clock().timestamp())
CHUNK = 256 * 1024


def youtube_channel(**extra: Any) -> ChannelContext:
    credentials = {
        "accessToken": ACCESS_TOKEN,
        "refreshToken": REFRESH_TOKEN,
        "expiresAt": NOW + 3000,
        "channelId": CHANNEL_ID,
        **extra,
    }
    return channel("youtube", credentials, "@pressroomhq")


@asynccontextmanager
async def youtube_adapter(
    shelf: MediaShelf,
    *,
    log: CredentialsLog | None = None,
    sessions: UploadSessions | None = None,
    app: OAuthApp | None = APP,
    library: dict[uuid.UUID, MediaItem] | None = None,
) -> AsyncIterator[YouTubeAdapter]:
    """`library`: the organization's media the adapter may look up by id (thumbnails)."""
    items = library or {}

    async def find_media(media_id: uuid.UUID) -> MediaItem | None:
        return items.get(media_id)

    async with httpx.AsyncClient() as http:
        yield YouTubeAdapter(
            app=app,
            read_media=shelf.read,
            find_media=find_media,
            on_credentials_changed=log,
            http=http,
            credential_cache=CredentialCache(),
            upload_sessions=sessions or UploadSessions(),
            clock=fixed_clock,
            chunk_bytes=CHUNK,
        )


def google_error(status: int, reason: str, message: str) -> httpx.Response:
    return httpx.Response(
        status,
        json={
            "error": {
                "code": status,
                "message": message,
                "errors": [{"message": message, "domain": "youtube.video", "reason": reason}],
            }
        },
    )


def video_answer(video_id: str = VIDEO_ID) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "kind": "youtube#video",
            "id": video_id,
            "snippet": {"title": "Launch day"},
            "status": {"uploadStatus": "uploaded", "privacyStatus": "public"},
        },
    )


def incomplete(last: int | None) -> httpx.Response:
    """308 Resume Incomplete, holding bytes 0..last (nothing when None)."""
    headers = {"Range": f"bytes=0-{last}"} if last is not None else {}
    return httpx.Response(308, headers=headers)
