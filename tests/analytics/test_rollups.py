"""The rollups (analytics/rollups.py, analytics/rollup_query.py) answer every query they take
exactly as the raw scan (analytics/query.py) does: on generated histories and queries, after
each way the raw rows change, after `rebuild`, after the upgrade that adds them, and after
`pressroom analytics rebuild`."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from sqlalchemy import delete
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy import update
from typer.testing import CliRunner

from pressroom.analytics.buckets import buckets_for
from pressroom.analytics.buckets import local_midnight
from pressroom.analytics.buckets import resolve_grouping
from pressroom.analytics.comparison import CUSTOM
from pressroom.analytics.comparison import MAX_RANGE
from pressroom.analytics.comparison import Comparison
from pressroom.analytics.comparison import TimeRange
from pressroom.analytics.comparison import comparison_for
from pressroom.analytics.details import run_details
from pressroom.analytics.metrics import METRICS
from pressroom.analytics.metrics import RAW_METRICS
from pressroom.analytics.models import AnalyticsDirty
from pressroom.analytics.models import AnalyticsFact
from pressroom.analytics.models import AnalyticsPostFact
from pressroom.analytics.models import AnalyticsRollup
from pressroom.analytics.models import TargetMetrics
from pressroom.analytics.params import AnalyticsQuery
from pressroom.analytics.parsing import CONTENT_KINDS
from pressroom.analytics.query import AggregateRow
from pressroom.analytics.query import report_connection
from pressroom.analytics.query import run_aggregates
from pressroom.analytics.recording import Observation
from pressroom.analytics.recording import record
from pressroom.analytics.report import assemble
from pressroom.analytics.rollup_query import run_rollups
from pressroom.analytics.rollups import apply_log
from pressroom.analytics.rollups import rebuild
from pressroom.channels.models import Channel
from pressroom.cli import app as cli
from pressroom.config import Settings
from pressroom.db import migrate
from pressroom.db import unit_of_work
from pressroom.posts.models import APPROVAL_STATUSES
from pressroom.posts.models import Post
from pressroom.posts.models import PostTag
from pressroom.posts.models import PostTarget
from pressroom.posts.models import PostTopic
from pressroom.runtime import Runtime
from tests.analytics.factory import Published
from tests.analytics.factory import Target
from tests.analytics.factory import make_channel
from tests.analytics.factory import publish
from tests.factories import SERVER_KEY
from tests.factories import Tenant
from tests.factories import make_tenant

runner = CliRunner()

# Data and queries land on 15-minute steps (the finest offset step of the tz database's
# zones: Kathmandu's +05:45, Chatham's +12:45) as well as on arbitrary instants.
SLOT = timedelta(minutes=15)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


# --- Queries, and the comparison of the two answers -----------------------------------------


def analytics_query(
    start: datetime,
    end: datetime,
    *,
    zone: str = "UTC",
    group_by: str = "auto",
    preset: str = "previous_period",
    custom: TimeRange | None = None,
    sort_by: str = "publishedAt",
    sort_order: str = "desc",
    page: int = 1,
    page_size: int = 5,
    channel_ids: tuple[uuid.UUID, ...] = (),
    tag_values: tuple[str, ...] = (),
    content_kinds: tuple[str, ...] = (),
) -> AnalyticsQuery:
    """The query analytics/params.py builds from these parameters."""
    current = TimeRange(start, end)
    tz = ZoneInfo(zone)
    unit = resolve_grouping(group_by, current)
    return AnalyticsQuery(
        range=current,
        timezone=zone,
        zone=tz,
        group_by=unit,
        buckets=tuple(buckets_for(current, tz, unit)),
        comparison=(
            Comparison(CUSTOM, custom)
            if custom is not None
            else comparison_for(preset, current, tz)
        ),
        channel_ids=channel_ids,
        tag_values=tag_values,
        content_kinds=content_kinds,
        metrics=METRICS,
        sort_by=sort_by,  # type: ignore[arg-type]
        sort_order=sort_order,  # type: ignore[arg-type]
        page=page,
        page_size=page_size,
    )


def comparable(rows: list[AggregateRow]) -> list[tuple[Any, ...]]:
    """The rows as sorted tuples; channel and post ids as canonical UUID text (SQLite's raw
    statement spells them as 32 hex digits)."""

    def key(row: AggregateRow) -> str | None:
        if row.section in ("channels", "page") and row.key is not None:
            return str(uuid.UUID(row.key))
        return row.key

    shaped = [
        (
            row.section,
            row.period,
            key(row),
            row.posts,
            tuple(row.sums[name] for name in RAW_METRICS),
            row.first_at,
        )
        for row in rows
    ]
    # (section, period, key) is unique in both answers.
    return sorted(shaped, key=lambda item: (item[0], item[1], item[2] is None, item[2] or ""))


async def assert_rollups_equal_raw(
    runtime: Runtime, organization_id: uuid.UUID, query: AnalyticsQuery
) -> None:
    async with report_connection(runtime) as connection:
        rolled = await run_rollups(connection, organization_id, query)
        raw = await run_aggregates(connection, organization_id, query)
    assert rolled is not None, "the rollups declined the query"
    assert comparable(rolled) == comparable(raw)


async def rollups_decline(
    runtime: Runtime, organization_id: uuid.UUID, query: AnalyticsQuery
) -> bool:
    async with report_connection(runtime) as connection:
        return await run_rollups(connection, organization_id, query) is None


async def apply(runtime: Runtime, organization_id: uuid.UUID) -> int:
    async with unit_of_work(runtime.sessions) as session:
        return await apply_log(session, organization_id)


async def raw_report(
    runtime: Runtime, organization_id: uuid.UUID, query: AnalyticsQuery
) -> dict[str, Any]:
    """The response body of the report built from the raw scan alone."""
    async with report_connection(runtime) as connection:
        rows = await run_aggregates(connection, organization_id, query)
        page_rows = sorted((r for r in rows if r.section == "page"), key=lambda r: r.posts or 0)
        page_ids = [uuid.UUID(str(r.key)) for r in page_rows]
        details = await run_details(connection, organization_id, query, page_ids)
    report = assemble(query, rows, page_rows, details)
    return report.model_dump(mode="json", by_alias=True)


# --- Generated histories and queries ----------------------------------------------------------

ZONES = ("UTC", "Asia/Kathmandu", "Australia/Lord_Howe", "America/St_Johns", "Europe/Berlin")
# Days of 2026 with a DST change in one of the zones (Berlin, Lord Howe's half-hour changes,
# St John's); the data and the queries gather around one of them.
ANCHORS = tuple(
    at(f"{day}T00:00:00Z")
    for day in ("2026-03-29", "2026-10-25", "2026-04-05", "2026-10-04", "2026-03-08", "2026-11-01")
)
DAY_US = 86_400_000_000
# Back by a week, about a month, a year: data in the calendar comparison ranges.
SHIFTS = (0, 0, 0, 0, 0, 0, 0, 0, -7, -28, -30, -31, -365)
PRESETS = (
    "previous_period",
    "previous_week",
    "previous_month",
    "previous_year",
    "none",
    "custom",
)
SORT_FIELDS = ("publishedAt", *METRICS)
KINDS = tuple(sorted(CONTENT_KINDS))[:3]
TAGS = ("launch", "spring", "Spring", "sale")
TOPICS = ("dst", "launch", "news")
MODELS = (None, None, "gpt-5", "claude-opus")


@cache
def landmarks(anchor: datetime) -> tuple[datetime, ...]:
    """Instants near `anchor` where a bucket or an offset changes: local midnights in every
    zone, and the instants of DST changes."""
    found: set[datetime] = set()
    for name in ZONES:
        zone = ZoneInfo(name)
        for days in range(-6, 7):
            found.add(local_midnight((anchor + timedelta(days=days)).date(), zone))
        for step in range(-6 * 96, 6 * 96):
            moment = anchor + step * SLOT
            if moment.astimezone(zone).utcoffset() != (moment - SLOT).astimezone(zone).utcoffset():
                found.add(moment)
    return tuple(sorted(found))


def nudged(moments: st.SearchStrategy[datetime]) -> st.SearchStrategy[datetime]:
    """Sometimes a microsecond or a millisecond beside the instant."""
    nudge = st.sampled_from((0, 0, 0, 0, 1, -1, 1000, -1000))
    return st.builds(lambda moment, us: moment + timedelta(microseconds=us), moments, nudge)


def instants(anchor: datetime, days: int = 3) -> st.SearchStrategy[datetime]:
    """Instants within days of `anchor`: on a landmark, on a 15-minute slot, on a second,
    or anywhere."""
    return nudged(
        st.one_of(
            st.sampled_from(landmarks(anchor)),
            st.integers(-days * 96, days * 96).map(lambda k: anchor + k * SLOT),
            st.integers(-days * 86_400, days * 86_400).map(lambda s: anchor + timedelta(seconds=s)),
            st.integers(-days * DAY_US, days * DAY_US).map(
                lambda us: anchor + timedelta(microseconds=us)
            ),
        )
    )


# Between two targets of one post: none, minutes, hours, days, anything up to three days.
GAPS = st.one_of(
    st.just(timedelta(0)),
    st.integers(1, 59).map(lambda m: timedelta(minutes=m)),
    st.integers(1, 23).map(lambda h: timedelta(hours=h)),
    st.integers(1, 4).map(lambda d: timedelta(days=d)),
    st.integers(1, 3 * DAY_US).map(lambda us: timedelta(microseconds=us)),
)
# Query lengths: an instant, whole slots, whole days (up to 45), anything up to 8 days.
SPANS = st.one_of(
    st.just(timedelta(0)),
    st.integers(1, 8 * 96).map(lambda k: k * SLOT),
    st.integers(1, 8).map(lambda d: timedelta(days=d)),
    st.integers(1, 45).map(lambda d: timedelta(days=d)),
    st.integers(1, 8 * DAY_US).map(lambda us: timedelta(microseconds=us)),
)
# A target's latest snapshot: none at all, or some metrics (small values, for ties and zeros).
SNAPSHOTS = st.one_of(
    st.none(),
    st.dictionaries(
        st.sampled_from(RAW_METRICS),
        st.one_of(st.integers(0, 20), st.integers(0, 10**9)),
        max_size=len(RAW_METRICS),
    ),
)


@dataclass(frozen=True)
class TargetSpec:
    channel: int
    kind: str
    status: str
    published_at: datetime | None
    metrics: dict[str, int] | None


@dataclass(frozen=True)
class PostSpec:
    targets: tuple[TargetSpec, ...]
    tags: tuple[str, ...]
    topics: tuple[str, ...]
    model: str | None
    approval: str
    deleted: bool


@dataclass(frozen=True)
class QuerySpec:
    start: datetime
    end: datetime
    zone: str
    group_by: str
    preset: str
    custom: TimeRange | None
    sort_by: str
    sort_order: str
    page: int
    page_size: int
    # Filters: indexes of the case's channels, campaign tags, content kinds.
    channels: tuple[int, ...] = ()
    tags: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()

    def build(self, channel_ids: list[uuid.UUID] | None = None) -> AnalyticsQuery:
        return analytics_query(
            self.start,
            self.end,
            zone=self.zone,
            group_by=self.group_by,
            preset=self.preset,
            custom=self.custom,
            sort_by=self.sort_by,
            sort_order=self.sort_order,
            page=self.page,
            page_size=self.page_size,
            channel_ids=tuple((channel_ids or [])[index] for index in self.channels),
            tag_values=self.tags,
            content_kinds=self.kinds,
        )

    def params(self, channel_ids: list[uuid.UUID] | None = None) -> dict[str, str | int]:
        found: dict[str, str | int] = {
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "timezone": self.zone,
            "groupBy": self.group_by,
            "comparison": self.preset,
            "sortBy": self.sort_by,
            "sortOrder": self.sort_order,
            "page": self.page,
            "pageSize": self.page_size,
        }
        if self.custom is not None:
            found["comparisonStart"] = self.custom.start.isoformat()
            found["comparisonEnd"] = self.custom.end.isoformat()
        if self.channels:
            found["channelIds"] = ",".join(str((channel_ids or [])[i]) for i in self.channels)
        if self.tags:
            found["tagValues"] = ",".join(self.tags)
        if self.kinds:
            found["contentKinds"] = ",".join(self.kinds)
        return found


@dataclass(frozen=True)
class Case:
    channels: int
    posts: tuple[PostSpec, ...]
    queries: tuple[QuerySpec, ...]


@st.composite
def post_specs(draw: st.DrawFn, anchor: datetime, channels: int) -> PostSpec:
    first = draw(instants(anchor, days=2)) + timedelta(days=draw(st.sampled_from(SHIFTS)))
    targets = []
    for index in range(draw(st.integers(1, 3))):
        moment = first
        if index:
            gap = draw(GAPS)
            moment = first + (gap if draw(st.booleans()) else -gap)
        status = draw(st.sampled_from(("published",) * 5 + ("failed", "scheduled", "canceled")))
        published_at: datetime | None = moment
        if status != "published" and draw(st.booleans()):
            published_at = None
        targets.append(
            TargetSpec(
                channel=draw(st.integers(0, channels - 1)),
                kind=draw(st.sampled_from(KINDS)),
                status=status,
                published_at=published_at,
                metrics=draw(SNAPSHOTS),
            )
        )
    return PostSpec(
        targets=tuple(targets),
        tags=tuple(draw(st.lists(st.sampled_from(TAGS), max_size=2, unique=True))),
        topics=tuple(draw(st.lists(st.sampled_from(TOPICS), max_size=2, unique=True))),
        model=draw(st.sampled_from(MODELS)),
        approval=draw(st.sampled_from(APPROVAL_STATUSES)),
        deleted=draw(st.sampled_from((False,) * 6 + (True,))),
    )


def subset(draw: st.DrawFn, values: tuple[Any, ...]) -> tuple[Any, ...]:
    """No filter half of the time; otherwise one or more of the values."""
    if draw(st.booleans()):
        return ()
    return tuple(draw(st.lists(st.sampled_from(values), min_size=1, max_size=2, unique=True)))


@st.composite
def query_specs(
    draw: st.DrawFn, anchor: datetime, published: tuple[datetime, ...], channels: int
) -> QuerySpec:
    """A query whose ends fall anywhere near the anchor, or on (or beside) a publication."""
    ends = st.one_of(instants(anchor), nudged(st.sampled_from(published)))
    start = draw(ends)
    if draw(st.booleans()):
        end = start + draw(SPANS)
    else:  # both ends drawn: on (or beside) a publication, or anywhere
        start, end = sorted((start, draw(ends)))
        end = min(end, start + MAX_RANGE)
    preset = draw(st.sampled_from(PRESETS))
    custom = None
    if preset == "custom":
        compared = draw(ends) + timedelta(days=draw(st.sampled_from(SHIFTS)))
        custom = TimeRange(compared, compared + draw(SPANS))
    return QuerySpec(
        start=start,
        end=end,
        zone=draw(st.sampled_from(ZONES)),
        group_by=draw(st.sampled_from(("auto", "day", "week", "month"))),
        preset=preset,
        custom=custom,
        sort_by=draw(st.sampled_from(SORT_FIELDS)),
        sort_order=draw(st.sampled_from(("asc", "desc"))),
        page=draw(st.integers(1, 3)),
        page_size=draw(st.integers(1, 4)),
        channels=subset(draw, tuple(range(channels))),
        tags=subset(draw, TAGS),
        kinds=subset(draw, KINDS),
    )


@st.composite
def cases(draw: st.DrawFn) -> Case:
    anchor = draw(st.sampled_from(ANCHORS))
    channels = draw(st.integers(1, 3))
    posts = tuple(draw(st.lists(post_specs(anchor, channels), min_size=3, max_size=12)))
    published = tuple(
        target.published_at
        for post in posts
        for target in post.targets
        if target.published_at is not None
    )
    return Case(
        channels=channels,
        posts=posts,
        queries=tuple(
            draw(
                st.lists(
                    query_specs(anchor, published or (anchor,), channels), min_size=2, max_size=4
                )
            )
        ),
    )


async def store(runtime: Runtime, organization_id: uuid.UUID, case: Case) -> list[uuid.UUID]:
    """The case's posts as rows, in one transaction (as tests/analytics/factory.py writes
    them), their snapshots through `record`; the ids of the case's channels."""
    org = organization_id
    observations = []
    async with unit_of_work(runtime.sessions) as session:
        made = [
            Channel(
                organization_id=org,
                provider="sandbox",
                name=f"Channel {index}",
                handle=f"channel{index}",
                health_state="healthy",
                connected_at=at("2026-01-01T00:00:00Z"),
            )
            for index in range(case.channels)
        ]
        session.add_all(made)
        await session.flush()
        channels = [channel.id for channel in made]
        for spec in case.posts:
            published = [t.published_at for t in spec.targets if t.status == "published"]
            post = Post(
                organization_id=org,
                text="generated",
                media_ids={"ids": []},
                status="published",
                model=spec.model,
                approval_required=spec.approval != "not_required",
                approval_status=spec.approval,
                first_published_at=min((p for p in published if p), default=None),
                deleted_at=at("2027-01-01T00:00:00Z") if spec.deleted else None,
            )
            session.add(post)
            await session.flush()
            for kind, values in ((PostTag, spec.tags), (PostTopic, spec.topics)):
                for position, value in enumerate(values):
                    session.add(
                        kind(post_id=post.id, value=value, organization_id=org, position=position)
                    )
            for target_spec in spec.targets:
                target = PostTarget(
                    organization_id=org,
                    post_id=post.id,
                    channel_id=channels[target_spec.channel],
                    provider="sandbox",
                    content_kind=target_spec.kind,
                    options={},
                    status=target_spec.status,
                    published_at=target_spec.published_at,
                )
                session.add(target)
                await session.flush()
                if target_spec.metrics is not None:
                    observations.append(
                        Observation(
                            organization_id=org,
                            target_id=target.id,
                            published_at=target_spec.published_at or at("2027-01-01T00:00:00Z"),
                            captured_at=at("2027-01-02T00:00:00Z"),
                            values=target_spec.metrics,
                            source="import",
                        )
                    )
        await record(session, observations)
    return channels


