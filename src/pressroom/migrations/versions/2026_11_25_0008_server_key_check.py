"""server key check: the value every node compares its server key against

Revision ID: 0008_server_key_check
Revises: 0007_credential_revocations
Create Date: 2026-11-25 17:45:00.000000

The row itself is written by the first node that starts after the upgrade, from its key (the
migration does not know the key): an existing data directory keeps working with its key file.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import pressroom.db

revision: str = "0008_server_key_check"
down_revision: str | Sequence[str] | None = "0007_credential_revocations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "server_key_check",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("check_value", sa.String(length=64), nullable=False),
        sa.Column("created_at", pressroom.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_server_key_check")),
    )


def downgrade() -> None:
    op.drop_table("server_key_check")
