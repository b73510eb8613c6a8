"""publishing: sandbox publications, a post's publish mode and first publish time, queue index

Revision ID: 0004_publishing
Revises: 0003_posts
Create Date: 2026-11-22 02:33:37.071163
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import pressroom.db

revision: str = "0004_publishing"
down_revision: str | Sequence[str] | None = "0003_posts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sandbox_publications",
        sa.Column("idempotency_key", sa.String(length=255), nullable=False),
        sa.Column("provider_post_id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("channel_id", sa.Uuid(), nullable=False),
        sa.Column("target_id", sa.Uuid(), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("content_kind", sa.String(length=32), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("media_count", sa.Integer(), nullable=False),
        sa.Column("published_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("deleted_at", pressroom.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sandbox_publications")),
        sa.UniqueConstraint(
            "idempotency_key", name=op.f("uq_sandbox_publications_idempotency_key")
        ),
        sa.UniqueConstraint(
            "provider_post_id", name=op.f("uq_sandbox_publications_provider_post_id")
        ),
    )
    with op.batch_alter_table("sandbox_publications", schema=None) as batch_op:
        batch_op.create_index("ix_sandbox_publications_target", ["target_id"], unique=False)

    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("publish_mode", sa.String(length=16), server_default="draft", nullable=False)
        )
        batch_op.add_column(
            sa.Column("first_published_at", pressroom.db.UTCDateTime(timezone=True), nullable=True)
        )

    with op.batch_alter_table("post_targets", schema=None) as batch_op:
        batch_op.create_index(
            "ix_post_targets_queue",
            ["next_attempt_at", "post_id"],
            unique=False,
            postgresql_where=sa.text("status IN ('scheduled', 'publishing')"),
            sqlite_where=sa.text("status IN ('scheduled', 'publishing')"),
        )


def downgrade() -> None:
    with op.batch_alter_table("post_targets", schema=None) as batch_op:
        batch_op.drop_index("ix_post_targets_queue")

    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.drop_column("first_published_at")
        batch_op.drop_column("publish_mode")

    with op.batch_alter_table("sandbox_publications", schema=None) as batch_op:
        batch_op.drop_index("ix_sandbox_publications_target")

    op.drop_table("sandbox_publications")