# About a second an example on SQLite (most of it the raw statement of each query).
EXAMPLES = 25


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=cases())
async def test_rollups_answer_generated_queries_as_the_raw_scan(runtime: Runtime, case: Case):
    tenant = await make_tenant(runtime, name=f"Rollups {uuid.uuid4().hex[:8]}")
    channels = await store(runtime, tenant.organization_id, case)
    await apply(runtime, tenant.organization_id)
    for spec in case.queries:
        await assert_rollups_equal_raw(runtime, tenant.organization_id, spec.build(channels))


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=cases())
async def test_the_report_over_http_is_the_raw_report(
    runtime: Runtime, client: httpx.AsyncClient, case: Case
):
    """The whole request: the route applies the log, then answers from the rollups."""
    tenant = await make_tenant(runtime, name=f"Rollups {uuid.uuid4().hex[:8]}")
    channels = await store(runtime, tenant.organization_id, case)
    spec = case.queries[0]
    response = await client.get(
        "/api/v1/analytics", params=spec.params(channels), headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    query = spec.build(channels)
    assert not await rollups_decline(runtime, tenant.organization_id, query)
    assert response.json() == await raw_report(runtime, tenant.organization_id, query)


@pytest.mark.parametrize(
    ("start", "end", "zone"),
    [
        ("9999-12-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "America/St_Johns"),
        ("9999-12-31T23:50:00Z", "9999-12-31T23:59:59Z", "UTC"),
        ("0001-01-01T00:00:00Z", "0001-01-01T12:00:00Z", "UTC"),
    ],
    ids=["last-day-in-a-zone-behind-utc", "last-slot", "first-day"],
)
async def test_ranges_at_the_ends_of_the_calendar_are_answered_from_the_rollups(
    runtime: Runtime, tenant: Tenant, start: str, end: str, zone: str
):
    """No bound of the rollup query steps past year 1 or 9999 (no slot or day after the last
    one, no post reaching further than the calendar)."""
    org = tenant.organization_id
    channel = await make_channel(runtime, org)
    # Not at 23:59:59.999999 itself: the raw scan's last bucket has no bound past that
    # instant (analytics/buckets.py `_just_after`), and leaves a target published there out.
    for first, second in (
        ("0001-01-01T00:05:00Z", "0001-01-02T00:00:00Z"),
        ("9999-12-31T23:50:00Z", "9999-12-31T23:59:59.999998Z"),
    ):
        await publish(
            runtime,
            org,
            [
                Target(channel, at(first), {"impressions": 3, "likes": 1}),
                Target(channel, at(second), {"impressions": 5}, content_kind="reel"),
            ],
        )
    await apply(runtime, org)
    for preset in ("previous_period", "previous_year", "none"):
        query = analytics_query(at(start), at(end), zone=zone, preset=preset)
        await assert_rollups_equal_raw(runtime, org, query)


# --- A fixed history, and each way its raw rows change -----------------------------------------


@dataclass
class History:
    main: uuid.UUID
    second: uuid.UUID
    posts: dict[str, Published]


async def publish_history(runtime: Runtime, organization_id: uuid.UUID) -> History:
    """Posts around Berlin's DST change of 2026-03-29, targets minutes, hours and days apart."""
    org = organization_id
    main = await make_channel(runtime, org, name="Main")
    second = await make_channel(runtime, org, name="Second")
    posts = {
        "crossing": await publish(
            runtime,
            org,
            [
                Target(main, at("2026-03-28T22:50:00Z"), {"impressions": 100, "likes": 7}),
                Target(
                    second,
                    at("2026-03-29T01:20:00Z"),
                    {"impressions": 40, "comments": 2},
                    content_kind="reel",
                ),
            ],
            tags=("spring",),
            topics=("dst",),
            model="gpt-5",
        ),
        "midnight": await publish(
            runtime,
            org,
            [Target(main, at("2026-03-29T00:00:00Z"), {"impressions": 60, "shares": 3})],
            tags=("spring", "launch"),
            approval="approved",
        ),
        "minutes": await publish(
            runtime,
            org,
            [
                Target(main, at("2026-03-30T10:07:00Z"), {"views": 90}),
                Target(main, at("2026-03-30T10:11:30Z"), None),
                Target(
                    second,
                    at("2026-03-30T10:11:30Z"),
                    {"impressions": 0, "likes": 1},
                    content_kind="story",
                ),
            ],
            topics=("dst", "launch"),
        ),
        "earlier": await publish(
            runtime,
            org,
            [Target(second, at("2026-03-21T18:15:00Z"), {"impressions": 500, "clicks": 9})],
            model="claude-opus",
            approval="pending",
        ),
        "later": await publish(
            runtime,
            org,
            [
                Target(main, at("2026-04-02T08:00:00.250Z"), {"reach": 33}),
                Target(second, at("2026-04-05T12:00:00Z"), {"impressions": 10, "saves": 4}),
            ],
            tags=("launch",),
        ),
        "unpublished": await publish(
            runtime,
            org,
            [
                Target(main, None, None, status="failed"),
                Target(second, at("2026-03-29T00:00:00Z"), {"impressions": 5}, status="canceled"),
            ],
        ),
    }
    await apply(runtime, org)
    return History(main, second, posts)


PROBES = (
    analytics_query(at("2026-03-20T00:00:00Z"), at("2026-04-10T23:59:59Z"), zone="Europe/Berlin"),
    analytics_query(
        at("2026-03-29T00:30:00Z"),
        at("2026-04-03T00:00:00Z"),
        preset="previous_week",
        sort_by="impressions",
    ),
    analytics_query(
        at("2026-03-25T00:00:00Z"),
        at("2026-03-29T00:00:00Z"),
        zone="Asia/Kathmandu",
        preset="none",
        sort_by="engagementRate",
        sort_order="asc",
    ),
    analytics_query(
        at("2026-03-28T23:00:00.5Z"),
        at("2026-04-05T11:59:59.999999Z"),
        zone="Australia/Lord_Howe",
        group_by="week",
        custom=TimeRange(at("2026-03-01T00:00:00Z"), at("2026-03-28T23:00:00.499999Z")),
        sort_by="likes",
        page=2,
        page_size=1,
    ),
    analytics_query(
        at("2026-03-01T00:00:00Z"),
        at("2026-04-30T23:59:59Z"),
        zone="America/St_Johns",
        group_by="month",
        preset="previous_month",
        sort_by="engagements",
        sort_order="asc",
    ),
    # Filtered: answered from the facts (analytics/query.py, `from_facts`).
    analytics_query(
        at("2026-03-20T00:00:00Z"),
        at("2026-04-10T23:59:59Z"),
        zone="Europe/Berlin",
        tag_values=("spring", "launch"),
        sort_by="impressions",
    ),
    analytics_query(
        at("2026-03-28T00:00:00Z"),
        at("2026-04-05T00:00:00Z"),
        zone="Asia/Kathmandu",
        content_kinds=("reel", "story"),
        preset="previous_week",
    ),
)
WHOLE = PROBES[0]


async def assert_probes_equal_raw(runtime: Runtime, organization_id: uuid.UUID) -> None:
    for query in PROBES:
        await assert_rollups_equal_raw(runtime, organization_id, query)


async def section_keys(
    runtime: Runtime, organization_id: uuid.UUID, query: AnalyticsQuery, section: str
) -> set[str | None]:
    async with report_connection(runtime) as connection:
        rows = await run_rollups(connection, organization_id, query)
    assert rows is not None
    return {row.key for row in rows if row.section == section and row.period == 0}


async def fact_count(runtime: Runtime, organization_id: uuid.UUID) -> int:
    async with unit_of_work(runtime.sessions) as session:
        found = await session.scalar(
            select(func.count())
            .select_from(AnalyticsFact)
            .where(AnalyticsFact.organization_id == organization_id)
        )
    return int(found or 0)


async def test_the_probes_agree_on_the_history_as_published(runtime: Runtime, tenant: Tenant):
    await publish_history(runtime, tenant.organization_id)
    await assert_probes_equal_raw(runtime, tenant.organization_id)
    # Published targets of the posts, none of the unpublished post's.
    assert await fact_count(runtime, tenant.organization_id) == 9


async def test_a_post_deleted_after_publishing_leaves_the_rollups(runtime: Runtime, tenant: Tenant):
    org = tenant.organization_id
    history = await publish_history(runtime, org)
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(Post)
            .where(Post.id == history.posts["crossing"].post_id)
            .values(deleted_at=at("2026-04-06T00:00:00Z"))
        )
    assert await rollups_decline(runtime, org, WHOLE)  # the triggers logged the change
    await apply(runtime, org)
    await assert_probes_equal_raw(runtime, org)
    assert await fact_count(runtime, org) == 7


async def test_tags_topics_model_and_approval_changed_on_a_published_post_reach_the_rollups(
    runtime: Runtime, tenant: Tenant
):
    org = tenant.organization_id
    history = await publish_history(runtime, org)
    post_id = history.posts["crossing"].post_id
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(Post).where(Post.id == post_id).values(model=None, approval_status="rejected")
        )
        await session.execute(delete(PostTag).where(PostTag.post_id == post_id))
        session.add(PostTag(post_id=post_id, value="autumn", organization_id=org, position=0))
        session.add(PostTopic(post_id=post_id, value="news", organization_id=org, position=1))
    assert await rollups_decline(runtime, org, WHOLE)
    await apply(runtime, org)
    await assert_probes_equal_raw(runtime, org)
    assert "autumn" in await section_keys(runtime, org, WHOLE, "campaigns")
    assert "gpt-5" not in await section_keys(runtime, org, WHOLE, "models")
    assert "rejected" in await section_keys(runtime, org, WHOLE, "approvals")


