"""The Facebook adapter's deletion, metrics, health and error classes against recorded Graph
API exchanges.

Shapes follow developers.facebook.com: graph-api/reference/post (DELETE -> {"success": true};
reactions/comments `summary(total_count)`, `shares.count`), graph-api/reference/insights
(`{"data": [{"name", "period", "values": [{"value"}]}]}`; post_media_view,
post_total_media_view_unique, post_clicks), graph-api/reference/video (`post_id`),
graph-api/guides/error-handling (error object, codes 190/463, 10, 32) and
graph-api/overview/rate-limiting (X-Business-Use-Case-Usage, estimated_time_to_regain_access in
minutes)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.facebook import FacebookAdapter

from .facebook_support import GRAPH
from .facebook_support import NOW
from .facebook_support import PAGE_ID
from .facebook_support import PAGE_TOKEN
from .facebook_support import POST_ID
from .facebook_support import PROOF
from .facebook_support import facebook_adapter
from .facebook_support import graph_error
from .facebook_support import page_channel
from .facebook_support import query
from .support import RecordedSleep
from .support import channel
from .support import publish_request

ENGAGEMENT = "reactions.limit(0).summary(total_count),comments.limit(0).summary(total_count),shares"


@pytest.fixture
async def adapter() -> AsyncIterator[FacebookAdapter]:
    async with facebook_adapter(RecordedSleep()) as adapter:
        yield adapter


def insights(**values: object) -> dict[str, object]:
    return {
        "data": [
            {"name": name, "period": "lifetime", "values": [{"value": value}], "id": name}
            for name, value in values.items()
        ]
    }


async def test_delete_removes_the_post(network: respx.MockRouter, adapter: FacebookAdapter) -> None:
    deleted = network.delete(f"{GRAPH}/{POST_ID}").respond(200, json={"success": True})
    await adapter.delete(page_channel(), POST_ID)
    assert deleted.call_count == 1
    assert query(deleted) == {"appsecret_proof": PROOF}


async def test_delete_of_a_post_already_gone_succeeds(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.delete(f"{GRAPH}/{POST_ID}").mock(
        return_value=graph_error(
            100, "Unsupported delete request. Object with ID does not exist", subcode=33
        )
    )
    await adapter.delete(page_channel(), POST_ID)


async def test_delete_refused_for_permission_raises(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.delete(f"{GRAPH}/{POST_ID}").mock(
        return_value=graph_error(200, "(#200) Permissions error", status=403)
    )
    with pytest.raises(ProviderError) as refused:
        await adapter.delete(page_channel(), POST_ID)
    assert refused.value.code == "permission_denied"


async def test_metrics_map_engagement_and_insights_to_canonical_keys(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    post = network.get(f"{GRAPH}/{POST_ID}").respond(
        200,
        json={
            "reactions": {"data": [], "summary": {"total_count": 12}},
            "comments": {"data": [], "summary": {"total_count": 3}},
            "shares": {"count": 2},
            "id": POST_ID,
        },
    )
    stats = network.get(f"{GRAPH}/{POST_ID}/insights").respond(
        200,
        json=insights(post_media_view=340, post_total_media_view_unique=210, post_clicks=17),
    )
    metrics = await adapter.fetch_metrics(page_channel(), POST_ID, NOW)
    assert metrics == {
        "likes": 12,
        "comments": 3,
        "shares": 2,
        "views": 340,
        "reach": 210,
        "clicks": 17,
    }
    assert query(post)["fields"] == ENGAGEMENT
    assert query(stats)["metric"] == "post_media_view,post_total_media_view_unique,post_clicks"


async def test_metrics_of_a_reel_are_read_on_the_post_that_carries_it(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.get(f"{GRAPH}/1200000000000042").respond(
        200, json={"post_id": POST_ID, "id": "1200000000000042"}
    )
    network.get(f"{GRAPH}/{POST_ID}").respond(200, json={"id": POST_ID})
    network.get(f"{GRAPH}/{POST_ID}/insights").respond(200, json=insights(post_media_view=9))
    metrics = await adapter.fetch_metrics(page_channel(), "1200000000000042", NOW)
    assert metrics == {"likes": 0, "comments": 0, "shares": 0, "views": 9}


async def test_metrics_of_a_video_without_its_post_yet_are_empty(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.get(f"{GRAPH}/1200000000000042").respond(200, json={"id": "1200000000000042"})
    assert await adapter.fetch_metrics(page_channel(), "1200000000000042", NOW) == {}


@pytest.mark.parametrize(
    "refusal",
    [
        graph_error(100, "(#100) The value must be a valid insights metric"),
        graph_error(10, "(#10) read_insights permission missing", status=403),
    ],
)
async def test_insights_refused_still_return_the_engagement(
    network: respx.MockRouter, adapter: FacebookAdapter, refusal: httpx.Response
) -> None:
    network.get(f"{GRAPH}/{POST_ID}").respond(
        200, json={"reactions": {"summary": {"total_count": 4}}, "id": POST_ID}
    )
    network.get(f"{GRAPH}/{POST_ID}/insights").mock(return_value=refusal)
    metrics = await adapter.fetch_metrics(page_channel(), POST_ID, NOW)
    assert metrics == {"likes": 4, "comments": 0, "shares": 0}


async def test_health_reads_the_page_with_its_token(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    page = network.get(f"{GRAPH}/{PAGE_ID}").respond(200, json={"id": PAGE_ID, "name": "Pressroom"})
    health = await adapter.check_health(page_channel())
    assert health.state == "healthy"
    assert query(page) == {"fields": "id,name", "appsecret_proof": PROOF}


async def test_health_of_a_page_token_expiring_within_a_week_asks_to_reconnect(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    soon = int((NOW + timedelta(days=3)).timestamp())
    health = await adapter.check_health(page_channel(expiresAt=soon))
    assert health.state == "reconnect_required"
    assert health.reason is not None and "expires on" in health.reason


async def test_health_of_a_page_token_with_a_month_left_reads_the_page(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.get(f"{GRAPH}/{PAGE_ID}").respond(200, json={"id": PAGE_ID, "name": "Pressroom"})
    later = int((NOW + timedelta(days=30)).timestamp())
    assert (await adapter.check_health(page_channel(expiresAt=later))).state == "healthy"


async def test_health_of_a_revoked_token_asks_to_reconnect(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.get(f"{GRAPH}/{PAGE_ID}").mock(
        return_value=graph_error(
            190, "Error validating access token: The session has been invalidated", subcode=467
        )
    )
    health = await adapter.check_health(page_channel())
    assert health.state == "reconnect_required"
    assert health.reason is not None and "session has been invalidated" in health.reason


async def test_health_when_facebook_fails_is_degraded(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.get(f"{GRAPH}/{PAGE_ID}").mock(
        return_value=graph_error(1, "An unknown error occurred", status=500, is_transient=True)
    )
    assert (await adapter.check_health(page_channel())).state == "degraded"


async def test_expired_token_on_publish_is_auth_expired_without_the_token(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    network.post(f"{GRAPH}/{PAGE_ID}/feed").mock(
        return_value=graph_error(
            190,
            f"Error validating access token: Session has expired ({PAGE_TOKEN})",
            subcode=463,
            error_user_title="Session expired",
        )
    )
    with pytest.raises(ProviderError) as refused:
        await adapter.publish(publish_request(page_channel(), "Hi"))
    assert (refused.value.code, refused.value.retryable) == ("auth_expired", False)
    assert "Session expired" in refused.value.message
    assert "code 190, subcode 463" in refused.value.message
    assert PAGE_TOKEN not in refused.value.message


async def test_page_rate_limit_is_retryable_when_facebook_says(
    network: respx.MockRouter, adapter: FacebookAdapter
) -> None:
    usage = {PAGE_ID: [{"type": "pages", "call_count": 100, "estimated_time_to_regain_access": 7}]}
    network.post(f"{GRAPH}/{PAGE_ID}/feed").mock(
        return_value=httpx.Response(
            400,
            headers={"X-Business-Use-Case-Usage": json.dumps(usage)},
            json={"error": {"message": "(#32) Page request limit reached", "code": 32}},
        )
    )
    with pytest.raises(ProviderError) as limited:
        await adapter.publish(publish_request(page_channel(), "Hi"))
    assert (limited.value.code, limited.value.retryable) == ("rate_limited", True)
    assert limited.value.retry_after == 420.0
    assert "Page request limit reached" in limited.value.message


async def test_channel_without_a_page_token_must_be_reconnected(adapter: FacebookAdapter) -> None:
    with pytest.raises(ProviderError) as refused:
        await adapter.publish(publish_request(channel("facebook", {"pageId": PAGE_ID}), "Hi"))
    assert refused.value.code == "auth_expired"
