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
"""

from __future__ import annotations

from functools import cache

from sqlalchemy import ColumnElement
from sqlalchemy import String
from sqlalchemy import literal_column


class _Postgres:
    JSON_NULL = "'null'::jsonb"
    EMPTY_OBJECT = "'{}'::jsonb"

    @staticmethod
    def object(pairs: list[tuple[str, str]]) -> str:
        return f"json_build_object({_pairs(pairs)})"

    @staticmethod
    def time(column: str) -> str:
        return f"""to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"""

    @staticmethod
    def uuid(column: str) -> str:
        return column

    @staticmethod
    def boolean(column: str) -> str:
        return f"coalesce({column}, false)"

    @staticmethod
    def embedded(value: str) -> str:
        return value

    @staticmethod
    def ids(value: str) -> str:
        return f"coalesce(({value}) -> 'ids', '[]'::jsonb)"

    @staticmethod
    def ordered_array(value: str, table: str, alias: str, order: list[str]) -> str:
        ordered = ", ".join(f"{alias}.{column}" for column in order)
        return (
            # Built from this module's constants only, never from input.
            f"coalesce((SELECT json_agg({value} ORDER BY {ordered}) FROM {table} {alias} "  # noqa: S608
            f"WHERE {alias}.post_id = posts.id), '[]'::json)"
        )

    @staticmethod
    def text(document: str) -> str:
        return f"{document}::text"


class _Sqlite:
    JSON_NULL = "'null'"
    EMPTY_OBJECT = "'{}'"

    @staticmethod
    def object(pairs: list[tuple[str, str]]) -> str:
        return f"json_object({_pairs(pairs)})"

    @staticmethod
    def time(column: str) -> str:
        # Stored as `YYYY-MM-DD HH:MM:SS.ffffff`: cut to milliseconds (strftime would round).
        return (
            f"CASE WHEN length({column}) = 26 THEN substr({column}, 1, 10) || 'T' || "
            f"substr({column}, 12, 12) || 'Z' "
            f"ELSE strftime('%Y-%m-%dT%H:%M:%fZ', {column}) END"
        )

    @staticmethod
    def uuid(column: str) -> str:
        """Stored as 32 hex digits: the hyphenated form (NULL stays NULL)."""
        cuts = [(1, 8), (9, 4), (13, 4), (17, 4), (21, 12)]
        return " || '-' || ".join(f"substr({column}, {start}, {size})" for start, size in cuts)

    @staticmethod
    def boolean(column: str) -> str:
        return f"json(CASE WHEN {column} THEN 'true' ELSE 'false' END)"

    @staticmethod
    def embedded(value: str) -> str:
        return f"json({value})"

    @staticmethod
    def ids(value: str) -> str:
        return f"coalesce(json_extract({value}, '$.ids'), json('[]'))"

    @staticmethod
    def ordered_array(value: str, table: str, alias: str, order: list[str]) -> str:
        # SQLite (before 3.44) has no ORDER BY in an aggregate; it keeps the order of an
        # ordered subquery under one.
        return (
            f"(SELECT json_group_array({value}) FROM (SELECT * FROM {table} "  # noqa: S608
            f"WHERE post_id = posts.id ORDER BY {', '.join(order)}) {alias})"
        )

    @staticmethod
    def text(document: str) -> str:
        return document


_Dialect = type[_Postgres] | type[_Sqlite]


def _pairs(pairs: list[tuple[str, str]]) -> str:
    return ", ".join(f"'{key}', {value}" for key, value in pairs)


def _target(sql: _Dialect) -> str:
    """A target `t` of the post `posts`."""
    media = f"coalesce(nullif(t.media_ids_override, {sql.JSON_NULL}), {_post_media(sql)})"
    empty = sql.EMPTY_OBJECT
    error = sql.object(
        [
            ("code", "t.error_code"),
            ("message", "coalesce(t.error_message, '')"),
            ("retryable", sql.boolean("t.error_retryable")),
        ]
    )
    return sql.object(
        [
            ("id", sql.uuid("t.id")),
            ("channelId", sql.uuid("t.channel_id")),
            ("provider", "t.provider"),
            ("contentKind", "t.content_kind"),
            ("text", "coalesce(t.text_override, posts.text)"),
            ("mediaIds", sql.ids(media)),
            ("options", sql.embedded(f"coalesce(nullif(t.options, {sql.JSON_NULL}), {empty})")),
            ("status", "t.status"),
            ("publishedAt", sql.time("t.published_at")),
            ("providerPostId", "t.provider_post_id"),
            ("url", "t.url"),
            ("attempts", "t.attempts"),
            ("error", f"CASE WHEN t.error_code IS NULL THEN NULL ELSE {error} END"),
        ]
    )


def _post_media(sql: _Dialect) -> str:
    return f"nullif(posts.media_ids, {sql.JSON_NULL})"


def _labels(sql: _Dialect, table: str) -> str:
    return sql.ordered_array("l.value", table, "l", ["position"])


def _document(sql: _Dialect) -> str:
    approval = sql.object(
        [
            ("required", sql.boolean("posts.approval_required")),
            ("status", "posts.approval_status"),
            ("decidedBy", sql.uuid("posts.approval_decided_by")),
            ("decidedAt", sql.time("posts.approval_decided_at")),
        ]
    )
    targets = sql.ordered_array(_target(sql), "post_targets", "t", ["created_at", "id"])
    document = sql.object(
        [
            ("id", sql.uuid("posts.id")),
            ("text", "posts.text"),
            ("mediaIds", sql.ids(_post_media(sql))),
            ("scheduledAt", sql.time("posts.scheduled_at")),
            ("tags", _labels(sql, "post_tags")),
            ("topics", _labels(sql, "post_topics")),
            ("model", "posts.model"),
            ("status", "posts.status"),
            ("approval", approval),
            ("publishedAt", sql.time("posts.first_published_at")),
            ("createdBy", sql.uuid("posts.created_by")),
            ("createdAt", sql.time("posts.created_at")),
            ("updatedAt", sql.time("posts.updated_at")),
            ("targets", targets),
        ]
    )
    return sql.text(document)


@cache
def post_document(dialect: str) -> ColumnElement[str]:
    """The column of a `posts` row's wire form as JSON text, for `dialect` (`postgresql` or
    `sqlite`), in a statement that selects from `posts` itself."""
    sql: _Dialect = _Postgres if dialect == "postgresql" else _Sqlite
    return literal_column(_document(sql), String).label("document")
