"""analytics: metric snapshots, latest values per target, metrics poller state

Revision ID: 0004_analytics
Revises: 0003_posts
Create Date: 2026-11-22 03:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import pressroom.db

revision: str = "0004_analytics"
down_revision: str | Sequence[str] | None = "0003_posts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _metric_columns(nullable: bool) -> list[sa.Column[int]]:
    names = ("impressions", "reach", "views", "likes", "comments", "shares", "saves", "clicks")
    return [sa.Column(name, sa.BigInteger(), nullable=nullable) for name in names]


def upgrade() -> None:
    op.create_table(
        "metric_channel_states",
        sa.Column("channel_id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("paused_until", pressroom.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("stopped_at", pressroom.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_error_code", sa.String(length=64), nullable=True),
        sa.Column("updated_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=op.f("fk_metric_channel_states_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_metric_channel_states_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("channel_id", name=op.f("pk_metric_channel_states")),
    )
    with op.batch_alter_table("metric_channel_states", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_metric_channel_states_organization_id"),
            ["organization_id"],
            unique=False,
        )

    op.create_table(
        "metric_polls",
        sa.Column("target_id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("channel_id", sa.Uuid(), nullable=False),
        sa.Column("published_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("next_poll_at", pressroom.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("polls", sa.Integer(), nullable=False),
        sa.Column("last_polled_at", pressroom.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("stop_reason", sa.String(length=64), nullable=True),
        sa.Column("lease_owner", sa.String(length=64), nullable=True),
        sa.Column("lease_until", pressroom.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=op.f("fk_metric_polls_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_metric_polls_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["target_id"],
            ["post_targets.id"],
            name=op.f("fk_metric_polls_target_id_post_targets"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("target_id", name=op.f("pk_metric_polls")),
    )
    with op.batch_alter_table("metric_polls", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_metric_polls_channel_id"), ["channel_id"], unique=False
        )
        batch_op.create_index("ix_metric_polls_due", ["next_poll_at"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_metric_polls_organization_id"), ["organization_id"], unique=False
        )

    op.create_table(
        "metric_snapshots",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("target_id", sa.Uuid(), nullable=False),
        sa.Column("captured_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        *_metric_columns(nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_metric_snapshots_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["target_id"],
            ["post_targets.id"],
            name=op.f("fk_metric_snapshots_target_id_post_targets"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_metric_snapshots")),
    )
    with op.batch_alter_table("metric_snapshots", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_metric_snapshots_organization_id"), ["organization_id"], unique=False
        )
        batch_op.create_index(
            "ix_metric_snapshots_target_captured", ["target_id", "captured_at"], unique=False
        )

    op.create_table(
        "target_metrics",
        sa.Column("target_id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("published_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("captured_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        *_metric_columns(nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_target_metrics_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["target_id"],
            ["post_targets.id"],
            name=op.f("fk_target_metrics_target_id_post_targets"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("target_id", name=op.f("pk_target_metrics")),
    )
    with op.batch_alter_table("target_metrics", schema=None) as batch_op:
        batch_op.create_index(
            "ix_target_metrics_org_published", ["organization_id", "published_at"], unique=False
        )

    # Indexes on posts-domain tables that only analytics reads (see analytics/models.py).
    with op.batch_alter_table("post_targets", schema=None) as batch_op:
        batch_op.create_index(
            "ix_post_targets_status_published", ["status", "published_at"], unique=False
        )
        batch_op.create_index(
            "ix_post_targets_analytics",
            ["organization_id", "status", "published_at"],
            unique=False,
            postgresql_include=["id", "post_id", "channel_id", "content_kind"],
        )
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.create_index(
            "ix_posts_deleted",
            ["id"],
            unique=False,
            postgresql_where=sa.text("deleted_at IS NOT NULL"),
            sqlite_where=sa.text("deleted_at IS NOT NULL"),
        )


def downgrade() -> None:
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.drop_index(
            "ix_posts_deleted",
            postgresql_where=sa.text("deleted_at IS NOT NULL"),
            sqlite_where=sa.text("deleted_at IS NOT NULL"),
        )
    with op.batch_alter_table("post_targets", schema=None) as batch_op:
        batch_op.drop_index("ix_post_targets_analytics")
        batch_op.drop_index("ix_post_targets_status_published")

    with op.batch_alter_table("target_metrics", schema=None) as batch_op:
        batch_op.drop_index("ix_target_metrics_org_published")
    op.drop_table("target_metrics")

    with op.batch_alter_table("metric_snapshots", schema=None) as batch_op:
        batch_op.drop_index("ix_metric_snapshots_target_captured")
        batch_op.drop_index(batch_op.f("ix_metric_snapshots_organization_id"))
    op.drop_table("metric_snapshots")

    with op.batch_alter_table("metric_polls", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_metric_polls_organization_id"))
        batch_op.drop_index("ix_metric_polls_due")
        batch_op.drop_index(batch_op.f("ix_metric_polls_channel_id"))
    op.drop_table("metric_polls")

    with op.batch_alter_table("metric_channel_states", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_metric_channel_states_organization_id"))
    op.drop_table("metric_channel_states")
