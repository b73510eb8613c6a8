"""webhook delivery indexes for the retention sweeper and the purge

Revision ID: 0004_webhooks
Revises: 0003_posts
Create Date: 2026-11-22 03:10:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004_webhooks"
down_revision: str | Sequence[str] | None = "0003_posts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index("ix_webhook_deliveries_event_id", ["event_id"], unique=False)
        batch_op.create_index(
            "ix_webhook_deliveries_status_expires", ["status", "expires_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_deliveries_status_expires")
        batch_op.drop_index("ix_webhook_deliveries_event_id")
