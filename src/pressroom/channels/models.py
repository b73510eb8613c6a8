"""Connected social accounts."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from pressroom.db import Base, IdMixin, TimestampMixin

HEALTH_STATES = ("healthy", "degraded", "reconnect_required")


class Channel(IdMixin, TimestampMixin, Base):
    __tablename__ = "channels"
    __table_args__ = (Index("ix_channels_org_created", "organization_id", "created_at", "id"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    provider: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(200))
    handle: Mapped[str | None] = mapped_column(String(200))
    # Validated by the provider's real declaration, published by the sandbox simulator.
    simulated: Mapped[bool] = mapped_column(default=False)
    health_state: Mapped[str] = mapped_column(String(32), default="healthy")
    health_reason: Mapped[str | None] = mapped_column(String(500))
    health_checked_at: Mapped[datetime | None] = mapped_column()
    # Provider tokens, encrypted with the server key; erased on disconnect; never returned.
    credentials_encrypted: Mapped[str | None] = mapped_column(Text)
    connected_at: Mapped[datetime] = mapped_column()
    # A disconnected channel is gone from the API (404) but kept for its history.
    disconnected_at: Mapped[datetime | None] = mapped_column()