async def test_a_second_target_published_days_later_joins_its_post(
    runtime: Runtime, tenant: Tenant
):
    org = tenant.organization_id
    history = await publish_history(runtime, org)
    post_id = history.posts["midnight"].post_id
    async with unit_of_work(runtime.sessions) as session:
        target = PostTarget(
            organization_id=org,
            post_id=post_id,
            channel_id=history.second,
            provider="sandbox",
            content_kind="carousel",
            options={},
            status="scheduled",
        )
        session.add(target)
        await session.flush()
        target_id = target.id
    await assert_probes_equal_raw(runtime, org)  # a scheduled target counts nowhere
    later = at("2026-04-01T23:59:59.999999Z")
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(PostTarget)
            .where(PostTarget.id == target_id)
            .values(status="published", published_at=later)
        )
    assert await rollups_decline(runtime, org, WHOLE)
    await apply(runtime, org)
    await assert_probes_equal_raw(runtime, org)
    # Its first metrics, through the poller's path.
    async with unit_of_work(runtime.sessions) as session:
        await record(
            session,
            [
                Observation(
                    organization_id=org,
                    target_id=target_id,
                    published_at=later,
                    captured_at=at("2026-04-02T06:00:00Z"),
                    values={"impressions": 77, "likes": 5},
                    source="poll",
                )
            ],
        )
    await assert_probes_equal_raw(runtime, org)
    assert await fact_count(runtime, org) == 10


