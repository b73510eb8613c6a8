"""Webhook endpoints, the event outbox, deliveries and their attempts."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey
from sqlalchemy import Index
from sqlalchemy import Integer
from sqlalchemy import String
from sqlalchemy import Text
from sqlalchemy.orm import Mapped
from sqlalchemy.orm import mapped_column

from pressroom.db import Base
from pressroom.db import IdMixin
from pressroom.db import TimestampMixin


class WebhookEndpoint(IdMixin, TimestampMixin, Base):
    __tablename__ = "webhook_endpoints"
    __table_args__ = (
        Index("ix_webhook_endpoints_org_created", "organization_id", "created_at", "id"),
    )

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    url: Mapped[str] = mapped_column(String(2048))
    events: Mapped[dict[str, Any]] = mapped_column()  # {"events": [...]}
    description: Mapped[str | None] = mapped_column(String(500))
    enabled: Mapped[bool] = mapped_column(default=True)
    # The signing secret, encrypted with the server key; only last4 is ever shown.
    secret_encrypted: Mapped[str] = mapped_column(Text)
    secret_last4: Mapped[str] = mapped_column(String(4))
    secret_created_at: Mapped[datetime] = mapped_column()
    # During a rotation grace the previous secret also signs, until it expires.
    previous_secret_encrypted: Mapped[str | None] = mapped_column(Text)
    previous_expires_at: Mapped[datetime | None] = mapped_column()


class Event(IdMixin, Base):
    """One event, written in the transaction of its cause (the outbox)."""

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_expires_at", "expires_at"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    type: Mapped[str] = mapped_column(String(64))
    # The exact bytes that are signed and sent (compact JSON), fixed at creation.
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column()


class Delivery(IdMixin, Base):
    """One event to one endpoint; the row is also the queue entry (lease columns)."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_endpoint_created", "endpoint_id", "created_at", "id"),
        Index("ix_webhook_deliveries_expires_at", "expires_at"),
        # Deleting an event (the purge) cascades here: without it each delete scans the table.
        Index("ix_webhook_deliveries_event_id", "event_id"),
        # The sweeper finds unexpired rows past their expiry without rereading expired ones.
        Index("ix_webhook_deliveries_status_expires", "status", "expires_at"),
    )

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    endpoint_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("webhook_endpoints.id", ondelete="CASCADE")
    )
    event_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    event_type: Mapped[str] = mapped_column(String(64))
    # pending | processing | succeeded | exhausted | expired
    status: Mapped[str] = mapped_column(String(16))
    # The trigger of the next attempt: scheduled | replay | test.
    next_trigger: Mapped[str] = mapped_column(String(16), default="scheduled")
    response_status: Mapped[int | None] = mapped_column(Integer)
    latency_ms: Mapped[int | None] = mapped_column(Integer)
    attempt_count: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column()
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None] = mapped_column()
    created_at: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column()


class DeliveryAttempt(IdMixin, Base):
    __tablename__ = "webhook_delivery_attempts"

    delivery_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE"), index=True
    )
    number: Mapped[int] = mapped_column(Integer)
    trigger: Mapped[str] = mapped_column(String(16))  # scheduled | replay | test
    started_at: Mapped[datetime] = mapped_column()
    response_status: Mapped[int | None] = mapped_column(Integer)
    latency_ms: Mapped[int | None] = mapped_column(Integer)
    outcome: Mapped[str] = mapped_column(String(16))  # succeeded | failed
    error_code: Mapped[str | None] = mapped_column(String(64))
    error_message: Mapped[str | None] = mapped_column(String(500))
