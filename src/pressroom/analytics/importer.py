"""`pressroom analytics import`: published history from JSON lines (contract section 10).

Each line is one post published on one channel, with the metrics it reached:

    {"channelId", "publishedAt", "text", "contentKind", "tags", "topics", "model",
     "approvalStatus", "metrics": {"impressions": 10, ...}}

Every line is checked before anything is written, and an import is all or nothing: one
bad line and nothing is stored, with errors that name the line and the field
(`line 3: metrics.likes: must be a non-negative integer`). Imported targets have no
provider post id, so the metrics poller leaves them alone: their metrics are final."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from typing import Literal

from pydantic import Field
from pydantic import ValidationError
from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.analytics.metrics import DERIVED_METRICS
from pressroom.analytics.metrics import RAW_METRICS
from pressroom.analytics.recording import Observation
from pressroom.analytics.recording import record
from pressroom.channels.models import Channel
from pressroom.http.problems import field_name
from pressroom.kit.clock import utcnow
from pressroom.kit.ids import uuid7
from pressroom.kit.schema import APIInput
from pressroom.kit.schema import AwareDatetime
from pressroom.posts.checks import check_labels
from pressroom.posts.models import Post
from pressroom.posts.models import PostTag
from pressroom.posts.models import PostTarget
from pressroom.posts.models import PostTopic
from pressroom.posts.schemas import MAX_LABELS
from pressroom.posts.schemas import MAX_TEXT_LENGTH
from pressroom.providers.declarations import DECLARATIONS

# Errors reported at most (the first ones; a file with a systematic mistake has thousands).
MAX_REPORTED_ERRORS = 20
_ROWS_PER_STATEMENT = 1000


class ImportedPost(APIInput):
    """One line of an import file."""

    channel_id: uuid.UUID
    published_at: AwareDatetime
    text: str | None = Field(default=None, max_length=MAX_TEXT_LENGTH)
    content_kind: str = Field(min_length=1, max_length=32)
    tags: list[str] = Field(default_factory=list, max_length=MAX_LABELS)
    topics: list[str] = Field(default_factory=list, max_length=MAX_LABELS)
    model: str | None = Field(default=None, min_length=1, max_length=100)
    # A published post's approval is settled: it never waits for one any more.
    approval_status: Literal["not_required", "approved", "rejected"] = "not_required"
    metrics: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class ImportedLine:
    number: int
    post: ImportedPost
    metrics: dict[str, int]
    provider: str


class ImportFailed(ValueError):
    """The file has invalid lines; nothing was imported."""

    def __init__(self, problems: Sequence[str], total: int) -> None:
        self.problems = list(problems)
        more = f" (and {total - len(problems)} more)" if total > len(problems) else ""
        super().__init__(
            f"nothing imported: {total} invalid line{'s' if total != 1 else ''}{more}\n"
            + "\n".join(self.problems)
        )


def _metrics(raw: dict[str, Any]) -> tuple[dict[str, int], list[str]]:
    values: dict[str, int] = {}
    problems = []
    for key, value in raw.items():
        if key in DERIVED_METRICS:
            problems.append(f"metrics.{key}: is derived from the other metrics; leave it out")
        elif key not in RAW_METRICS:
            problems.append(f"metrics.{key}: is not a metric ({', '.join(RAW_METRICS)})")
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            problems.append(f"metrics.{key}: must be a non-negative integer")
        elif value >= 2**63:
            problems.append(f"metrics.{key}: is too large")
        else:
            values[key] = value
    return values, problems


def parse_line(
    number: int, text: str, channels: dict[uuid.UUID, Channel], now: datetime
) -> ImportedLine | list[str]:
    """One line checked; the problems, each prefixed with the line number, otherwise."""
    where = f"line {number}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [f"{where}: is not valid JSON ({exc.msg} at column {exc.colno})"]
    if not isinstance(data, dict):
        return [f"{where}: must be a JSON object (one published post)"]
    try:
        post = ImportedPost.model_validate(data)
    except ValidationError as exc:
        return [
            f"{where}: {field_name(error['loc'])}: "
            + ("is required" if error["type"] == "missing" else
               "is not a known field" if error["type"] == "extra_forbidden" else
               str(error["msg"]).removeprefix("Value error, "))
            for error in exc.errors()
        ]  # fmt: skip
    problems = []
    channel = channels.get(post.channel_id)
    provider = channel.provider if channel is not None else ""
    if channel is None:
        problems.append(f"{where}: channelId: is not a connected channel of this organization")
    else:
        kinds = [kind.kind for kind in DECLARATIONS[provider].content_kinds]
        if post.content_kind not in kinds:
            problems.append(
                f"{where}: contentKind: {post.content_kind!r} is not a content kind of "
                f"{provider} ({', '.join(kinds)})"
            )
    if post.published_at > now:
        problems.append(f"{where}: publishedAt: is in the future; import published history only")
    for label in (
        *check_labels("tags", post.tags, allow_commas=False),
        *check_labels("topics", post.topics, allow_commas=True),
    ):
        problems.append(f"{where}: {label.field}: {label.message}")
    metrics, metric_problems = _metrics(post.metrics)
    problems += [f"{where}: {problem}" for problem in metric_problems]
    if problems:
        return problems
    return ImportedLine(number=number, post=post, metrics=metrics, provider=provider)


async def connected_channels(
    session: AsyncSession, organization_id: uuid.UUID
) -> dict[uuid.UUID, Channel]:
    result = await session.execute(
        select(Channel).where(
            Channel.organization_id == organization_id, Channel.disconnected_at.is_(None)
        )
    )
    return {channel.id: channel for channel in result.scalars()}


def check_lines(lines: Iterable[str], channels: dict[uuid.UUID, Channel]) -> list[ImportedLine]:
    """Every non-blank line checked; ImportFailed naming the bad ones, if any."""
    now = utcnow()
    parsed: list[ImportedLine] = []
    problems: list[str] = []
    bad = 0
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        outcome = parse_line(number, text, channels, now)
        if isinstance(outcome, list):
            bad += 1
            problems.extend(outcome)
        else:
            parsed.append(outcome)
    if bad:
        raise ImportFailed(problems[:MAX_REPORTED_ERRORS], bad)
    return parsed


async def import_history(
    session: AsyncSession, organization_id: uuid.UUID, lines: Iterable[str]
) -> int:
    """Check every line, then store them all (in the caller's transaction); the number of
    posts imported."""
    channels = await connected_channels(session, organization_id)
    parsed = check_lines(lines, channels)
    await store(session, organization_id, parsed)
    return len(parsed)


async def store(
    session: AsyncSession, organization_id: uuid.UUID, parsed: Sequence[ImportedLine]
) -> None:
    post_rows: list[dict[str, Any]] = []
    target_rows: list[dict[str, Any]] = []
    tag_rows: list[dict[str, Any]] = []
    topic_rows: list[dict[str, Any]] = []
    observations: list[Observation] = []
    captured_at = utcnow()
    for line in parsed:
        post = line.post
        post_id, target_id = uuid7(), uuid7()
        published_at = post.published_at
        post_rows.append(
            {
                "id": post_id,
                "organization_id": organization_id,
                "text": post.text,
                "media_ids": {"ids": []},
                "scheduled_at": None,
                "status": "published",
                "model": post.model,
                "approval_required": post.approval_status != "not_required",
                "approval_status": post.approval_status,
                "first_published_at": published_at,
                # History is dated by its publication, so listPosts orders it sensibly.
                "created_at": published_at,
                "updated_at": captured_at,
            }
        )
        target_rows.append(
            {
                "id": target_id,
                "organization_id": organization_id,
                "post_id": post_id,
                "channel_id": post.channel_id,
                "provider": line.provider,
                "content_kind": post.content_kind,
                "options": {},
                "status": "published",
                "published_at": published_at,
                "attempts": 0,
                "schedule_version": 1,
                "created_at": published_at,
                "updated_at": captured_at,
            }
        )
        tag_rows += [
            {"post_id": post_id, "value": v, "organization_id": organization_id, "position": i}
            for i, v in enumerate(post.tags)
        ]
        topic_rows += [
            {"post_id": post_id, "value": v, "organization_id": organization_id, "position": i}
            for i, v in enumerate(post.topics)
        ]
        observations.append(
            Observation(
                organization_id=organization_id,
                target_id=target_id,
                published_at=published_at,
                captured_at=captured_at,
                values=line.metrics,
                source="import",
            )
        )
    for model, rows in (
        (Post, post_rows),
        (PostTarget, target_rows),
        (PostTag, tag_rows),
        (PostTopic, topic_rows),
    ):
        for start in range(0, len(rows), _ROWS_PER_STATEMENT):
            await session.execute(insert(model), rows[start : start + _ROWS_PER_STATEMENT])
    await record(session, observations)