async def test_a_newer_snapshot_updates_the_rollups_in_its_own_transaction(
    runtime: Runtime, tenant: Tenant
):
    org = tenant.organization_id
    history = await publish_history(runtime, org)
    crossing = history.posts["crossing"]
    minutes = history.posts["minutes"]
    async with unit_of_work(runtime.sessions) as session:
        await record(
            session,
            [
                Observation(
                    organization_id=org,
                    target_id=crossing.target_ids[1],
                    published_at=at("2026-03-29T01:20:00Z"),
                    captured_at=at("2026-04-08T00:00:00Z"),
                    values={"impressions": 4000, "comments": 20, "shares": 1},
                    source="poll",
                ),
                # The target that had no snapshot yet.
                Observation(
                    organization_id=org,
                    target_id=minutes.target_ids[1],
                    published_at=at("2026-03-30T10:11:30Z"),
                    captured_at=at("2026-04-08T00:00:00Z"),
                    values={"impressions": 12, "clicks": 3},
                    source="poll",
                ),
            ],
        )
    # Nothing is left for a report to apply: `record` refreshed the posts itself.
    assert not await rollups_decline(runtime, org, WHOLE)
    await assert_probes_equal_raw(runtime, org)


async def test_a_target_leaving_published_leaves_the_rollups(runtime: Runtime, tenant: Tenant):
    org = tenant.organization_id
    history = await publish_history(runtime, org)
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(PostTarget)
            .where(PostTarget.id == history.posts["crossing"].target_ids[0])
            .values(status="failed")
        )
    assert await rollups_decline(runtime, org, WHOLE)
    await apply(runtime, org)
    await assert_probes_equal_raw(runtime, org)
    assert await fact_count(runtime, org) == 8


