"""Keyset pagination on (createdAt, id), newest first, with opaque signed cursors."""

from __future__ import annotations

import base64
import binascii
import hmac
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated
from typing import Any
from typing import Generic
from typing import Self
from typing import TypeVar

from fastapi import Depends
from fastapi import Query
from pydantic import Field
from sqlalchemy import Select
from sqlalchemy import tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.kit.crypto import SecretBox
from pressroom.kit.errors import PressroomError
from pressroom.kit.errors import field_error
from pressroom.kit.schema import APIModel
from pressroom.kit.schema import as_utc

T = TypeVar("T")
MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 25
_MAC_BYTES = 16


@dataclass(frozen=True)
class PageParams:
    page_size: int
    cursor: str | None


# A coroutine, like every dependency: FastAPI runs a plain function in the thread pool, and
# that hop cost more CPU than the rest of a request's parameters together.
async def _page_params(
    page_size: Annotated[
        int,
        Query(
            alias="pageSize",
            ge=1,
            le=MAX_PAGE_SIZE,
            description=f"Items per page, 1-{MAX_PAGE_SIZE}.",
        ),
    ] = DEFAULT_PAGE_SIZE,
    cursor: Annotated[
        str | None,
        Query(
            max_length=512,
            description="The `nextCursor` of the previous page; opaque.",
        ),
    ] = None,
) -> PageParams:
    return PageParams(page_size=page_size, cursor=cursor)


Pagination = Annotated[PageParams, Depends(_page_params)]


class Collection(APIModel, Generic[T]):
    """A page of a collection, newest first."""

    items: list[T]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page."
    )

    @classmethod
    def page(cls, found: tuple[list[Any], str | None], render: Callable[[Any], T]) -> Self:
        """The page of `found` (rows and the next cursor, as `paginate` returns them), each
        row shown as `render` shows it."""
        rows, next_cursor = found
        return cls(items=[render(row) for row in rows], next_cursor=next_cursor)


def sign_cursor(box: SecretBox, collection: str, payload: bytes) -> str:
    """An opaque cursor carrying `payload`, signed for `collection` (a cursor of one collection
    is no cursor of another)."""
    signed = payload + _cursor_mac(box, collection, payload)
    return base64.urlsafe_b64encode(signed).decode().rstrip("=")


def open_cursor(box: SecretBox, collection: str, cursor: str) -> bytes:
    """The payload of a cursor signed for `collection`; a 400 for anything this server did not
    issue."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raise invalid_cursor() from None
    payload, mac = raw[:-_MAC_BYTES], raw[-_MAC_BYTES:]
    expected = _cursor_mac(box, collection, payload)
    if len(raw) <= _MAC_BYTES or not hmac.compare_digest(mac, expected):
        raise invalid_cursor()
    return payload


def invalid_cursor() -> PressroomError:
    return field_error("cursor", "invalid", "is not a cursor issued for this collection")


def _cursor_mac(box: SecretBox, collection: str, payload: bytes) -> bytes:
    return box.mac(collection.encode() + b"\0" + payload)[:_MAC_BYTES]


def encode_cursor(box: SecretBox, collection: str, created_at: datetime, row_id: uuid.UUID) -> str:
    return sign_cursor(box, collection, f"{as_utc(created_at).isoformat()}|{row_id}".encode())


def decode_cursor(box: SecretBox, collection: str, cursor: str) -> tuple[datetime, uuid.UUID]:
    """The position a cursor names; a 400 for anything this server did not issue."""
    payload = open_cursor(box, collection, cursor)
    try:
        created_text, id_text = payload.decode().split("|")
        return as_utc(datetime.fromisoformat(created_text)), uuid.UUID(id_text)
    except ValueError:
        raise invalid_cursor() from None


async def paginate(
    session: AsyncSession,
    statement: Select[Any],
    *,
    model: Any,
    params: PageParams,
    box: SecretBox,
    collection: str,
    entities: bool = True,
) -> tuple[list[Any], str | None]:
    """One page of `statement` and the next cursor. The statement selects `model` entities,
    or with `entities=False` plain rows of its columns (with `created_at` and `id`)."""
    if params.cursor:
        created_at, row_id = decode_cursor(box, collection, params.cursor)
        statement = statement.where(tuple_(model.created_at, model.id) < (created_at, row_id))
    statement = statement.order_by(model.created_at.desc(), model.id.desc()).limit(
        params.page_size + 1
    )
    result = await session.execute(statement)
    return page_of(
        list(result.scalars().all() if entities else result.all()), params, box, collection
    )


def page_of(
    rows: list[Any], params: PageParams, box: SecretBox, collection: str
) -> tuple[list[Any], str | None]:
    """The page of `rows` (up to one more than the page size, newest first, each with
    `created_at` and `id`) and the cursor of the next page, if there is one."""
    if len(rows) <= params.page_size:
        return rows, None
    rows = rows[: params.page_size]
    last = rows[-1]
    return rows, encode_cursor(box, collection, last.created_at, last.id)
