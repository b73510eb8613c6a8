"""the console's sign-in links and sessions

Revision ID: 0011_console_sessions
Revises: 0010_channel_limits
Create Date: 2026-11-25 20:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import pressroom.db

revision: str = "0011_console_sessions"
down_revision: str | Sequence[str] | None = "0010_channel_limits"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # New tables only: no existing row needs filling.
    op.create_table(
        "sign_in_links",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("member_id", sa.Uuid(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("created_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("used_at", pressroom.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_sign_in_links_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["member_id"],
            ["members.id"],
            name=op.f("fk_sign_in_links_member_id_members"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sign_in_links")),
        sa.UniqueConstraint("digest", name=op.f("uq_sign_in_links_digest")),
    )
    op.create_index(op.f("ix_sign_in_links_organization_id"), "sign_in_links", ["organization_id"])
    op.create_table(
        "console_sessions",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("member_id", sa.Uuid(), nullable=False),
        sa.Column("api_key_id", sa.Uuid(), nullable=True),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("created_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("ended_at", pressroom.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_console_sessions_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["member_id"],
            ["members.id"],
            name=op.f("fk_console_sessions_member_id_members"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["api_key_id"],
            ["api_keys.id"],
            name=op.f("fk_console_sessions_api_key_id_api_keys"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_console_sessions")),
        sa.UniqueConstraint("digest", name=op.f("uq_console_sessions_digest")),
    )
    op.create_index(
        op.f("ix_console_sessions_organization_id"), "console_sessions", ["organization_id"]
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_console_sessions_organization_id"), table_name="console_sessions")
    op.drop_table("console_sessions")
    op.drop_index(op.f("ix_sign_in_links_organization_id"), table_name="sign_in_links")
    op.drop_table("sign_in_links")
