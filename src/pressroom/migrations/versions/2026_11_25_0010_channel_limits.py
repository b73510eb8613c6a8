"""a channel's own limits: what its account's server accepts (a Mastodon instance's)

Revision ID: 0010_channel_limits
Revises: 0009_sandbox_first_comments
Create Date: 2026-11-25 12:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0010_channel_limits"
down_revision: str | Sequence[str] | None = "0009_sandbox_first_comments"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Filled at connect or at the channel's next health check (the channel-health loop checks
    # channels never checked since connected at once): until then a channel is held to its
    # provider's stock limits.
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "limits",
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                nullable=True,
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.drop_column("limits")
