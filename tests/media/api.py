"""Calling the media API in tests, and looking at what an upload left behind."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
from fastapi import FastAPI
from sqlalchemy import func
from sqlalchemy import select

from pressroom.audit.models import AuditEntry
from pressroom.db import unit_of_work
from pressroom.media.models import MediaAsset
from pressroom.runtime import Runtime
from pressroom.webhooks.models import Event
from tests.factories import Tenant

from .factories import CONTENT_TYPE
from .factories import FormPart
from .factories import multipart_body

MEDIA = "/api/v1/media"


async def upload(
    client: httpx.AsyncClient,
    tenant: Tenant,
    parts: Sequence[FormPart],
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    return await client.post(
        MEDIA,
        content=multipart_body(parts),
        headers={**tenant.headers, "Content-Type": CONTENT_TYPE, **(headers or {})},
    )


async def upload_stream(
    client: httpx.AsyncClient, tenant: Tenant, body: AsyncIterable[bytes]
) -> httpx.Response:
    """An upload whose body the server pulls chunk by chunk (no Content-Length)."""
    return await client.post(
        MEDIA, content=body, headers={**tenant.headers, "Content-Type": CONTENT_TYPE}
    )


def files_under(directory: Path) -> list[Path]:
    if not directory.exists():
        return []
    return [path for path in directory.rglob("*") if path.is_file()]


def stored_files(runtime: Runtime) -> list[Path]:
    """Files in the local media storage (the default: `<data dir>/media`)."""
    return files_under(runtime.settings.resolved_data_dir / "media")


def staged_files(runtime: Runtime) -> list[Path]:
    return files_under(runtime.settings.resolved_data_dir / "staging")


async def asset_count(runtime: Runtime, organization_id: uuid.UUID) -> int:
    async with unit_of_work(runtime.sessions) as session:
        count = await session.scalar(
            select(func.count())
            .select_from(MediaAsset)
            .where(MediaAsset.organization_id == organization_id)
        )
    return int(count or 0)


async def media_events(runtime: Runtime, organization_id: uuid.UUID) -> list[Event]:
    async with unit_of_work(runtime.sessions) as session:
        rows = await session.scalars(
            select(Event)
            .where(Event.organization_id == organization_id, Event.type == "media.created.v1")
            .order_by(Event.created_at, Event.id)
        )
        return list(rows)


async def upload_audit_entries(runtime: Runtime, organization_id: uuid.UUID) -> list[AuditEntry]:
    async with unit_of_work(runtime.sessions) as session:
        rows = await session.scalars(
            select(AuditEntry)
            .where(
                AuditEntry.organization_id == organization_id,
                AuditEntry.operation_id == "uploadMedia",
            )
            .order_by(AuditEntry.sequence)
        )
        return list(rows)


async def assert_nothing_stored(runtime: Runtime, tenant: Tenant) -> None:
    """No row, no stored file, no staged file left, no event."""
    assert await asset_count(runtime, tenant.organization_id) == 0
    assert stored_files(runtime) == []
    assert staged_files(runtime) == []
    assert await media_events(runtime, tenant.organization_id) == []


async def asgi_call(
    app: FastAPI,
    method: str,
    path: str,
    headers: dict[str, str],
    incoming: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Call the application as a server would and return every message it sent: unlike
    httpx's ASGI transport, this shows how a body was streamed and lets a client vanish."""
    pending = list(incoming or [{"type": "http.request", "body": b"", "more_body": False}])
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop(0)
        await anyio.sleep_forever()  # a client that stays connected until the response ends
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"testserver")]
        + [(name.lower().encode(), value.encode()) for name, value in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    await app(scope, receive, send)
    return sent