async def stored_rows(runtime: Runtime, organization_id: uuid.UUID) -> dict[str, set[Any]]:
    """The organization's facts, post sums and rollup rows (rollup rows whose every count
    came back to zero left out: a refresh takes its share back without deleting them)."""
    found: dict[str, set[Any]] = {}
    async with unit_of_work(runtime.sessions) as session:
        for model in (AnalyticsFact, AnalyticsPostFact, AnalyticsRollup):
            table = model.__table__
            result = await session.execute(
                select(table).where(table.c.organization_id == organization_id)
            )
            found[table.name] = {tuple(row) for row in result}
    rollup_columns = AnalyticsRollup.__table__.c.keys()
    counts = [rollup_columns.index(name) for name in ("targets", "posts", *RAW_METRICS)]
    found["analytics_rollups"] = {
        row for row in found["analytics_rollups"] if any(row[i] for i in counts)
    }
    return found


async def test_rebuild_gives_the_rows_of_the_incremental_state(runtime: Runtime, tenant: Tenant):
    org = tenant.organization_id
    history = await publish_history(runtime, org)
    # Some history of changes, each applied incrementally.
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(Post)
            .where(Post.id == history.posts["later"].post_id)
            .values(model="gpt-5", approval_status="approved")
        )
        await session.execute(
            update(PostTarget)
            .where(PostTarget.id == history.posts["minutes"].target_ids[0])
            .values(status="canceled")
        )
        await session.execute(
            update(Post)
            .where(Post.id == history.posts["earlier"].post_id)
            .values(deleted_at=at("2026-04-06T00:00:00Z"))
        )
    await apply(runtime, org)
    async with unit_of_work(runtime.sessions) as session:
        await record(
            session,
            [
                Observation(
                    organization_id=org,
                    target_id=history.posts["crossing"].target_ids[0],
                    published_at=at("2026-03-28T22:50:00Z"),
                    captured_at=at("2026-04-08T00:00:00Z"),
                    values={"impressions": 150},
                    source="poll",
                )
            ],
        )
    incremental = await stored_rows(runtime, org)
    async with unit_of_work(runtime.sessions) as session:
        posts = await rebuild(session, org)
    # Every post with a published target is gone through, a deleted one too (it adds nothing).
    assert posts == 5
    assert await stored_rows(runtime, org) == incremental
    assert all(incremental.values())
    await assert_probes_equal_raw(runtime, org)


