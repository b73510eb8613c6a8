"""analytics rollups: per-target facts, per-post sums, hour and day sums, the change log

Revision ID: 0014_analytics_rollups
Revises: 0013_document_media
Create Date: 2026-11-26 12:00:00.000000

The tables are filled from what is already stored: every post with a published target is
appended to `analytics_dirty`, and `pressroom db upgrade` applies that log (the same work as
`pressroom analytics rebuild`) once the migrations are done. Reports answer from the raw rows
until it has been applied, so nothing is ever reported from half-built tables.

Triggers append a post to `analytics_dirty` whenever something a report counts changes: a
target is published (or its publication changes or is removed), its latest metrics change,
the post's model, approval or deletion changes, or its campaign tags or topics change.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import pressroom.db

revision: str = "0014_analytics_rollups"
down_revision: str | Sequence[str] | None = "0013_document_media"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_METRICS = ("impressions", "reach", "views", "likes", "comments", "shares", "saves", "clicks")


def _metrics() -> list[sa.Column[int]]:
    return [sa.Column(name, sa.BigInteger(), nullable=False) for name in _METRICS]


def _org_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["organization_id"],
        ["organizations.id"],
        name=f"fk_{table}_organization_id_organizations",
        ondelete="CASCADE",
    )


def _time(name: str) -> sa.Column[object]:
    return sa.Column(name, pressroom.db.UTCDateTime(timezone=True), nullable=False)


# (trigger, table, event, condition, the post's id and organization as the row names them)
_TARGET_CHANGED = (
    "(OLD.status = 'published' OR NEW.status = 'published') AND ("
    "OLD.status {ne} NEW.status OR OLD.published_at {ne} NEW.published_at "
    "OR OLD.channel_id {ne} NEW.channel_id OR OLD.content_kind {ne} NEW.content_kind "
    "OR OLD.post_id {ne} NEW.post_id)"
)
_POST_CHANGED = (
    "OLD.model {ne} NEW.model OR OLD.approval_status {ne} NEW.approval_status "
    "OR OLD.deleted_at {ne} NEW.deleted_at"
)
_TRIGGERS = [
    ("analytics_target_insert", "post_targets", "INSERT", "NEW.status = 'published'",
     "NEW.post_id", "NEW.organization_id"),
    ("analytics_target_update_old", "post_targets", "UPDATE", _TARGET_CHANGED,
     "OLD.post_id", "OLD.organization_id"),
    ("analytics_target_update_new", "post_targets", "UPDATE", _TARGET_CHANGED,
     "NEW.post_id", "NEW.organization_id"),
    ("analytics_target_delete", "post_targets", "DELETE", "OLD.status = 'published'",
     "OLD.post_id", "OLD.organization_id"),
    ("analytics_post_update", "posts", "UPDATE", _POST_CHANGED,
     "NEW.id", "NEW.organization_id"),
    ("analytics_tag_insert", "post_tags", "INSERT", None, "NEW.post_id", "NEW.organization_id"),
    ("analytics_tag_delete", "post_tags", "DELETE", None, "OLD.post_id", "OLD.organization_id"),
    ("analytics_topic_insert", "post_topics", "INSERT", None,
     "NEW.post_id", "NEW.organization_id"),
    ("analytics_topic_delete", "post_topics", "DELETE", None,
     "OLD.post_id", "OLD.organization_id"),
    ("analytics_metrics_insert", "target_metrics", "INSERT", None, None, None),
    ("analytics_metrics_update", "target_metrics", "UPDATE", None, None, None),
]  # fmt: skip


def _mark(post: str | None, organization: str | None) -> str:
    if post is None:  # target_metrics names its target, not the post
        return (
            "INSERT INTO analytics_dirty (organization_id, post_id) "
            "SELECT organization_id, post_id FROM post_targets WHERE id = NEW.target_id"
        )
    # Column references of the trigger's row, from the table above: no outside input.
    return f"INSERT INTO analytics_dirty (organization_id, post_id) VALUES ({organization}, {post})"  # noqa: S608


def _create_triggers() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    ne = "IS DISTINCT FROM" if postgres else "IS NOT"
    for name, table, event, condition, post, organization in _TRIGGERS:
        when = f"WHEN ({condition.format(ne=ne)})" if condition else ""
        if postgres:
            op.execute(
                f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ "
                f"BEGIN {_mark(post, organization)}; RETURN NULL; END $$"
            )
            op.execute(
                f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW {when} "
                f"EXECUTE FUNCTION {name}()"
            )
        else:
            op.execute(
                f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW {when} "
                f"BEGIN {_mark(post, organization)}; END"
            )


def upgrade() -> None:
    op.create_table(
        "analytics_facts",
        sa.Column("target_id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("post_id", sa.Uuid(), nullable=False),
        _time("published_at"),
        _time("post_first_at"),
        sa.Column("lag_us", sa.BigInteger(), nullable=False),
        sa.Column("channel_id", sa.Uuid(), nullable=False),
        sa.Column("content_kind", sa.String(length=32), nullable=False),
        sa.Column("model", sa.String(length=100), nullable=True),
        sa.Column("approval_status", sa.String(length=16), nullable=False),
        sa.Column("tags", sa.Text(), nullable=False),
        sa.Column("topics", sa.Text(), nullable=False),
        sa.Column("first_of_post", sa.SmallInteger(), nullable=False),
        sa.Column("first_on_channel", sa.SmallInteger(), nullable=False),
        sa.Column("first_of_kind", sa.SmallInteger(), nullable=False),
        *_metrics(),
        _org_fk("analytics_facts"),
        sa.ForeignKeyConstraint(
            ["target_id"],
            ["post_targets.id"],
            name="fk_analytics_facts_target_id_post_targets",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("target_id", name="pk_analytics_facts"),
    )
    op.create_index(
        "ix_analytics_facts_org_published", "analytics_facts", ["organization_id", "published_at"]
    )
    op.create_index("ix_analytics_facts_post", "analytics_facts", ["post_id"])
    op.create_index("ix_analytics_facts_org_lag", "analytics_facts", ["organization_id", "lag_us"])

    op.create_table(
        "analytics_post_facts",
        sa.Column("post_id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        _time("first_at"),
        _time("last_at"),
        *_metrics(),
        _org_fk("analytics_post_facts"),
        sa.ForeignKeyConstraint(
            ["post_id"],
            ["posts.id"],
            name="fk_analytics_post_facts_post_id_posts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("post_id", name="pk_analytics_post_facts"),
    )
    op.create_index(
        "ix_analytics_post_facts_org_first",
        "analytics_post_facts",
        ["organization_id", "first_at"],
    )

    op.create_table(
        "analytics_rollups",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("dimension", sa.String(length=16), nullable=False),
        sa.Column("grain", sa.SmallInteger(), nullable=False),
        _time("slot_start"),
        sa.Column("value", sa.String(length=100), nullable=False),
        sa.Column("targets", sa.BigInteger(), nullable=False),
        sa.Column("posts", sa.BigInteger(), nullable=False),
        *_metrics(),
        _org_fk("analytics_rollups"),
        sa.PrimaryKeyConstraint(
            "organization_id",
            "dimension",
            "grain",
            "slot_start",
            "value",
            name="pk_analytics_rollups",
        ),
    )

    op.create_table(
        "analytics_dirty",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("post_id", sa.Uuid(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_analytics_dirty"),
    )
    op.create_index("ix_analytics_dirty_org", "analytics_dirty", ["organization_id"])
    _create_triggers()
    # Fill: every post with a published target is out of date until the log is applied.
    op.execute(
        "INSERT INTO analytics_dirty (organization_id, post_id) "
        "SELECT DISTINCT organization_id, post_id FROM post_targets WHERE status = 'published'"
    )


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for name, table, *_ in _TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + (f" ON {table}" if postgres else ""))
        if postgres:
            op.execute(f"DROP FUNCTION IF EXISTS {name}()")
    for table in (
        "analytics_dirty",
        "analytics_rollups",
        "analytics_post_facts",
        "analytics_facts",
    ):
        op.drop_table(table)
