"""Recorded TikTok API exchanges shared by the TikTok adapter tests.

Shapes follow developers.tiktok.com: the v2 answer envelope `{"data", "error": {"code",
"message", "log_id"}}` (tiktok-api-v2-error-handling), the Content Posting API reference
(query-creator-info, direct-post, photo-post, get-video-status), the media transfer guide,
tiktok-api-v2-video-query and oauth-user-access-token-management."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from pressroom.providers.adapter import MediaItem
from pressroom.providers.connection import OAuthApp
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.tiktok import TikTokAdapter
from pressroom.providers.tiktok.progress import PendingPublishes

from .support import CredentialsLog
from .support import MediaShelf
from .support import RecordedSleep
from .support import channel
from .support import fixed_clock

API = "https://open.tiktokapis.com"
TOKEN_URL = f"{API}/v2/oauth/token/"
CREATOR_URL = f"{API}/v2/post/publish/creator_info/query/"
VIDEO_INIT_URL = f"{API}/v2/post/publish/video/init/"
CONTENT_INIT_URL = f"{API}/v2/post/publish/content/init/"
STATUS_URL = f"{API}/v2/post/publish/status/fetch/"
USER_URL = f"{API}/v2/user/info/"
QUERY_URL = f"{API}/v2/video/query/"
UPLOAD_URL = "https://open-upload.tiktokapis.com/video/?upload_id=67890&upload_token=Xza123"
NOW = int(fixed_clock().timestamp())
DAY = 86400
TOKEN = "act.example12345Example12345Example"
REFRESH = "rft.example12345Example12345Example"
OPEN_ID = "723f24d7-e717-40f8-a2b6-cb8464cd23b4"
PUBLISH_ID = "v_pub_file~v2-1.7343513837296895754"
VIDEO_ID = "7343513900002345678"
APP = OAuthApp(
    provider="tiktok",
    client_id="awx4bq7tk1example",
    client_secret="tiktok-client-secret-1",
    redirect_uri="https://pressroom.example/connect/tiktok/callback",
)
CREDENTIALS: dict[str, Any] = {
    "accessToken": TOKEN,
    "expiresAt": NOW + 20 * 3600,
    "refreshToken": REFRESH,
    "refreshExpiresAt": NOW + 300 * DAY,
    "openId": OPEN_ID,
    "username": "pressroom.news",
}
CHANNEL = channel("tiktok", CREDENTIALS, handle="@pressroom.news")


def ok(data: dict[str, Any], status: int = 200, **headers: str) -> httpx.Response:
    error = {"code": "ok", "message": "", "log_id": "202411220930001234ABCDEF"}
    return httpx.Response(status, json={"data": data, "error": error}, headers=headers)


def failed(code: str, message: str, status: int = 400, **headers: str) -> httpx.Response:
    error = {"code": code, "message": message, "log_id": "202411220930001234ABCDEF"}
    return httpx.Response(status, json={"data": {}, "error": error}, headers=headers)


def creator_info(
    levels: tuple[str, ...] = ("PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"),
    **flags: bool,
) -> httpx.Response:
    data: dict[str, Any] = {
        "creator_avatar_url": "https://p16.tiktokcdn.com/avatar.jpeg",
        "creator_username": "pressroom.news",
        "creator_nickname": "Pressroom",
        "privacy_level_options": list(levels),
        "comment_disabled": False,
        "duet_disabled": False,
        "stitch_disabled": False,
        "max_video_post_duration_sec": 600,
    }
    data.update(flags)
    return ok(data)


def status(state: str, *, post_ids: list[int] | None = None, reason: str = "") -> httpx.Response:
    data: dict[str, Any] = {"status": state, "publicaly_available_post_id": post_ids or []}
    if reason:
        data["fail_reason"] = reason
    return ok(data)


def body(request: httpx.Request) -> Any:
    return json.loads(request.content)


def form(request: httpx.Request) -> dict[str, str]:
    fields = parse_qs(request.content.decode(), keep_blank_values=True)
    return {key: values[0] for key, values in fields.items()}


async def signed_url(item: MediaItem) -> str:
    return f"https://media.pressroom.example/m/{item.id}?expires=1795000000&sig=c2lnbmVk"


def build_adapter(
    shelf: MediaShelf,
    log: CredentialsLog,
    sleep: RecordedSleep,
    **overrides: Any,
) -> TikTokAdapter:
    options: dict[str, Any] = {
        "app": APP,
        "read_media": shelf.read,
        "media_url": signed_url,
        "on_credentials_changed": log,
        "credential_cache": CredentialCache(),
        "pending": PendingPublishes(clock=lambda: float(NOW)),
        "sleep": sleep,
        "clock": fixed_clock,
        "chunk_bytes": 10,
        "poll_interval": 5.0,
        "processing_timeout": 10.0,
    }
    options.update(overrides)
    return TikTokAdapter(**options)


@pytest.fixture(name="shelf")
def shelf_fixture() -> MediaShelf:
    return MediaShelf()


@pytest.fixture(name="log")
def log_fixture() -> CredentialsLog:
    return CredentialsLog()


@pytest.fixture(name="sleep")
def sleep_fixture() -> RecordedSleep:
    return RecordedSleep()


@pytest.fixture(name="adapter")
async def adapter_fixture(
    shelf: MediaShelf, log: CredentialsLog, sleep: RecordedSleep
) -> AsyncIterator[TikTokAdapter]:
    tiktok = build_adapter(shelf, log, sleep)
    yield tiktok
    await tiktok.aclose()
