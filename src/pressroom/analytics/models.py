"""Metric storage and the metrics poller's state.

`metric_snapshots` is the append-only history: one row per observation of a published
target (from the poller or an import). `target_metrics` holds the latest value of each
metric per target and is upserted with every snapshot, so reports read one narrow row per
target however long the history grows. The poller's schedule lives in `metric_polls` (one
row per target it follows, claimed with a lease like every queue of the service) and its
per-channel backoff in `metric_channel_states`."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger
from sqlalchemy import ForeignKey
from sqlalchemy import Index
from sqlalchemy import Integer
from sqlalchemy import SmallInteger
from sqlalchemy import String
from sqlalchemy import Text
from sqlalchemy.orm import Mapped
from sqlalchemy.orm import mapped_column

from pressroom.db import Base
from pressroom.db import IdMixin
from pressroom.posts.models import Post
from pressroom.posts.models import PostTarget

SNAPSHOT_SOURCES = ("poller", "import")


class MetricSnapshot(IdMixin, Base):
    """One observation of a target's metrics. A null column: not reported this time."""

    __tablename__ = "metric_snapshots"
    __table_args__ = (Index("ix_metric_snapshots_target_captured", "target_id", "captured_at"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    target_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("post_targets.id", ondelete="CASCADE"))
    captured_at: Mapped[datetime] = mapped_column()
    source: Mapped[str] = mapped_column(String(16))
    impressions: Mapped[int | None] = mapped_column(BigInteger)
    reach: Mapped[int | None] = mapped_column(BigInteger)
    views: Mapped[int | None] = mapped_column(BigInteger)
    likes: Mapped[int | None] = mapped_column(BigInteger)
    comments: Mapped[int | None] = mapped_column(BigInteger)
    shares: Mapped[int | None] = mapped_column(BigInteger)
    saves: Mapped[int | None] = mapped_column(BigInteger)
    clicks: Mapped[int | None] = mapped_column(BigInteger)


class MetricSums:
    """The eight raw metrics as required columns (0 until reported): a target's latest
    values, or sums of them."""

    impressions: Mapped[int] = mapped_column(BigInteger, default=0)
    reach: Mapped[int] = mapped_column(BigInteger, default=0)
    views: Mapped[int] = mapped_column(BigInteger, default=0)
    likes: Mapped[int] = mapped_column(BigInteger, default=0)
    comments: Mapped[int] = mapped_column(BigInteger, default=0)
    shares: Mapped[int] = mapped_column(BigInteger, default=0)
    saves: Mapped[int] = mapped_column(BigInteger, default=0)
    clicks: Mapped[int] = mapped_column(BigInteger, default=0)


class PublishedTargetRow:
    """The key of a table with one row per published target, and the target's organization
    (the first two columns, as the migrations create them: a mixin's columns otherwise come
    after the table's own)."""

    target_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("post_targets.id", ondelete="CASCADE"), primary_key=True, sort_order=-2
    )
    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), sort_order=-1
    )


class TargetMetrics(PublishedTargetRow, MetricSums, Base):
    """The latest value of each metric of one published target (0 until reported)."""

    __tablename__ = "target_metrics"
    # Reports read the metrics of the targets published in a range: a range scan, so the
    # work follows the range and not the length of the history.
    __table_args__ = (Index("ix_target_metrics_org_published", "organization_id", "published_at"),)

    # The target's publishedAt (fixed once published), copied for the range scans.
    published_at: Mapped[datetime] = mapped_column()
    # The capture time of the newest snapshot applied; an older one arriving late is ignored.
    captured_at: Mapped[datetime] = mapped_column()


class MetricPoll(Base):
    """The poller's schedule for one published target: when to fetch its metrics next."""

    __tablename__ = "metric_polls"
    __table_args__ = (Index("ix_metric_polls_due", "next_poll_at"),)

    target_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("post_targets.id", ondelete="CASCADE"), primary_key=True
    )
    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    channel_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), index=True
    )
    published_at: Mapped[datetime] = mapped_column()
    # Null once the schedule has ended (30 days after publishing) or polling was stopped.
    next_poll_at: Mapped[datetime | None] = mapped_column()
    polls: Mapped[int] = mapped_column(Integer, default=0)
    last_polled_at: Mapped[datetime | None] = mapped_column()
    # Why polling this target stopped for good (a permanent provider error), if it did.
    stop_reason: Mapped[str | None] = mapped_column(String(64))
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None] = mapped_column()


class MetricChannelState(Base):
    """Backoff of one channel after provider errors while fetching metrics."""

    __tablename__ = "metric_channel_states"

    channel_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    # Consecutive retryable failures; reset by the next success.
    failures: Mapped[int] = mapped_column(Integer, default=0)
    # No fetch for this channel before this time.
    paused_until: Mapped[datetime | None] = mapped_column()
    # Set on `auth_expired`: polling waits until the channel row changes afterwards (it was
    # reconnected or its health re-checked), which `updated_at` of the channel shows.
    stopped_at: Mapped[datetime | None] = mapped_column()
    last_error_code: Mapped[str | None] = mapped_column(String(64))
    updated_at: Mapped[datetime] = mapped_column()


