"""The audit ledger: append-only, hash-chained per organization."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey
from sqlalchemy import Integer
from sqlalchemy import String
from sqlalchemy import UniqueConstraint
from sqlalchemy.orm import Mapped
from sqlalchemy.orm import mapped_column

from pressroom.db import Base
from pressroom.db import IdMixin


class AuditEntry(IdMixin, Base):
    __tablename__ = "audit_entries"
    __table_args__ = (UniqueConstraint("organization_id", "sequence"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    sequence: Mapped[int] = mapped_column(Integer)
    occurred_at: Mapped[datetime] = mapped_column()
    member_id: Mapped[uuid.UUID | None] = mapped_column()
    credential_id: Mapped[uuid.UUID | None] = mapped_column()
    # The key prefix, or "cli" for an action of the command line.
    credential_prefix: Mapped[str] = mapped_column(String(16))
    operation_id: Mapped[str] = mapped_column(String(64))
    resource_type: Mapped[str | None] = mapped_column(String(32))
    resource_id: Mapped[str | None] = mapped_column(String(64))
    request_id: Mapped[str | None] = mapped_column(String(128))
    outcome_status: Mapped[int] = mapped_column(Integer)
    changes: Mapped[dict[str, Any]] = mapped_column()
    previous_digest: Mapped[str] = mapped_column(String(64))
    digest: Mapped[str] = mapped_column(String(64))


class AuditHead(Base):
    """The chain's tip per organization; locking this row serializes appends."""

    __tablename__ = "audit_heads"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    sequence: Mapped[int] = mapped_column(Integer)
    digest: Mapped[str] = mapped_column(String(64))
