"""merge the publishing, webhooks and analytics branches

Revision ID: 0005_merge
Revises: 0004_analytics, 0004_publishing, 0004_webhooks
Create Date: 2026-11-22 04:06:00
"""

from collections.abc import Sequence

revision: str = "0005_merge"
down_revision: str | Sequence[str] | None = ("0004_analytics", "0004_publishing", "0004_webhooks")
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
