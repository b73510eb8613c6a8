"""What the LinkedIn adapter tests share: a member and a Page channel, the adapter on a client
of its own with a fresh credential cache, and readers of what a recorded request sent."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import respx

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.connection import OAuthApp
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.linkedin import LinkedInAdapter

from .support import CredentialsLog
from .support import MediaShelf
from .support import RecordedSleep
from .support import channel

API = "https://api.linkedin.com"
VERSION = "202605"
TOKEN = "AQV-linkedin-access-token-0123"
REFRESH = "AQX-linkedin-refresh-token-4567"
PERSON = "urn:li:person:abc123XYZ"
ORGANIZATION = "urn:li:organization:2414183"
SHARE = "urn:li:share:7100000000000000001"
NOW = 1_795_000_000.0
APP = OAuthApp(
    "linkedin", "li-client", "li-secret", "https://pressroom.example/connect/linkedin/callback"
)


def clock() -> float:
    return NOW


def member_channel(**extra: Any) -> ChannelContext:
    credentials = {"accessToken": TOKEN, "expiresAt": int(NOW) + 50 * 86400, "author": PERSON}
    return channel("linkedin", {**credentials, **extra}, "Ada Lovelace")


def page_channel(**extra: Any) -> ChannelContext:
    credentials = {"accessToken": TOKEN, "expiresAt": int(NOW) + 50 * 86400, "author": ORGANIZATION}
    return channel("linkedin", {**credentials, **extra}, "pressroomhq")


@asynccontextmanager
async def linkedin_adapter(
    shelf: MediaShelf | None = None,
    *,
    app: OAuthApp | None = APP,
    credentials: CredentialsLog | None = None,
    sleep: RecordedSleep | None = None,
    version: str = VERSION,
) -> AsyncIterator[LinkedInAdapter]:
    async with httpx.AsyncClient() as http:
        yield LinkedInAdapter(
            read_media=(shelf or MediaShelf()).read,
            app=app,
            http=http,
            version=version,
            sleep=sleep or RecordedSleep(),
            clock=clock,
            poll_interval=2.0,
            poll_budget=6.0,
            store=CredentialStore(CredentialCache(), credentials),
        )


def sent_json(route: respx.Route, call: int = 0) -> Any:
    return json.loads(route.calls[call].request.content)


def sent_headers(route: respx.Route, call: int = 0) -> httpx.Headers:
    return route.calls[call].request.headers


def linkedin_error(status: int, code: str, message: str) -> httpx.Response:
    return httpx.Response(status, json={"status": status, "code": code, "message": message})


def created(urn: str = SHARE) -> httpx.Response:
    return httpx.Response(201, headers={"x-restli-id": urn})
