"""Logical posts, their campaign tags and topics, and their per-channel targets."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any
from typing import get_args

from sqlalchemy import Boolean
from sqlalchemy import ForeignKey
from sqlalchemy import Index
from sqlalchemy import Integer
from sqlalchemy import String
from sqlalchemy import Text
from sqlalchemy import text
from sqlalchemy.orm import Mapped
from sqlalchemy.orm import mapped_column

from pressroom.db import Base
from pressroom.db import IdMixin
from pressroom.db import TimestampMixin
from pressroom.posts.schemas import ApprovalStatus
from pressroom.posts.schemas import PostStatus
from pressroom.posts.schemas import TargetStatus

# The statuses are declared once, as the wire types; these are the same lists as values.
POST_STATUSES: tuple[str, ...] = get_args(PostStatus)
TARGET_STATUSES: tuple[str, ...] = get_args(TargetStatus)
APPROVAL_STATUSES: tuple[str, ...] = get_args(ApprovalStatus)


class Post(IdMixin, TimestampMixin, Base):
    __tablename__ = "posts"
    __table_args__ = (Index("ix_posts_org_created", "organization_id", "created_at", "id"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    text: Mapped[str | None] = mapped_column(Text)
    media_ids: Mapped[dict[str, Any]] = mapped_column()  # {"ids": [...]}
    scheduled_at: Mapped[datetime | None] = mapped_column()
    status: Mapped[str] = mapped_column(String(32))
    # What the author asked for: `draft` (nothing yet), `scheduled` (at scheduled_at) or `now`
    # (publishNow). With the approval gate it decides what an unpublished target becomes.
    publish_mode: Mapped[str] = mapped_column(String(16), default="draft", server_default="draft")
    # The AI model that wrote the text; null when a person did.
    model: Mapped[str | None] = mapped_column(String(100))
    approval_required: Mapped[bool] = mapped_column(Boolean, default=False)
    approval_status: Mapped[str] = mapped_column(String(16), default="not_required")
    approval_decided_by: Mapped[uuid.UUID | None] = mapped_column()
    approval_decided_at: Mapped[datetime | None] = mapped_column()
    created_by: Mapped[uuid.UUID | None] = mapped_column()
    # The earliest publishedAt of its targets, kept by the publisher: with scheduled_at and
    # created_at it is the post date that listPosts' start/end bound.
    first_published_at: Mapped[datetime | None] = mapped_column()
    # Deleted posts answer 404 and leave every listing, analytics included.
    deleted_at: Mapped[datetime | None] = mapped_column()


class _PostLabel:
    """The columns a label table has: one value of one post, in the order the author gave."""

    post_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("posts.id", ondelete="CASCADE"), primary_key=True
    )
    value: Mapped[str] = mapped_column(String(100), primary_key=True)
    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    position: Mapped[int] = mapped_column(Integer, default=0)


class PostTag(_PostLabel, Base):
    """A campaign tag value of a post (a post with two tags counts in both campaigns)."""

    __tablename__ = "post_tags"
    __table_args__ = (Index("ix_post_tags_org_value", "organization_id", "value"),)


class PostTopic(_PostLabel, Base):
    """A free topic label of a post."""

    __tablename__ = "post_topics"
    __table_args__ = (Index("ix_post_topics_org_value", "organization_id", "value"),)


class PostTarget(IdMixin, TimestampMixin, Base):
    """One destination of a post; the row is also the publisher's queue entry."""

    __tablename__ = "post_targets"
    __table_args__ = (
        Index("ix_post_targets_due", "status", "next_attempt_at"),
        # The publisher's queue in claim order: only queued targets, so a claim reads the
        # first due entries and stops, however many targets are settled or waiting.
        Index(
            "ix_post_targets_queue",
            "next_attempt_at",
            "post_id",
            postgresql_where=text("status IN ('scheduled', 'publishing')"),
            sqlite_where=text("status IN ('scheduled', 'publishing')"),
        ),
        Index("ix_post_targets_org_published", "organization_id", "published_at"),
        Index("ix_post_targets_channel", "channel_id"),
    )

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    post_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("posts.id", ondelete="CASCADE"), index=True
    )
    channel_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    provider: Mapped[str] = mapped_column(String(32))
    content_kind: Mapped[str] = mapped_column(String(32))
    # Overrides of the post's text and media; null means "the post's".
    text_override: Mapped[str | None] = mapped_column(Text)
    media_ids_override: Mapped[dict[str, Any] | None] = mapped_column()
    options: Mapped[dict[str, Any]] = mapped_column()
    status: Mapped[str] = mapped_column(String(32))
    published_at: Mapped[datetime | None] = mapped_column()
    provider_post_id: Mapped[str | None] = mapped_column(String(255))
    url: Mapped[str | None] = mapped_column(String(2048))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error_code: Mapped[str | None] = mapped_column(String(64))
    error_message: Mapped[str | None] = mapped_column(String(1000))
    error_retryable: Mapped[bool | None] = mapped_column(Boolean)
    # When the publisher may next take it (the schedule, then retry backoff).
    next_attempt_at: Mapped[datetime | None] = mapped_column()
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None] = mapped_column()
    # Bumped whenever the schedule changes; with the target id it forms the key sent to
    # providers that support idempotency, so one schedule is published at most once.
    schedule_version: Mapped[int] = mapped_column(Integer, default=1)