# Indexes on the tables of the posts domain that only analytics reads, declared here so
# that they live (and are migrated) with their one user.
#
# The poller discovers newly published targets across organizations by publish time.
POST_TARGETS_BY_PUBLISH = Index(
    "ix_post_targets_status_published",
    PostTarget.__table__.c.status,
    PostTarget.__table__.c.published_at,
)
# A report's range scan of one organization's published targets. On PostgreSQL it carries
# the columns a report reads, so the scan never visits the (wide) table rows.
POST_TARGETS_FOR_REPORTS = Index(
    "ix_post_targets_analytics",
    PostTarget.__table__.c.organization_id,
    PostTarget.__table__.c.status,
    PostTarget.__table__.c.published_at,
    postgresql_include=["id", "post_id", "channel_id", "content_kind"],
)
# Reports leave out deleted posts with an anti-join against this small index, rather than
# a look at every post of the range.
DELETED_POSTS = Index(
    "ix_posts_deleted",
    Post.__table__.c.id,
    postgresql_where=Post.__table__.c.deleted_at.is_not(None),
    sqlite_where=Post.__table__.c.deleted_at.is_not(None),
)


# Pre-aggregated reports (analytics/rollups.py). What a published target of a live post adds
# to the reports is kept three ways: its `analytics_facts` row (exactly what was added, so
# that it can be taken back), its post's `analytics_post_facts` row (the page of posts) and
# its share of the `analytics_rollups` sums. Database triggers append the post of every
# change to `analytics_dirty`; applying that log brings the three up to date.


class AnalyticsFact(PublishedTargetRow, MetricSums, Base):
    """One published target of a live post as the rollups count it."""

    __tablename__ = "analytics_facts"
    __table_args__ = (
        Index("ix_analytics_facts_org_published", "organization_id", "published_at"),
        Index("ix_analytics_facts_post", "post_id"),
        # The longest time between a post's first publication and a later one: how far
        # back of a range's start a post reaching into the range can have begun.
        Index("ix_analytics_facts_org_lag", "organization_id", "lag_us"),
    )

    post_id: Mapped[uuid.UUID] = mapped_column()
    published_at: Mapped[datetime] = mapped_column()
    # The first publication of any target of the post, and this one's distance from it.
    post_first_at: Mapped[datetime] = mapped_column()
    lag_us: Mapped[int] = mapped_column(BigInteger)
    channel_id: Mapped[uuid.UUID] = mapped_column()
    content_kind: Mapped[str] = mapped_column(String(32))
    model: Mapped[str | None] = mapped_column(String(100))
    approval_status: Mapped[str] = mapped_column(String(16))
    # JSON arrays of the post's campaign tags and topics.
    tags: Mapped[str] = mapped_column(Text)
    topics: Mapped[str] = mapped_column(Text)
    # 1 on the target that counts its post: the post's first target overall, on its
    # channel, of its content kind (ties by target id).
    first_of_post: Mapped[int] = mapped_column(SmallInteger)
    first_on_channel: Mapped[int] = mapped_column(SmallInteger)
    first_of_kind: Mapped[int] = mapped_column(SmallInteger)


class AnalyticsPostFact(MetricSums, Base):
    """A post's published targets summed: the page of posts reads one row per post."""

    __tablename__ = "analytics_post_facts"
    __table_args__ = (Index("ix_analytics_post_facts_org_first", "organization_id", "first_at"),)

    post_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("posts.id", ondelete="CASCADE"), primary_key=True
    )
    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    first_at: Mapped[datetime] = mapped_column()
    last_at: Mapped[datetime] = mapped_column()


class AnalyticsRollup(MetricSums, Base):
    """Sums of the facts published in one UTC day (grain 1), for one value of one dimension:
    `all` (value ''), `channel`, `kind`, `model` ('' for a person), `approval`, `tag`,
    `topic`; and in one UTC hour (grain 0) for `all` alone (the time series' buckets).
    `posts` counts the facts that count their post for that dimension (see AnalyticsFact)."""

    __tablename__ = "analytics_rollups"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    # Keyed by dimension first: a time series reads one dimension's range of slots, a
    # breakdown each of its dimensions' ranges.
    dimension: Mapped[str] = mapped_column(String(16), primary_key=True)
    grain: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    slot_start: Mapped[datetime] = mapped_column(primary_key=True)
    value: Mapped[str] = mapped_column(String(100), primary_key=True)
    targets: Mapped[int] = mapped_column(BigInteger)
    posts: Mapped[int] = mapped_column(BigInteger)


class AnalyticsDirty(Base):
    """The log of posts whose report rows are out of date, appended by triggers (see the
    migration 0014); applying it removes the entries it applied."""

    __tablename__ = "analytics_dirty"
    __table_args__ = (Index("ix_analytics_dirty_org", "organization_id"),)

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    organization_id: Mapped[uuid.UUID] = mapped_column()
    post_id: Mapped[uuid.UUID] = mapped_column()
