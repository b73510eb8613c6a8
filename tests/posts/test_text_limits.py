"""Character limits at the boundary for every provider and content kind, through the API.

The text mixes what networks count differently (ZWJ emoji, skin tones, flags, combining marks,
CJK, a long URL and, for Mastodon, a remote mention), built to exactly the limit in the
network's own unit: at the limit the post is created, one unit more is a 400 on the field.
"""

from __future__ import annotations

import httpx
import pytest

from pressroom.providers.declarations import DECLARATIONS
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.posts.factories import valid_media_ids
from tests.providers.test_validation import all_content_kinds
from tests.providers.test_validation import required_options
from tests.providers.test_validation import text_of_length


@pytest.mark.parametrize(("provider_id", "kind_name"), all_content_kinds())
async def test_text_at_the_limit_is_created_and_one_unit_more_is_400(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, provider_id: str, kind_name: str
):
    kind = DECLARATIONS[provider_id].content_kind(kind_name)
    assert kind is not None
    channel = await connect_channel(runtime, tenant.organization_id, provider=provider_id)
    target = {
        "channelId": str(channel),
        "contentKind": kind_name,
        "mediaIds": await valid_media_ids(runtime, tenant.organization_id, kind),
        "options": required_options(kind),
    }
    limit = kind.text.max_length

    at_limit = {"text": text_of_length(kind.text, limit), "targets": [target]}
    created = await client.post("/api/v1/posts", json=at_limit, headers=tenant.headers)
    assert created.status_code == 201, created.text

    over = {"text": text_of_length(kind.text, limit + 1), "targets": [target]}
    refused = await client.post("/api/v1/posts", json=over, headers=tenant.headers)
    assert refused.status_code == 400, refused.text
    [error] = refused.json()["errors"]
    assert (error["field"], error["code"]) == ("targets[0].text", "too_long")
    assert f"{provider_id} allows {limit}" in error["message"]


async def test_the_limit_applies_to_a_targets_override(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    bluesky = await connect_channel(runtime, tenant.organization_id, provider="bluesky")
    linkedin = await connect_channel(runtime, tenant.organization_id, provider="linkedin")
    body = {
        "text": "short",
        "targets": [
            {"channelId": str(linkedin), "text": "x" * 301},
            {"channelId": str(bluesky), "text": "x" * 301},
        ],
    }
    response = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
    assert [e["field"] for e in response.json()["errors"]] == ["targets[1].text"]
    assert "301 graphemes; bluesky allows 300" in response.json()["detail"]


async def test_x_counts_a_url_as_23_and_an_emoji_as_2(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    x = await connect_channel(runtime, tenant.organization_id, provider="x")
    url = "https://example.com/" + "a" * 200
    # 23 (the URL, whatever its length) + 1 (space) + 128 emoji x 2 = 280: the limit.
    fits = url + " " + "\U0001f600" * 128
    assert (
        await client.post(
            "/api/v1/posts",
            json={"text": fits, "targets": [{"channelId": str(x)}]},
            headers=tenant.headers,
        )
    ).status_code == 201
    refused = await client.post(
        "/api/v1/posts",
        json={"text": fits + "a", "targets": [{"channelId": str(x)}]},
        headers=tenant.headers,
    )
    assert refused.status_code == 400
    assert "281 weighted characters" in refused.json()["errors"][0]["message"]