# --- The upgrade that adds the rollups, and the command that rebuilds them ---------------------

POSTGRES_SERVER_URL = os.environ.get("PRESSROOM_TEST_DATABASE_URL")


def _admin_sql(statement: str) -> None:
    import asyncpg

    async def run() -> None:
        assert POSTGRES_SERVER_URL is not None
        connection = await asyncpg.connect(POSTGRES_SERVER_URL)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    asyncio.run(run())


@pytest.fixture
def empty_database_url(tmp_path: Path) -> Iterator[str]:
    """A database of its own, with no schema yet."""
    if not POSTGRES_SERVER_URL:
        yield f"sqlite:///{tmp_path / 'before.db'}"
        return
    name = f"pressroom_rollups_{secrets.token_hex(4)}"
    _admin_sql(f'CREATE DATABASE "{name}"')
    try:
        yield f"{POSTGRES_SERVER_URL.rpartition('/')[0]}/{name}"
    finally:
        _admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def use_database(monkeypatch: pytest.MonkeyPatch, url: str, data_dir: Path) -> Settings:
    """The command line's environment for `url`; the settings of a runtime on it."""
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", url)
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(data_dir))
    monkeypatch.setenv("PRESSROOM_SECRET_KEY", SERVER_KEY)
    return Settings(database_url=url, data_dir=data_dir, secret_key=SERVER_KEY, redis_url=None)


