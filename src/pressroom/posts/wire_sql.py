"""A post's wire form (`views.post_view`), written in SQL: a page of posts leaves the database
as JSON text, one document a post with its targets and labels.

listPosts is the hottest read. Building its page in Python meant three statements, the
driver's conversion of some forty values a post, and a dict a post and a target, before
encoding them all again: about 4 ms of the server's CPU a page of 25. The database writes the
same documents in a fraction of that (the JSON functions of PostgreSQL and SQLite are C), and
the page is then only joined.

The documents equal `post_view`'s, value for value (tests/posts/test_wire_sql.py holds the two
to each other on both databases): times in UTC at millisecond precision (truncated, as
`format_utc` does), ids in their hyphenated form, a JSON `null` override treated as no
override, an absent `options` as `{}`. The text of the JSON may differ in white space.

Everything here is built from this module's constants, never from input.
"""

from __future__ import annotations

from functools import cache

from sqlalchemy import ColumnElement
from sqlalchemy import String
from sqlalchemy import literal_column

_SQLITE_UUID = " || '-' || ".join(
    f"substr({{0}}, {start}, {size})"
    for start, size in [(1, 8), (9, 4), (13, 4), (17, 4), (21, 12)]
)
# What differs between the two databases, side by side: (PostgreSQL, SQLite). `{0}` is the
# value the piece applies to.
_PIECES: dict[str, tuple[str, str]] = {
    "object": ("json_build_object({0})", "json_object({0})"),
    # SQLite stores `YYYY-MM-DD HH:MM:SS.ffffff`: cut to milliseconds (strftime would round).
    "time": (
        """to_char({0} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')""",
        "CASE WHEN length({0}) = 26 THEN substr({0}, 1, 10) || 'T' || substr({0}, 12, 12) || 'Z' "
        "ELSE strftime('%Y-%m-%dT%H:%M:%fZ', {0}) END",
    ),
    # SQLite stores a UUID as 32 hex digits.
    "uuid": ("{0}", _SQLITE_UUID),
    "boolean": ("coalesce({0}, false)", "json(CASE WHEN {0} THEN 'true' ELSE 'false' END)"),
    "json": ("{0}", "json({0})"),
    "json null": ("'null'::jsonb", "'null'"),
    "empty object": ("'{{}}'::jsonb", "'{{}}'"),
    "ids": (
        "coalesce(({0}) -> 'ids', '[]'::jsonb)",
        "coalesce(json_extract({0}, '$.ids'), json('[]'))",
    ),
    # The rows of the post in `table` as a JSON array of `value`, in `order`. SQLite (before
    # 3.44) has no ORDER BY in an aggregate; it keeps the order of an ordered subquery under one.
    "array": (
        "coalesce((SELECT json_agg({value} ORDER BY {qualified}) FROM {table} {alias} "
        "WHERE {alias}.post_id = posts.id), '[]'::json)",
        "(SELECT json_group_array({value}) FROM (SELECT * FROM {table} "
        "WHERE post_id = posts.id ORDER BY {order}) {alias})",
    ),
    "text": ("{0}::text", "{0}"),
}


class _Sql:
    """The pieces of one database's SQL."""

    def __init__(self, dialect: str) -> None:
        self._side = 0 if dialect == "postgresql" else 1

    def __call__(self, piece: str, subject: str = "", **names: str) -> str:
        return _PIECES[piece][self._side].format(subject, **names)

    def object(self, pairs: list[tuple[str, str]]) -> str:
        return self("object", ", ".join(f"'{key}', {value}" for key, value in pairs))

    def array(self, value: str, table: str, alias: str, order: list[str]) -> str:
        qualified = ", ".join(f"{alias}.{column}" for column in order)
        return self(
            "array",
            value=value,
            table=table,
            alias=alias,
            order=", ".join(order),
            qualified=qualified,
        )

    def json_or(self, column: str, fallback: str) -> str:
        """The stored JSON, or `fallback` where it is NULL or a JSON `null`."""
        return f"coalesce(nullif({column}, {self('json null')}), {fallback})"


def _target(sql: _Sql) -> str:
    """A target `t` of the post `posts`."""
    error = sql.object(
        [
            ("code", "t.error_code"),
            ("message", "coalesce(t.error_message, '')"),
            ("retryable", sql("boolean", "t.error_retryable")),
        ]
    )
    post_media = f"nullif(posts.media_ids, {sql('json null')})"
    return sql.object(
        [
            ("id", sql("uuid", "t.id")),
            ("channelId", sql("uuid", "t.channel_id")),
            ("provider", "t.provider"),
            ("contentKind", "t.content_kind"),
            ("text", "coalesce(t.text_override, posts.text)"),
            ("mediaIds", sql("ids", sql.json_or("t.media_ids_override", post_media))),
            ("options", sql("json", sql.json_or("t.options", sql("empty object")))),
            ("status", "t.status"),
            ("publishedAt", sql("time", "t.published_at")),
            ("providerPostId", "t.provider_post_id"),
            ("url", "t.url"),
            ("attempts", "t.attempts"),
            ("error", f"CASE WHEN t.error_code IS NULL THEN NULL ELSE {error} END"),
        ]
    )


def _document(sql: _Sql) -> str:
    approval = sql.object(
        [
            ("required", sql("boolean", "posts.approval_required")),
            ("status", "posts.approval_status"),
            ("decidedBy", sql("uuid", "posts.approval_decided_by")),
            ("decidedAt", sql("time", "posts.approval_decided_at")),
        ]
    )
    targets = sql.array(_target(sql), "post_targets", "t", ["created_at", "id"])
    document = sql.object(
        [
            ("id", sql("uuid", "posts.id")),
            ("text", "posts.text"),
            ("mediaIds", sql("ids", f"nullif(posts.media_ids, {sql('json null')})")),
            ("scheduledAt", sql("time", "posts.scheduled_at")),
            ("tags", sql.array("l.value", "post_tags", "l", ["position"])),
            ("topics", sql.array("l.value", "post_topics", "l", ["position"])),
            ("model", "posts.model"),
            ("status", "posts.status"),
            ("approval", approval),
            ("publishedAt", sql("time", "posts.first_published_at")),
            ("createdBy", sql("uuid", "posts.created_by")),
            ("createdAt", sql("time", "posts.created_at")),
            ("updatedAt", sql("time", "posts.updated_at")),
            ("targets", targets),
        ]
    )
    return sql("text", document)


@cache
def post_document(dialect: str) -> ColumnElement[str]:
    """The column of a `posts` row's wire form as JSON text, for `dialect` (`postgresql` or
    `sqlite`), in a statement that selects from `posts` itself."""
    return literal_column(_document(_Sql(dialect)), String).label("document")
