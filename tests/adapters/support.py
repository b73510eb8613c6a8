"""Shared test doubles for the provider adapter tests: channels, media kept in memory and read
back in small chunks (so every upload really streams), a sleep that only records, a log of
reported credentials, and a multipart parser for asserting uploaded bodies."""

from __future__ import annotations

import email.parser
import email.policy
import io
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from typing import Any

import httpx
from PIL import Image

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import PublishRequest

FIXED_NOW = datetime(2026, 11, 22, 9, 30, 0, 123000, tzinfo=UTC)
IDEMPOTENCY_KEY = "target-0193a1b2:2026-11-22T09:30:00Z"


def fixed_clock() -> datetime:
    return FIXED_NOW


def channel(
    provider: str, credentials: dict[str, Any], handle: str | None = None
) -> ChannelContext:
    return ChannelContext(
        id=uuid.UUID("0193a1b2-0000-7000-8000-000000000001"),
        organization_id=uuid.UUID("0193a1b2-0000-7000-8000-0000000000aa"),
        provider=provider,
        handle=handle,
        simulated=False,
        credentials=credentials,
    )


def png_bytes(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


class MediaShelf:
    """Stored media by id; `read` yields each file in 7-byte chunks."""

    def __init__(self) -> None:
        self.files: dict[uuid.UUID, bytes] = {}
        self.reads = 0

    def add(self, kind: str, mime_type: str, data: bytes) -> MediaItem:
        item = MediaItem(
            id=uuid.uuid4(),
            kind=kind,
            mime_type=mime_type,
            size_bytes=len(data),
            storage_key=f"org/{uuid.uuid4()}",
        )
        self.files[item.id] = data
        return item

    async def read(self, item: MediaItem) -> AsyncIterator[bytes]:
        self.reads += 1
        data = self.files[item.id]
        for start in range(0, len(data), 7):
            yield data[start : start + 7]


def publish_request(
    channel_: ChannelContext,
    text: str,
    *,
    media: tuple[MediaItem, ...] = (),
    options: dict[str, Any] | None = None,
    attempt: int = 1,
    idempotency_key: str = IDEMPOTENCY_KEY,
) -> PublishRequest:
    return PublishRequest(
        channel=channel_,
        target_id=uuid.UUID("0193a1b2-0000-7000-8000-0000000000bb"),
        content_kind="post",
        text=text,
        media=media,
        options=options or {},
        idempotency_key=idempotency_key,
        attempt=attempt,
    )


@dataclass
class RecordedSleep:
    delays: list[float] = field(default_factory=list)

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@dataclass
class CredentialsLog:
    reports: list[dict[str, Any]] = field(default_factory=list)

    async def __call__(self, channel_: ChannelContext, credentials: dict[str, Any]) -> None:
        self.reports.append(credentials)


@dataclass(frozen=True)
class Part:
    name: str
    filename: str | None
    content_type: str | None
    data: bytes


def multipart_parts(request: httpx.Request) -> dict[str, Part]:
    """The parts of a multipart/form-data request body, by field name."""
    head = f"Content-Type: {request.headers['content-type']}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + request.content)
    parts: dict[str, Part] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        filename = part.get_param("filename", header="content-disposition")
        payload = part.get_payload(decode=True)
        assert isinstance(name, str) and isinstance(payload, bytes)
        parts[name] = Part(
            name,
            filename if isinstance(filename, str) else None,
            part.get("content-type") if filename else None,
            payload,
        )
    return parts
