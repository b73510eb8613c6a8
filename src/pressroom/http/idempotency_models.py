"""Stored outcomes of requests made with an Idempotency-Key."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey
from sqlalchemy import Integer
from sqlalchemy import String
from sqlalchemy import Text
from sqlalchemy import UniqueConstraint
from sqlalchemy.orm import Mapped
from sqlalchemy.orm import mapped_column

from pressroom.db import Base
from pressroom.db import IdMixin


class IdempotencyRecord(IdMixin, Base):
    __tablename__ = "idempotency_records"
    # The unique constraint, not a read-then-write, is what makes concurrent claims safe.
    __table_args__ = (UniqueConstraint("organization_id", "key"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    key: Mapped[str] = mapped_column(String(255))
    operation_id: Mapped[str] = mapped_column(String(64))
    fingerprint: Mapped[str] = mapped_column(String(64))
    # in_progress while the first request runs, then done with its stored response.
    state: Mapped[str] = mapped_column(String(16))
    status_code: Mapped[int | None] = mapped_column(Integer)
    # The response body; encrypted with the server key when it holds a secret.
    body: Mapped[str | None] = mapped_column(Text)
    body_encrypted: Mapped[bool] = mapped_column(default=False)
    content_type: Mapped[str | None] = mapped_column(String(100))
    location: Mapped[str | None] = mapped_column(String(2048))
    created_at: Mapped[datetime] = mapped_column(index=True)
    locked_until: Mapped[datetime] = mapped_column()
