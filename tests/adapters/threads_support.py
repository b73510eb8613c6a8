"""Recorded Threads API exchanges shared by the Threads adapter tests.

Shapes follow developers.facebook.com/docs/threads: posts (POST /{threads-user-id}/threads ->
`{"id"}`, POST /{threads-user-id}/threads_publish with `creation_id` -> `{"id"}`),
troubleshooting (GET /{threads-container-id}?fields=id,status,error_message), overview
(GET /{threads-user-id}/threads_publishing_limit), the Graph error object
(graph-api/guides/error-handling) and get-started/long-lived-tokens."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from pressroom.providers.adapter import MediaItem
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.threads import ThreadsAdapter
from pressroom.providers.threads.progress import ProgressBook

from .support import CredentialsLog
from .support import MediaShelf
from .support import RecordedSleep
from .support import fixed_clock

GRAPH = "https://graph.threads.net"
API = f"{GRAPH}/v1.0"
USER_ID = "17841405309211844"
NOW = int(fixed_clock().timestamp())
DAY = 86400
TOKEN = "THAAG-long-lived-1"
CREDENTIALS: dict[str, Any] = {
    "accessToken": TOKEN,
    "expiresAt": NOW + 50 * DAY,
    "userId": USER_ID,
    "username": "pressroom",
}
POST_ID = "18050206876707110"
PERMALINK = "https://www.threads.net/@pressroom/post/C_aBcDeFgHi"


def form(request: httpx.Request) -> dict[str, str]:
    """A urlencoded request body, one value a field."""
    fields = parse_qs(request.content.decode(), keep_blank_values=True)
    return {key: values[0] for key, values in fields.items()}


def query(request: httpx.Request) -> dict[str, str]:
    return dict(request.url.params)


def answer(body: dict[str, Any], status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, json=body, headers=headers)


def container_status(state: str, container_id: str, message: str | None = None) -> httpx.Response:
    body = {"status": state, "id": container_id}
    if message is not None:
        body["error_message"] = message
    return answer(body)


def graph_error(
    code: int,
    message: str,
    *,
    status: int = 400,
    subcode: int | None = None,
    user_msg: str | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    error: dict[str, Any] = {
        "message": message,
        "type": "OAuthException",
        "code": code,
        "fbtrace_id": "AbCdEfGh123",
    }
    if subcode is not None:
        error["error_subcode"] = subcode
    if user_msg is not None:
        error["error_user_msg"] = user_msg
    return httpx.Response(status, json={"error": error}, headers=headers or {})


def publishing_limit(used: int = 4, reply_used: int | None = None) -> httpx.Response:
    usage: dict[str, Any] = {
        "quota_usage": used,
        "config": {"quota_total": 250, "quota_duration": DAY},
    }
    if reply_used is not None:
        usage["reply_quota_usage"] = reply_used
        usage["reply_config"] = {"quota_total": 1000, "quota_duration": DAY}
    return answer({"data": [usage]})


async def signed_url(item: MediaItem) -> str:
    return f"https://media.pressroom.example/m/{item.id}?expires=1795000000&sig=c2lnbmVk"


@pytest.fixture(name="shelf")
def shelf_fixture() -> MediaShelf:
    return MediaShelf()


@pytest.fixture(name="log")
def log_fixture() -> CredentialsLog:
    return CredentialsLog()


@pytest.fixture(name="sleep")
def sleep_fixture() -> RecordedSleep:
    return RecordedSleep()


@pytest.fixture(name="progress")
def progress_fixture() -> ProgressBook:
    return ProgressBook(clock=lambda: float(NOW))


@pytest.fixture(name="adapter")
async def adapter_fixture(
    log: CredentialsLog, sleep: RecordedSleep, progress: ProgressBook
) -> AsyncIterator[ThreadsAdapter]:
    threads = ThreadsAdapter(
        media_url=signed_url,
        on_credentials_changed=log,
        credential_cache=CredentialCache(),
        progress=progress,
        sleep=sleep,
        clock=fixed_clock,
        poll_interval=5.0,
        processing_timeout=10.0,
    )
    yield threads
    await threads.aclose()
