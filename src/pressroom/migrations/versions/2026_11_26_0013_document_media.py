"""PDF documents in the media library: the page count of a `document` asset

Revision ID: 0013_document_media
Revises: 0011_console_sessions
Create Date: 2026-11-26 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_document_media"
down_revision: str | Sequence[str] | None = "0011_console_sessions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every existing asset is an image, a GIF or a video, which has no pages: NULL is their
    # value, so nothing needs filling. `kind` (String(16)) holds "document" as it is.
    with op.batch_alter_table("media_assets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("page_count", sa.Integer(), nullable=True))


def downgrade() -> None:
    # Documents cannot be described without their pages: they go with the column.
    op.execute("DELETE FROM media_assets WHERE kind = 'document'")
    with op.batch_alter_table("media_assets", schema=None) as batch_op:
        batch_op.drop_column("page_count")
