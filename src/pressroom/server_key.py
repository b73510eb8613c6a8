"""The server key's check value: one row written by the first node that starts on a database,
compared by every node after it. A node whose key differs refuses to start, instead of running
and failing every decryption (webhook signing secrets, provider tokens) until someone notices."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from sqlalchemy import Integer
from sqlalchemy import String
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlalchemy.orm import Mapped
from sqlalchemy.orm import mapped_column

from pressroom.db import Base
from pressroom.db import dialect_name
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.kit.crypto import SecretBox

# The one row's id: the primary key is the unique constraint that lets concurrent first
# starts insert-if-absent without a read-then-write.
_ROW = 1


class ServerKeyCheck(Base):
    __tablename__ = "server_key_check"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    # SecretBox.key_check_value() of the key the database's secrets are encrypted with.
    check_value: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column()


class ServerKeyMismatch(Exception):
    """This node's server key is not the one the database's secrets are encrypted with."""


async def verify_server_key(
    sessions: async_sessionmaker[AsyncSession],
    box: SecretBox,
    *,
    key_file: Path | None,
) -> None:
    """Record this key's check value if the database has none yet; otherwise require that it
    matches. `key_file` is the generated key's file when PRESSROOM_SECRET_KEY is unset."""
    mine = box.key_check_value()
    async with unit_of_work(sessions) as session:
        insert = pg_insert if dialect_name(session) == "postgresql" else sqlite_insert
        await session.execute(
            insert(ServerKeyCheck)
            .values(id=_ROW, check_value=mine, created_at=utcnow())
            .on_conflict_do_nothing(index_elements=["id"])
        )
        stored = await session.scalar(
            select(ServerKeyCheck.check_value).where(ServerKeyCheck.id == _ROW)
        )
    if stored == mine:
        return
    # Neither key is named: the message goes to logs and terminals.
    source = (
        f"the key generated into {key_file} (PRESSROOM_SECRET_KEY is unset)"
        if key_file is not None
        else "PRESSROOM_SECRET_KEY"
    )
    raise ServerKeyMismatch(
        f"the server key does not match this database: its secrets were encrypted with another "
        f"key than {source}. Set PRESSROOM_SECRET_KEY to the key the other nodes use (the same "
        "value on every node); nothing was started or changed."
    )
