"""Connected social accounts."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey
from sqlalchemy import Index
from sqlalchemy import Integer
from sqlalchemy import String
from sqlalchemy import Text
from sqlalchemy import UniqueConstraint
from sqlalchemy.orm import Mapped
from sqlalchemy.orm import mapped_column

from pressroom.db import Base
from pressroom.db import IdMixin
from pressroom.db import TimestampMixin

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
    # What this account's own server accepts where it differs from the provider's declaration
    # (a Mastodon instance's character limit), read at connect and at each health check; null
    # until then (the declaration's stock limits apply).
    limits: Mapped[dict[str, Any] | None] = mapped_column()
    # Provider tokens, encrypted with the server key; erased on disconnect; never returned.
    credentials_encrypted: Mapped[str | None] = mapped_column(Text)
    connected_at: Mapped[datetime] = mapped_column()
    # A disconnected channel is gone from the API (404) but kept for its history.
    disconnected_at: Mapped[datetime | None] = mapped_column()


class ChannelAuthorization(IdMixin, Base):
    """A channel connection started through OAuth (`startChannelConnection`), waiting for the
    provider to send the person's browser back to the callback. Single use, short-lived, and
    bound to the organization and the member (and key) that started it."""

    __tablename__ = "channel_authorizations"
    __table_args__ = (Index("ix_channel_authorizations_expires_at", "expires_at"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    # Who started it, and with which key: the callback's audit entry is theirs.
    member_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("members.id", ondelete="CASCADE"))
    credential_id: Mapped[uuid.UUID] = mapped_column()
    credential_prefix: Mapped[str] = mapped_column(String(32))
    provider: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(200))
    # Mastodon: the instance's base URL.
    instance: Mapped[str | None] = mapped_column(String(500))
    # Where the browser goes once the channel exists (optional, given at start).
    return_url: Mapped[str | None] = mapped_column(String(2048))
    # SHA-256 of the `state` (the state itself is never stored: it authenticates the callback).
    state_digest: Mapped[str] = mapped_column(String(64), unique=True)
    # The PKCE code verifier (and, for Mastodon, the app's client id and secret) as encrypted
    # JSON.
    secret_encrypted: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column()
    # Set by the first callback that names the state; a second one is refused.
    used_at: Mapped[datetime | None] = mapped_column()


class MastodonApp(IdMixin, Base):
    """Pressroom's app on one Mastodon instance, registered on first use (POST /api/v1/apps)
    and reused for every later connection through the same redirect URI."""

    __tablename__ = "mastodon_apps"
    __table_args__ = (UniqueConstraint("base_url", "redirect_uri"),)

    base_url: Mapped[str] = mapped_column(String(500))
    redirect_uri: Mapped[str] = mapped_column(String(500))
    client_id: Mapped[str] = mapped_column(String(255))
    client_secret_encrypted: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column()


class CredentialRevocation(IdMixin, Base):
    """A disconnected channel's credentials waiting to be revoked at the provider: moved here,
    still encrypted, by the disconnect's transaction, and deleted once the revocation loop
    (channels/worker.py) has told the provider, found it cannot, or given up. Rows are the
    queue: a crash never loses a revocation, and the disconnect never waits for the network."""

    __tablename__ = "credential_revocations"
    __table_args__ = (Index("ix_credential_revocations_next_attempt_at", "next_attempt_at"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    channel_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    provider: Mapped[str] = mapped_column(String(32))
    # The channel's credentials as they were stored (encrypted with the server key).
    credentials_encrypted: Mapped[str] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column()
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None] = mapped_column()
    created_at: Mapped[datetime] = mapped_column()
