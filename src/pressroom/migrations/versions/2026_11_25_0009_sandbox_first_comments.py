"""first comments kept by the sandbox

Revision ID: 0009_sandbox_first_comments
Revises: 0008_server_key_check
Create Date: 2026-11-25 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_sandbox_first_comments"
down_revision: str | Sequence[str] | None = "0008_server_key_check"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sandbox_publications", schema=None) as batch_op:
        batch_op.add_column(sa.Column("first_comment", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sandbox_publications", schema=None) as batch_op:
        batch_op.drop_column("first_comment")
