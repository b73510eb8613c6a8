"""The sandbox network's own record of what it received.

The simulator must behave like a real network across processes: a publish re-sent with the
same idempotency key returns the post it already made, several worker processes share one
"network", and tests count exactly how often each target reached it. So its posts live in
the database, keyed by the idempotency key, and not in process memory."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Index
from sqlalchemy import Integer
from sqlalchemy import String
from sqlalchemy import Text
from sqlalchemy.orm import Mapped
from sqlalchemy.orm import mapped_column

from pressroom.db import Base
from pressroom.db import IdMixin


class SandboxPublication(IdMixin, Base):
    __tablename__ = "sandbox_publications"
    __table_args__ = (Index("ix_sandbox_publications_target", "target_id"),)

    # The key the publisher sent; a second publish with it returns this row.
    idempotency_key: Mapped[str] = mapped_column(String(255), unique=True)
    provider_post_id: Mapped[str] = mapped_column(String(64), unique=True)
    # What the simulated network knows about its caller. No foreign keys: this table stands
    # for another company's servers, which outlive our rows.
    organization_id: Mapped[uuid.UUID] = mapped_column()
    channel_id: Mapped[uuid.UUID] = mapped_column()
    target_id: Mapped[uuid.UUID] = mapped_column()
    # The provider the channel is for: `sandbox`, or the real one of a --simulated channel.
    provider: Mapped[str] = mapped_column(String(32))
    content_kind: Mapped[str] = mapped_column(String(32))
    text: Mapped[str] = mapped_column(Text)
    # The first comment posted under the post (`options.firstComment`), if any.
    first_comment: Mapped[str | None] = mapped_column(Text)
    media_count: Mapped[int] = mapped_column(Integer)
    published_at: Mapped[datetime] = mapped_column()
    # How many publish calls carried this key (1 unless a retry re-sent it).
    calls: Mapped[int] = mapped_column(Integer, default=1)
    deleted_at: Mapped[datetime | None] = mapped_column()
