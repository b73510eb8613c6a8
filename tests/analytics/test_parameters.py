"""getAnalytics parameters: every invalid one is a 400 naming it; bounds and defaults."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from pressroom.runtime import Runtime
from tests.analytics.factory import make_channel
from tests.factories import Tenant

RANGE = {"start": "2026-03-01T00:00:00Z", "end": "2026-03-31T23:59:59Z"}


async def problem(
    client: httpx.AsyncClient, tenant: Tenant, params: Any
) -> tuple[int, dict[str, Any]]:
    response = await client.get("/api/v1/analytics", params=params, headers=tenant.headers)
    return response.status_code, response.json()


def fields(body: dict[str, Any]) -> list[str]:
    return [error["field"] for error in body.get("errors", [])]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"end": RANGE["end"]}, "start"),
        ({"start": RANGE["start"]}, "end"),
        ({**RANGE, "start": "2026-03-01T00:00:00"}, "start"),
        ({**RANGE, "end": "2026-03-31"}, "end"),
        ({**RANGE, "start": "yesterday"}, "start"),
        ({**RANGE, "start": "2026-02-30T00:00:00Z"}, "start"),
        ({**RANGE, "start": "1700000000"}, "start"),
        ({"start": "2026-04-01T00:00:00Z", "end": "2026-03-01T00:00:00Z"}, "start"),
        ({"start": "2025-01-01T00:00:00Z", "end": "2026-01-02T00:00:01Z"}, "end"),
        ({**RANGE, "comparison": "last_week"}, "comparison"),
        ({**RANGE, "comparisonStart": "2026-01-01T00:00:00Z"}, "comparisonEnd"),
        ({**RANGE, "comparisonEnd": "2026-01-01T00:00:00Z"}, "comparisonStart"),
        ({**RANGE, "comparison": "custom"}, "comparisonStart"),
        (
            {
                **RANGE,
                "comparisonStart": "2026-02-01T00:00:00",
                "comparisonEnd": "2026-02-02T00:00:00Z",
            },
            "comparisonStart",
        ),
        (
            {
                **RANGE,
                "comparisonStart": "2026-02-10T00:00:00Z",
                "comparisonEnd": "2026-02-01T00:00:00Z",
            },
            "comparisonStart",
        ),
        (
            {
                **RANGE,
                "comparisonStart": "2024-01-01T00:00:00Z",
                "comparisonEnd": "2025-06-01T00:00:00Z",
            },
            "comparisonEnd",
        ),
        ({**RANGE, "timezone": "Mars/Olympus_Mons"}, "timezone"),
        ({**RANGE, "timezone": "+02:00"}, "timezone"),
        ({**RANGE, "timezone": "../../etc/passwd"}, "timezone"),
        ({**RANGE, "timezone": "localtime"}, "timezone"),
        ({**RANGE, "timezone": ""}, "timezone"),
        ({**RANGE, "channelIds": "not-a-uuid"}, "channelIds"),
        ({**RANGE, "channelIds": "{12345678-1234-1234-1234-123456789012}"}, "channelIds"),
        ({**RANGE, "channelIds": f"{uuid.uuid4()},,"}, "channelIds"),
        ({**RANGE, "contentKinds": "tweet"}, "contentKinds"),
        ({**RANGE, "metrics": "impressions,followers"}, "metrics"),
        ({**RANGE, "metrics": ""}, "metrics"),
        ({**RANGE, "groupBy": "hour"}, "groupBy"),
        ({**RANGE, "sortBy": "followers"}, "sortBy"),
        ({**RANGE, "sortOrder": "up"}, "sortOrder"),
        ({**RANGE, "page": "0"}, "page"),
        ({**RANGE, "page": "first"}, "page"),
        ({**RANGE, "pageSize": "0"}, "pageSize"),
        ({**RANGE, "pageSize": "101"}, "pageSize"),
        ({**RANGE, "channelId": str(uuid.uuid4())}, "channelId"),
        ([*RANGE.items(), ("start", "2026-03-02T00:00:00Z")], "start"),
    ],
    ids=[
        "start-missing",
        "end-missing",
        "start-naive",
        "end-date-only",
        "start-garbage",
        "start-impossible-date",
        "start-unix-time",
        "start-after-end",
        "range-over-366-days",
        "comparison-unknown",
        "comparison-start-without-end",
        "comparison-end-without-start",
        "comparison-custom-without-range",
        "comparison-start-naive",
        "comparison-start-after-end",
        "comparison-over-366-days",
        "timezone-unknown",
        "timezone-offset",
        "timezone-path",
        "timezone-localtime",
        "timezone-empty",
        "channel-id-malformed",
        "channel-id-braced",
        "channel-ids-empty-value",
        "content-kind-unknown",
        "metric-unknown",
        "metrics-empty",
        "group-by-unknown",
        "sort-by-unknown",
        "sort-order-unknown",
        "page-zero",
        "page-not-integer",
        "page-size-zero",
        "page-size-over-100",
        "unknown-parameter",
        "start-repeated",
    ],
)
async def test_invalid_parameter_is_400_naming_it(
    client: httpx.AsyncClient, tenant: Tenant, params: Any, field: str
):
    status, body = await problem(client, tenant, params)
    assert status == 400, body
    assert body["code"] == "validation_failed"
    assert field in fields(body), body


async def test_a_plus_offset_sent_unencoded_gets_a_hint(client: httpx.AsyncClient, tenant: Tenant):
    response = await client.get(
        "/api/v1/analytics?start=2026-03-01T00:00:00+01:00&end=2026-03-31T00:00:00Z",
        headers=tenant.headers,
    )
    assert response.status_code == 400
    assert "%2B" in response.json()["errors"][0]["message"]


async def test_every_problem_is_reported_at_once(client: httpx.AsyncClient, tenant: Tenant):
    status, body = await problem(
        client,
        tenant,
        {"start": "nope", "end": RANGE["end"], "timezone": "Nowhere/City", "metrics": "fans"},
    )
    assert status == 400
    assert set(fields(body)) == {"start", "timezone", "metrics"}


async def test_channel_of_another_organization_is_400(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
):
    mine = await make_channel(runtime, tenant.organization_id, name="Mine")
    theirs = await make_channel(runtime, other_tenant.organization_id, name="Theirs")
    status, body = await problem(client, tenant, {**RANGE, "channelIds": f"{mine},{theirs}"})
    assert status == 400
    assert fields(body) == ["channelIds"]
    assert str(theirs) in body["errors"][0]["message"]
    assert str(mine) not in body["errors"][0]["message"]


async def test_unknown_and_disconnected_channels_are_400_like_foreign_ones(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    gone = await make_channel(runtime, tenant.organization_id, name="Gone", disconnected=True)
    for channel_id in (gone, uuid.uuid4()):
        status, body = await problem(client, tenant, {**RANGE, "channelIds": str(channel_id)})
        assert status == 400
        assert fields(body) == ["channelIds"]


async def test_a_range_of_exactly_366_days_is_accepted(client: httpx.AsyncClient, tenant: Tenant):
    status, body = await problem(
        client, tenant, {"start": "2024-01-01T00:00:00Z", "end": "2025-01-01T00:00:00Z"}
    )
    assert status == 200, body
    assert body["range"]["groupBy"] == "month"
    # Twelve months, and the inclusive end (the first instant of 2025) starts a thirteenth.
    assert len(body["timeseries"]) == 13
    assert body["timeseries"][-1]["start"] == body["timeseries"][-1]["end"]


async def test_limits_of_page_size_are_inclusive(client: httpx.AsyncClient, tenant: Tenant):
    for size in ("1", "100"):
        status, body = await problem(client, tenant, {**RANGE, "pageSize": size})
        assert status == 200
        assert body["posts"]["pageSize"] == int(size)


async def test_a_key_without_analytics_read_is_403(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    from tests.factories import add_member_with_key

    reader = await add_member_with_key(runtime, tenant.organization_id, scopes=["posts:read"])
    response = await client.get("/api/v1/analytics", params=RANGE, headers=reader.headers)
    assert response.status_code == 403
    assert response.json()["requiredScope"] == "analytics:read"


def test_openapi_documents_every_parameter_and_decision(app: FastAPI):
    operation = app.openapi()["paths"]["/api/v1/analytics"]["get"]
    assert operation["operationId"] == "getAnalytics"
    documented = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}
    assert set(documented) == {
        "start",
        "end",
        "comparison",
        "comparisonStart",
        "comparisonEnd",
        "timezone",
        "channelIds",
        "tagValues",
        "contentKinds",
        "metrics",
        "groupBy",
        "sortBy",
        "sortOrder",
        "page",
        "pageSize",
    }
    assert all(p.get("description") for p in documented.values())
    assert documented["start"]["required"] is True
    assert documented["pageSize"]["schema"]["maximum"] == 100
    assert documented["page"]["schema"]["minimum"] == 1
    assert "422" not in operation["responses"]
    for decision in ("Attribution", "engagementRate", "DST", "Written by a person", "Ties"):
        assert decision in operation["description"] + str(documented), decision


@pytest.mark.parametrize(
    ("start", "end", "timezone"),
    [
        ("0001-01-01T00:00:00Z", "0001-02-01T00:00:00Z", "America/New_York"),
        ("9999-12-01T00:00:00Z", "9999-12-31T23:59:59Z", "Pacific/Kiritimati"),
        ("2026-12-31T23:59:60Z", "2027-01-01T00:00:00Z", "UTC"),
    ],
    ids=["year-1", "year-9999", "leap-second"],
)
async def test_ranges_at_the_ends_of_the_calendar_are_answered(
    client: httpx.AsyncClient, tenant: Tenant, start: str, end: str, timezone: str
):
    status, body = await problem(
        client,
        tenant,
        {"start": start, "end": end, "timezone": timezone, "comparison": "previous_year"},
    )
    assert status == 200, body
    assert body["timeseries"][0]["start"] == body["range"]["start"]
    assert body["timeseries"][-1]["end"] == body["range"]["end"]