async def invoke(*args: str) -> dict[str, Any]:
    """A `pressroom` command with `--json` (in a thread: it runs its own event loop)."""
    result = await asyncio.to_thread(runner.invoke, cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


async def test_db_upgrade_fills_the_rollups_from_the_history_stored_before_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, empty_database_url: str
):
    url = empty_database_url
    settings = use_database(monkeypatch, url, tmp_path / "data")
    await asyncio.to_thread(migrate, url, "0013_document_media")
    before = Runtime.build(settings)
    try:
        org = (await make_tenant(before, name="Before the rollups")).organization_id
        # Without snapshots (recording one refreshes the rollups, which this revision has not):
        # the latest values are written as rows below, as that revision's poller wrote them.
        history = await publish_history_without_rollups(before, org)
    finally:
        await before.close()

    upgraded = await invoke("db", "upgrade")
    assert upgraded["applied"] == ["0014_analytics_rollups", "0015_credential_changes"]

    after = Runtime.build(settings)
    try:
        async with unit_of_work(after.sessions) as session:
            assert await session.scalar(select(func.count()).select_from(AnalyticsDirty)) == 0
            published = await session.scalar(
                select(func.count())
                .select_from(PostTarget)
                .join(Post, Post.id == PostTarget.post_id)
                .where(PostTarget.status == "published", Post.deleted_at.is_(None))
            )
        assert published == history
        assert await fact_count(after, org) == published
        await assert_probes_equal_raw(after, org)
    finally:
        await after.close()


