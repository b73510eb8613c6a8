"""The report's small statements around its aggregates: whether the channels a query
filters by are the organization's, and the details of the page's posts (tags, topics,
channels in range, model, approval) with the names of the breakdowns' channels."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Integer
from sqlalchemy import Select
from sqlalchemy import String
from sqlalchemy import cast
from sqlalchemy import literal
from sqlalchemy import null
from sqlalchemy import select
from sqlalchemy import union_all
from sqlalchemy.ext.asyncio import AsyncConnection

from pressroom.analytics.params import AnalyticsQuery
from pressroom.analytics.query import channels
from pressroom.analytics.query import posts
from pressroom.analytics.query import tags
from pressroom.analytics.query import targets
from pressroom.analytics.query import topics


@dataclass(frozen=True)
class PageDetails:
    tags: dict[uuid.UUID, list[str]]
    topics: dict[uuid.UUID, list[str]]
    channel_ids: dict[uuid.UUID, list[uuid.UUID]]
    model: dict[uuid.UUID, str | None]
    approval: dict[uuid.UUID, str]
    channel_names: dict[uuid.UUID, str]


def details_statement(
    organization_id: uuid.UUID, query: AnalyticsQuery, post_ids: Sequence[uuid.UUID]
) -> Select[Any]:
    """Tags, topics, channels in range, model and approval of the page's posts, and the
    names of the organization's channels (breakdown labels)."""

    def part(kind: str, owner: Any, value: Any, extra: Any, position: Any) -> Select[Any]:
        return select(
            literal(kind, String).label("kind"),
            owner.label("owner"),
            cast(value, String).label("value"),
            cast(extra, String).label("extra"),
            cast(position, Integer).label("position"),
        )

    in_range = [
        targets.c.post_id.in_(post_ids),
        targets.c.organization_id == organization_id,
        targets.c.status == "published",
        targets.c.published_at >= query.range.start,
        targets.c.published_at <= query.range.end,
    ]
    if query.channel_ids:
        in_range.append(targets.c.channel_id.in_(query.channel_ids))
    if query.content_kinds:
        in_range.append(targets.c.content_kind.in_(query.content_kinds))
    parts = [
        part("name", channels.c.id, channels.c.name, null(), 0).where(
            channels.c.organization_id == organization_id
        ),
    ]
    if post_ids:
        parts += [
            part("tag", tags.c.post_id, tags.c.value, null(), tags.c.position).where(
                tags.c.post_id.in_(post_ids)
            ),
            part("topic", topics.c.post_id, topics.c.value, null(), topics.c.position).where(
                topics.c.post_id.in_(post_ids)
            ),
            part("post", posts.c.id, posts.c.model, posts.c.approval_status, 0).where(
                posts.c.id.in_(post_ids)
            ),
            part(
                "channel",
                targets.c.post_id,
                targets.c.channel_id,
                null(),
                0,
            ).where(*in_range),
        ]
    return union_all(*parts)  # type: ignore[return-value]


async def run_details(
    connection: AsyncConnection,
    organization_id: uuid.UUID,
    query: AnalyticsQuery,
    post_ids: Sequence[uuid.UUID],
) -> PageDetails:
    details = PageDetails({}, {}, {}, {}, {}, {})
    ordered: dict[str, list[tuple[int, uuid.UUID, str]]] = {"tag": [], "topic": []}
    result = await connection.execute(details_statement(organization_id, query, post_ids))
    for row in result:
        owner = row.owner if isinstance(row.owner, uuid.UUID) else uuid.UUID(str(row.owner))
        if row.kind == "name":
            details.channel_names[owner] = row.value
        elif row.kind in ordered:
            ordered[row.kind].append((int(row.position), owner, row.value))
        elif row.kind == "post":
            details.model[owner] = row.value
            details.approval[owner] = row.extra
        else:
            channel_id = uuid.UUID(row.value)
            listed = details.channel_ids.setdefault(owner, [])
            if channel_id not in listed:
                listed.append(channel_id)
    for kind, target in (("tag", details.tags), ("topic", details.topics)):
        for _position, owner, value in sorted(ordered[kind], key=lambda item: item[0]):
            target.setdefault(owner, []).append(value)
    for listed in details.channel_ids.values():
        listed.sort(key=str)
    return details


async def usable_channel_ids(
    connection: AsyncConnection, organization_id: uuid.UUID, channel_ids: Sequence[uuid.UUID]
) -> set[uuid.UUID]:
    """Those of `channel_ids` that are connected channels of the organization."""
    result = await connection.execute(
        select(channels.c.id).where(
            channels.c.organization_id == organization_id,
            channels.c.id.in_(channel_ids),
            channels.c.disconnected_at.is_(None),
        )
    )
    return {row.id for row in result}
