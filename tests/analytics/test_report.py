"""GET /api/v1/analytics: attribution, comparison, breakdowns, filters, sorting and paging,
with expectations computed by hand (contract section 9)."""

from __future__ import annotations

import itertools
import uuid
from datetime import UTC
from datetime import datetime
from typing import Any

import httpx
import pytest

from pressroom.analytics.recording import Observation
from pressroom.analytics.recording import record
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from tests.analytics.factory import Target
from tests.analytics.factory import make_channel
from tests.analytics.factory import publish
from tests.factories import Tenant

MARCH = {"start": "2026-03-01T00:00:00Z", "end": "2026-03-31T23:59:59Z"}


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


async def report(client: httpx.AsyncClient, tenant: Tenant, **params: Any) -> dict[str, Any]:
    response = await client.get("/api/v1/analytics", params=params, headers=tenant.headers)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def row(rows: list[dict[str, Any]], key: Any) -> dict[str, Any]:
    found = [r for r in rows if r["key"] == key]
    assert len(found) == 1, (key, rows)
    return found[0]


@pytest.fixture
async def channel(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    return await make_channel(runtime, tenant.organization_id, name="Main")


@pytest.fixture
async def second(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    return await make_channel(runtime, tenant.organization_id, name="Second")


async def test_totals_compare_the_range_with_the_previous_period(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    await publish(runtime, org, [Target(channel, at("2026-03-05T10:00:00Z"), {"impressions": 700})])
    await publish(runtime, org, [Target(channel, at("2026-03-20T10:00:00Z"), {"impressions": 500})])
    # March is 31 days: the previous period is 2026-01-29T00:00:00Z - 2026-02-28T23:59:59Z.
    await publish(
        runtime, org, [Target(channel, at("2026-02-01T10:00:00Z"), {"impressions": 1000})]
    )
    await publish(runtime, org, [Target(channel, at("2026-01-20T10:00:00Z"), {"impressions": 99})])

    body = await report(client, tenant, **MARCH, metrics="impressions")

    assert body["comparison"] == {
        "preset": "previous_period",
        "start": "2026-01-29T00:00:00.000Z",
        "end": "2026-02-28T23:59:59.000Z",
    }
    assert body["totals"] == {
        "impressions": {"value": 1200, "previous": 1000, "change": 200, "changeRatio": 0.2}
    }
    assert body["range"] == {
        "start": "2026-03-01T00:00:00.000Z",
        "end": "2026-03-31T23:59:59.000Z",
        "timezone": "UTC",
        "groupBy": "day",
    }
    assert body["metrics"] == ["impressions"]
    assert body["posts"]["totalItems"] == 2


async def test_comparison_none_makes_every_previous_null(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    await publish(
        runtime,
        tenant.organization_id,
        [Target(channel, at("2026-03-05T10:00:00Z"), {"likes": 3})],
        tags=("spring",),
        topics=("pricing",),
    )
    body = await report(client, tenant, **MARCH, comparison="none", metrics="likes")
    assert body["comparison"] is None
    assert body["totals"]["likes"] == {
        "value": 3,
        "previous": None,
        "change": None,
        "changeRatio": None,
    }
    for section in body["breakdowns"].values():
        assert section, "every breakdown has a row"
        assert all(r["previous"] is None for r in section)


async def test_custom_comparison_range_overrides_the_preset(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    await publish(runtime, org, [Target(channel, at("2026-03-05T10:00:00Z"), {"likes": 10})])
    await publish(runtime, org, [Target(channel, at("2025-12-24T10:00:00Z"), {"likes": 4})])
    await publish(runtime, org, [Target(channel, at("2026-02-10T10:00:00Z"), {"likes": 50})])

    body = await report(
        client,
        tenant,
        **MARCH,
        comparison="previous_week",
        comparisonStart="2025-12-20T00:00:00Z",
        comparisonEnd="2025-12-31T23:59:59Z",
        metrics="likes",
    )
    assert body["comparison"] == {
        "preset": "custom",
        "start": "2025-12-20T00:00:00.000Z",
        "end": "2025-12-31T23:59:59.000Z",
    }
    assert body["totals"]["likes"] == {"value": 10, "previous": 4, "change": 6, "changeRatio": 1.5}


async def test_previous_week_compares_the_same_days_a_week_earlier(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    await publish(runtime, org, [Target(channel, at("2026-03-10T10:00:00Z"), {"clicks": 8})])
    await publish(runtime, org, [Target(channel, at("2026-03-03T10:00:00Z"), {"clicks": 2})])
    await publish(runtime, org, [Target(channel, at("2026-03-06T10:00:00Z"), {"clicks": 100})])
    body = await report(
        client,
        tenant,
        start="2026-03-09T00:00:00Z",
        end="2026-03-15T23:59:59Z",
        comparison="previous_week",
        metrics="clicks",
    )
    assert body["comparison"]["start"] == "2026-03-02T00:00:00.000Z"
    assert body["comparison"]["end"] == "2026-03-08T23:59:59.000Z"
    # The comparison week also holds the 03-06 post: 2 + 100.
    assert body["totals"]["clicks"] == {
        "value": 8,
        "previous": 102,
        "change": -94,
        "changeRatio": -94 / 102,
    }


async def test_previous_month_from_march_31_compares_with_february_28(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    await publish(runtime, org, [Target(channel, at("2026-03-31T12:00:00Z"), {"shares": 5})])
    await publish(runtime, org, [Target(channel, at("2026-02-28T12:00:00Z"), {"shares": 4})])
    body = await report(
        client,
        tenant,
        start="2026-03-31T00:00:00Z",
        end="2026-03-31T23:59:59Z",
        comparison="previous_month",
        metrics="shares",
    )
    assert body["comparison"] == {
        "preset": "previous_month",
        "start": "2026-02-28T00:00:00.000Z",
        "end": "2026-02-28T23:59:59.000Z",
    }
    assert body["totals"]["shares"]["previous"] == 4


async def test_previous_year_compares_with_the_same_dates_a_year_earlier(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    await publish(runtime, org, [Target(channel, at("2026-03-15T12:00:00Z"), {"saves": 7})])
    await publish(runtime, org, [Target(channel, at("2025-03-15T12:00:00Z"), {"saves": 0})])
    body = await report(
        client, tenant, **MARCH, comparison="previous_year", timezone="Europe/Berlin"
    )
    assert body["comparison"]["start"] == "2025-03-01T00:00:00.000Z"
    assert body["totals"]["saves"] == {"value": 7, "previous": 0, "change": 7, "changeRatio": None}
    assert body["breakdowns"]["channels"][0]["previous"]["saves"] == 0


async def test_a_post_with_two_tags_counts_in_both_campaign_rows(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    await publish(
        runtime,
        org,
        [Target(channel, at("2026-03-05T10:00:00Z"), {"impressions": 100})],
        tags=("spring", "launch"),
    )
    await publish(
        runtime,
        org,
        [Target(channel, at("2026-03-06T10:00:00Z"), {"impressions": 40})],
        tags=("spring",),
    )
    await publish(runtime, org, [Target(channel, at("2026-03-07T10:00:00Z"), {"impressions": 1})])
    body = await report(client, tenant, **MARCH, metrics="impressions")
    campaigns = body["breakdowns"]["campaigns"]
    assert [(r["key"], r["posts"], r["values"]["impressions"]) for r in campaigns] == [
        ("spring", 2, 140),
        ("launch", 1, 100),
    ]
    assert row(campaigns, "launch")["label"] == "launch"
    assert body["totals"]["impressions"]["value"] == 141  # each post once in the totals


async def test_posts_without_a_model_form_the_row_with_key_null(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    await publish(
        runtime, org, [Target(channel, at("2026-03-05T10:00:00Z"), {"likes": 1})], model="gpt-5"
    )
    await publish(runtime, org, [Target(channel, at("2026-03-06T10:00:00Z"), {"likes": 2})])
    await publish(runtime, org, [Target(channel, at("2026-03-07T10:00:00Z"), {"likes": 4})])
    models = (await report(client, tenant, **MARCH, metrics="likes"))["breakdowns"]["models"]
    assert row(models, None) == {
        "key": None,
        "label": "Written by a person",
        "posts": 2,
        "values": {"likes": 6},
        "previous": {"likes": 0},
    }
    assert row(models, "gpt-5")["values"] == {"likes": 1}


async def test_engagement_rate_is_a_ratio_of_sums_not_an_average_of_ratios(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    # Rates 50/100 = 0.5 and 9/900 = 0.01 average 0.255; the rate of the sums is 59/1000.
    await publish(
        runtime,
        org,
        [Target(channel, at("2026-03-05T10:00:00Z"), {"impressions": 100, "likes": 50})],
    )
    await publish(
        runtime,
        org,
        [
            Target(
                channel, at("2026-03-06T10:00:00Z"), {"impressions": 900, "likes": 5, "clicks": 4}
            )
        ],
    )
    body = await report(client, tenant, **MARCH, metrics="engagements,engagementRate")
    assert body["totals"]["engagements"]["value"] == 59
    assert body["totals"]["engagementRate"]["value"] == pytest.approx(0.059)
    assert row(body["breakdowns"]["channels"], str(channel))["values"]["engagementRate"] == (
        pytest.approx(0.059)
    )


async def test_engagement_rate_is_null_without_impressions(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    await publish(
        runtime, tenant.organization_id, [Target(channel, at("2026-03-05T10:00:00Z"), {"likes": 9})]
    )
    body = await report(client, tenant, **MARCH, comparison="none", metrics="engagementRate")
    assert body["totals"]["engagementRate"] == {
        "value": None,
        "previous": None,
        "change": None,
        "changeRatio": None,
    }
    assert body["posts"]["items"][0]["values"] == {"engagementRate": None}


async def test_filters_are_and_across_parameters_and_or_within_one(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    channel: uuid.UUID,
    second: uuid.UUID,
):
    org = tenant.organization_id
    third = await make_channel(runtime, org, name="Third", provider="instagram")
    when = at("2026-03-05T10:00:00Z")
    await publish(runtime, org, [Target(channel, when, {"likes": 1})], tags=("a",))
    await publish(runtime, org, [Target(second, when, {"likes": 2})], tags=("b",))
    await publish(
        runtime, org, [Target(third, when, {"likes": 4}, content_kind="reel")], tags=("a",)
    )
    await publish(runtime, org, [Target(channel, when, {"likes": 8})], tags=("c",))
    await publish(runtime, org, [Target(second, when, {"likes": 16})])

    async def likes(**params: str) -> int:
        body = await report(client, tenant, **MARCH, metrics="likes", **params)
        return int(body["totals"]["likes"]["value"])

    assert await likes() == 31
    assert await likes(channelIds=f"{channel},{second}") == 1 + 2 + 8 + 16
    assert await likes(tagValues="a,b") == 1 + 2 + 4
    assert await likes(channelIds=f"{channel},{second}", tagValues="a,b") == 1 + 2
    assert await likes(contentKinds="reel") == 4
    assert await likes(contentKinds="post", tagValues="a") == 1
    # A repeated parameter is the same as a comma-separated one.
    repeated = await client.get(
        "/api/v1/analytics",
        params=[*MARCH.items(), ("metrics", "likes"), ("tagValues", "a"), ("tagValues", "b")],
        headers=tenant.headers,
    )
    assert repeated.json()["totals"]["likes"]["value"] == 7


async def test_campaign_filter_limits_the_campaign_rows_to_the_values_asked_for(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    await publish(
        runtime,
        tenant.organization_id,
        [Target(channel, at("2026-03-05T10:00:00Z"), {"likes": 1})],
        tags=("a", "b"),
    )
    body = await report(client, tenant, **MARCH, tagValues="a")
    assert [r["key"] for r in body["breakdowns"]["campaigns"]] == ["a"]


async def test_sorting_by_a_metric_breaks_ties_by_published_at_then_post_id(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    early = await publish(runtime, org, [Target(channel, at("2026-03-02T10:00:00Z"), {"likes": 5})])
    late = await publish(runtime, org, [Target(channel, at("2026-03-09T10:00:00Z"), {"likes": 5})])
    top = await publish(runtime, org, [Target(channel, at("2026-03-05T10:00:00Z"), {"likes": 9})])
    low = await publish(runtime, org, [Target(channel, at("2026-03-06T10:00:00Z"), {"likes": 1})])
    same_a = await publish(
        runtime, org, [Target(channel, at("2026-03-07T10:00:00Z"), {"likes": 3})]
    )
    same_b = await publish(
        runtime, org, [Target(channel, at("2026-03-07T10:00:00Z"), {"likes": 3})]
    )
    small, big = sorted([same_a.post_id, same_b.post_id])

    async def order(direction: str) -> list[uuid.UUID]:
        body = await report(client, tenant, **MARCH, sortBy="likes", sortOrder=direction)
        return [uuid.UUID(item["postId"]) for item in body["posts"]["items"]]

    assert await order("desc") == [
        top.post_id,
        late.post_id,
        early.post_id,
        big,
        small,
        low.post_id,
    ]
    assert await order("asc") == [low.post_id, small, big, early.post_id, late.post_id, top.post_id]


async def test_sorting_by_engagement_rate_puts_posts_without_impressions_last(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    none = await publish(runtime, org, [Target(channel, at("2026-03-02T10:00:00Z"), {"likes": 5})])
    high = await publish(
        runtime, org, [Target(channel, at("2026-03-03T10:00:00Z"), {"impressions": 10, "likes": 5})]
    )
    low = await publish(
        runtime,
        org,
        [Target(channel, at("2026-03-04T10:00:00Z"), {"impressions": 100, "likes": 5})],
    )
    for direction, expected in (
        ("desc", [high.post_id, low.post_id, none.post_id]),
        ("asc", [low.post_id, high.post_id, none.post_id]),
    ):
        body = await report(client, tenant, **MARCH, sortBy="engagementRate", sortOrder=direction)
        assert [uuid.UUID(i["postId"]) for i in body["posts"]["items"]] == expected


async def test_posts_are_paged_one_based(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    made = [
        await publish(
            runtime, org, [Target(channel, at(f"2026-03-0{day}T10:00:00Z"), {"views": day})]
        )
        for day in range(1, 6)
    ]
    newest_first = [p.post_id for p in reversed(made)]
    pages = []
    for page in (1, 2, 3, 4):
        body = await report(client, tenant, **MARCH, pageSize="2", page=str(page))
        assert body["posts"]["page"] == page
        assert body["posts"]["pageSize"] == 2
        assert body["posts"]["totalItems"] == 5
        pages.append([uuid.UUID(i["postId"]) for i in body["posts"]["items"]])
    assert pages == [newest_first[0:2], newest_first[2:4], newest_first[4:5], []]


async def test_post_items_describe_the_post_and_sum_its_targets_in_range(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    channel: uuid.UUID,
    second: uuid.UUID,
):
    made = await publish(
        runtime,
        tenant.organization_id,
        [
            Target(second, at("2026-03-04T09:00:00Z"), {"impressions": 30}),
            Target(channel, at("2026-03-04T08:00:00Z"), {"impressions": 20}),
            Target(channel, at("2026-04-02T08:00:00Z"), {"impressions": 1000}, content_kind="post"),
        ],
        tags=("launch", "spring"),
        topics=("pricing",),
        model="claude-sonnet-4.5",
        approval="approved",
    )
    body = await report(client, tenant, **MARCH, metrics="impressions")
    assert body["posts"]["items"] == [
        {
            "postId": str(made.post_id),
            "publishedAt": "2026-03-04T08:00:00.000Z",
            "channelIds": sorted([str(channel), str(second)]),
            "tags": ["launch", "spring"],
            "topics": ["pricing"],
            "model": "claude-sonnet-4.5",
            "approvalStatus": "approved",
            "values": {"impressions": 50},
        }
    ]
    only_second = await report(
        client, tenant, **MARCH, metrics="impressions", channelIds=str(second)
    )
    item = only_second["posts"]["items"][0]
    assert (item["publishedAt"], item["channelIds"], item["values"]) == (
        "2026-03-04T09:00:00.000Z",
        [str(second)],
        {"impressions": 30},
    )


async def test_deleted_posts_and_unpublished_targets_are_left_out(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    when = at("2026-03-05T10:00:00Z")
    await publish(runtime, org, [Target(channel, when, {"likes": 1})])
    await publish(runtime, org, [Target(channel, when, {"likes": 10})], deleted=True)
    await publish(runtime, org, [Target(channel, when, {"likes": 100}, status="failed")])
    await publish(runtime, org, [Target(channel, None, {"likes": 1000}, status="scheduled")])
    body = await report(client, tenant, **MARCH, metrics="likes")
    assert body["totals"]["likes"]["value"] == 1
    assert body["posts"]["totalItems"] == 1


async def test_a_target_counts_with_its_latest_snapshot(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    made = await publish(runtime, org, [Target(channel, at("2026-03-05T10:00:00Z"), None)])
    target_id = made.target_ids[0]

    def seen(when: str, values: dict[str, int]) -> Observation:
        return Observation(org, target_id, at("2026-03-05T10:00:00Z"), at(when), values, "poller")

    async with unit_of_work(runtime.sessions) as session:
        await record(session, [seen("2026-03-05T11:00:00Z", {"likes": 3, "impressions": 50})])
    async with unit_of_work(runtime.sessions) as session:
        await record(session, [seen("2026-03-06T11:00:00Z", {"likes": 7})])
    async with unit_of_work(runtime.sessions) as session:
        # Arriving late, an older observation does not roll the values back.
        await record(session, [seen("2026-03-05T12:00:00Z", {"likes": 4, "impressions": 60})])
    body = await report(client, tenant, **MARCH, metrics="likes,impressions")
    assert body["totals"]["likes"]["value"] == 7
    assert body["totals"]["impressions"]["value"] == 50


async def test_a_published_target_without_metrics_yet_counts_with_zeros(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    await publish(
        runtime, tenant.organization_id, [Target(channel, at("2026-03-05T10:00:00Z"), None)]
    )
    body = await report(client, tenant, **MARCH, metrics="impressions")
    assert body["posts"]["totalItems"] == 1
    assert body["totals"]["impressions"]["value"] == 0
    assert row(body["breakdowns"]["channels"], str(channel))["posts"] == 1


async def test_timeseries_buckets_follow_the_timezone_across_dst(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    org = tenant.organization_id
    # 2026-03-29 in Berlin is 23 hours long: 2026-03-28T23:00Z to 2026-03-29T22:00Z.
    await publish(runtime, org, [Target(channel, at("2026-03-29T21:30:00Z"), {"likes": 1})])
    await publish(runtime, org, [Target(channel, at("2026-03-29T22:30:00Z"), {"likes": 10})])
    body = await report(
        client,
        tenant,
        start="2026-03-28T00:00:00+01:00",
        end="2026-03-30T23:59:59+02:00",
        timezone="Europe/Berlin",
        groupBy="day",
        metrics="likes",
    )
    assert body["timeseries"] == [
        {
            "start": "2026-03-27T23:00:00.000Z",
            "end": "2026-03-28T23:00:00.000Z",
            "values": {"likes": 0},
        },
        {
            "start": "2026-03-28T23:00:00.000Z",
            "end": "2026-03-29T22:00:00.000Z",
            "values": {"likes": 1},
        },
        {
            "start": "2026-03-29T22:00:00.000Z",
            "end": "2026-03-30T21:59:59.000Z",
            "values": {"likes": 10},
        },
    ]


async def test_auto_grouping_is_reported_and_buckets_cover_the_range(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    await publish(
        runtime, tenant.organization_id, [Target(channel, at("2026-03-05T10:00:00Z"), {"likes": 2})]
    )
    body = await report(
        client, tenant, start="2026-01-01T00:00:00Z", end="2026-05-31T23:59:59Z", metrics="likes"
    )
    assert body["range"]["groupBy"] == "week"
    series = body["timeseries"]
    assert series[0]["start"] == "2026-01-01T00:00:00.000Z"
    assert series[1]["start"] == "2026-01-05T00:00:00.000Z"  # the first Monday
    assert series[-1]["end"] == "2026-05-31T23:59:59.000Z"
    assert sum(b["values"]["likes"] for b in series) == 2
    assert all(a["end"] == b["start"] for a, b in itertools.pairwise(series))


async def test_a_key_seen_only_in_the_comparison_range_still_has_a_row(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    await publish(
        runtime,
        tenant.organization_id,
        [Target(channel, at("2026-02-10T10:00:00Z"), {"likes": 6})],
        topics=("pricing",),
    )
    body = await report(client, tenant, **MARCH, metrics="likes")
    assert row(body["breakdowns"]["topics"], "pricing") == {
        "key": "pricing",
        "label": "pricing",
        "posts": 0,
        "values": {"likes": 0},
        "previous": {"likes": 6},
    }


async def test_breakdowns_by_channel_content_kind_and_approval(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    channel: uuid.UUID,
):
    org = tenant.organization_id
    insta = await make_channel(runtime, org, name="Insta", provider="instagram")
    when = at("2026-03-05T10:00:00Z")
    # One post on two kinds of the same channel counts once for the channel.
    await publish(
        runtime,
        org,
        [
            Target(insta, when, {"likes": 1}, content_kind="reel"),
            Target(insta, when, {"likes": 2}, content_kind="story"),
        ],
        approval="approved",
    )
    await publish(runtime, org, [Target(channel, when, {"likes": 4})], approval="rejected")
    breakdowns = (await report(client, tenant, **MARCH, metrics="likes"))["breakdowns"]
    assert [(r["key"], r["label"], r["posts"], r["values"]) for r in breakdowns["channels"]] == [
        (str(channel), "Main", 1, {"likes": 4}),
        (str(insta), "Insta", 1, {"likes": 3}),
    ]
    assert [(r["key"], r["posts"], r["values"]) for r in breakdowns["contentKinds"]] == [
        ("post", 1, {"likes": 4}),
        ("story", 1, {"likes": 2}),
        ("reel", 1, {"likes": 1}),
    ]
    assert [(r["key"], r["label"], r["posts"]) for r in breakdowns["approvals"]] == [
        ("rejected", "Rejected", 1),
        ("approved", "Approved", 1),
    ]


async def test_history_of_a_disconnected_channel_still_counts(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    gone = await make_channel(runtime, tenant.organization_id, name="Old", disconnected=True)
    await publish(
        runtime, tenant.organization_id, [Target(gone, at("2026-03-05T10:00:00Z"), {"likes": 2})]
    )
    body = await report(client, tenant, **MARCH, metrics="likes")
    assert row(body["breakdowns"]["channels"], str(gone))["values"] == {"likes": 2}


async def test_no_metrics_parameter_means_all_ten_in_canonical_order(
    client: httpx.AsyncClient, tenant: Tenant
):
    body = await report(client, tenant, **MARCH, metrics="likes,impressions,likes")
    assert body["metrics"] == ["impressions", "likes"]
    everything = await report(client, tenant, **MARCH)
    assert everything["metrics"] == [
        "impressions",
        "reach",
        "views",
        "likes",
        "comments",
        "shares",
        "saves",
        "clicks",
        "engagements",
        "engagementRate",
    ]
    assert list(everything["totals"]) == everything["metrics"]
    assert everything["posts"] == {"page": 1, "pageSize": 25, "totalItems": 0, "items": []}
    assert all(b["values"]["impressions"] == 0 for b in everything["timeseries"])
    assert len(everything["timeseries"]) == 31


async def test_another_organizations_history_is_invisible(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
):
    theirs = await make_channel(runtime, other_tenant.organization_id, name="Theirs")
    await publish(
        runtime,
        other_tenant.organization_id,
        [Target(theirs, at("2026-03-05T10:00:00Z"), {"likes": 5})],
        tags=("x",),
        topics=("y",),
    )
    body = await report(client, tenant, **MARCH, metrics="likes")
    assert body["totals"]["likes"]["value"] == 0
    assert all(rows == [] for rows in body["breakdowns"].values())


async def test_a_post_at_an_end_on_a_day_boundary_counts_in_a_last_bucket_of_that_instant(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, channel: uuid.UUID
):
    # Issue 20's example: the end is inclusive and the instant starts October 2.
    org = tenant.organization_id
    await publish(runtime, org, [Target(channel, at("2025-10-02T00:00:00Z"), {"likes": 3})])
    body = await report(
        client,
        tenant,
        start="2025-10-01T00:00:00Z",
        end="2025-10-02T00:00:00Z",
        groupBy="day",
        metrics="likes",
    )
    assert body["timeseries"] == [
        {
            "start": "2025-10-01T00:00:00.000Z",
            "end": "2025-10-02T00:00:00.000Z",
            "values": {"likes": 0},
        },
        {
            "start": "2025-10-02T00:00:00.000Z",
            "end": "2025-10-02T00:00:00.000Z",
            "values": {"likes": 3},
        },
    ]
    assert body["totals"]["likes"]["value"] == 3
