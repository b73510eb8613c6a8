"""channel connections: pending OAuth authorizations and registered Mastodon apps

Revision ID: 0006_channel_connections
Revises: 0005_merge
Create Date: 2026-11-22 05:18:54.487511
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import pressroom.db

revision: str = "0006_channel_connections"
down_revision: str | Sequence[str] | None = "0005_merge"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "mastodon_apps",
        sa.Column("base_url", sa.String(length=500), nullable=False),
        sa.Column("redirect_uri", sa.String(length=500), nullable=False),
        sa.Column("client_id", sa.String(length=255), nullable=False),
        sa.Column("client_secret_encrypted", sa.Text(), nullable=False),
        sa.Column("created_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mastodon_apps")),
        sa.UniqueConstraint(
            "base_url", "redirect_uri", name=op.f("uq_mastodon_apps_base_url_redirect_uri")
        ),
    )
    op.create_table(
        "channel_authorizations",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("member_id", sa.Uuid(), nullable=False),
        sa.Column("credential_id", sa.Uuid(), nullable=False),
        sa.Column("credential_prefix", sa.String(length=32), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("instance", sa.String(length=500), nullable=True),
        sa.Column("return_url", sa.String(length=2048), nullable=True),
        sa.Column("state_digest", sa.String(length=64), nullable=False),
        sa.Column("secret_encrypted", sa.Text(), nullable=False),
        sa.Column("created_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("used_at", pressroom.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["member_id"],
            ["members.id"],
            name=op.f("fk_channel_authorizations_member_id_members"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_channel_authorizations_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_channel_authorizations")),
        sa.UniqueConstraint("state_digest", name=op.f("uq_channel_authorizations_state_digest")),
    )
    with op.batch_alter_table("channel_authorizations", schema=None) as batch_op:
        batch_op.create_index("ix_channel_authorizations_expires_at", ["expires_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("channel_authorizations", schema=None) as batch_op:
        batch_op.drop_index("ix_channel_authorizations_expires_at")

    op.drop_table("channel_authorizations")
    op.drop_table("mastodon_apps")