async def publish_history_without_rollups(runtime: Runtime, organization_id: uuid.UUID) -> int:
    """Published posts at revision 0013, their latest metrics written as rows; returns the
    published targets of live posts."""
    org = organization_id
    main = await make_channel(runtime, org, name="Main")
    second = await make_channel(runtime, org, name="Second")
    specs: list[tuple[list[tuple[Target, dict[str, int] | None]], dict[str, Any]]] = [
        (
            [
                (Target(main, at("2026-03-28T22:50:00Z"), None), {"impressions": 100, "likes": 7}),
                (Target(second, at("2026-03-29T01:20:00Z"), None), {"impressions": 40}),
            ],
            {"tags": ("spring",), "topics": ("dst",), "model": "gpt-5"},
        ),
        ([(Target(main, at("2026-03-29T00:00:00Z"), None), None)], {"approval": "approved"}),
        (
            [
                (Target(second, at("2026-03-21T18:15:00Z"), None), {"impressions": 500}),
                (Target(main, at("2026-04-02T08:00:00.250Z"), None), {"reach": 33}),
            ],
            {"tags": ("launch",)},
        ),
        ([(Target(main, at("2026-03-30T10:07:00Z"), None), {"views": 9})], {"deleted": True}),
        ([(Target(main, None, None, status="failed"), None)], {}),
    ]
    published = 0
    for targets, options in specs:
        made = await publish(runtime, org, [target for target, _ in targets], **options)
        async with unit_of_work(runtime.sessions) as session:
            for target_id, (target, values) in zip(made.target_ids, targets, strict=True):
                if values is not None and target.published_at is not None:
                    session.add(
                        TargetMetrics(
                            target_id=target_id,
                            organization_id=org,
                            published_at=target.published_at,
                            captured_at=at("2026-04-06T00:00:00Z"),
                            **{key: values.get(key, 0) for key in RAW_METRICS},
                        )
                    )
        if not options.get("deleted"):
            published += sum(1 for target, _ in targets if target.status == "published")
    return published


async def test_the_rebuild_command_prints_the_posts_and_restores_the_rollups(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    runtime: Runtime,
    tenant: Tenant,
    database_url: str,
):
    org = tenant.organization_id
    await publish_history(runtime, org)
    # Rollup rows lost: the rollups no longer say what the raw rows do.
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(delete(AnalyticsRollup).where(AnalyticsRollup.organization_id == org))
    async with report_connection(runtime) as connection:
        lost = await run_rollups(connection, org, WHOLE)
        raw = await run_aggregates(connection, org, WHOLE)
    assert lost is not None and comparable(lost) != comparable(raw)

    use_database(monkeypatch, database_url, tmp_path / "data")
    assert await invoke("analytics", "rebuild", "--org", str(org)) == {"posts": 5}
    await assert_probes_equal_raw(runtime, org)
