"""credential revocations: disconnected channels' tokens waiting to be revoked at the provider

Revision ID: 0007_credential_revocations
Revises: 0006_channel_connections
Create Date: 2026-11-22 07:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import pressroom.db

revision: str = "0007_credential_revocations"
down_revision: str | Sequence[str] | None = "0006_channel_connections"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "credential_revocations",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("channel_id", sa.Uuid(), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("credentials_encrypted", sa.Text(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("lease_owner", sa.String(length=64), nullable=True),
        sa.Column("lease_until", pressroom.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=op.f("fk_credential_revocations_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_credential_revocations_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_credential_revocations")),
    )
    with op.batch_alter_table("credential_revocations", schema=None) as batch_op:
        batch_op.create_index(
            "ix_credential_revocations_next_attempt_at", ["next_attempt_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("credential_revocations", schema=None) as batch_op:
        batch_op.drop_index("ix_credential_revocations_next_attempt_at")

    op.drop_table("credential_revocations")
