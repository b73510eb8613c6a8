"""A Mastodon channel is held to its own instance's character limit (kept on the channel at
connect and at each health check), not to the stock 500, through the API."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from pressroom.channels import service as channels
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from tests.factories import Tenant

CREDENTIALS = {"baseUrl": "https://fosstodon.example", "accessToken": "token-value"}


async def mastodon_channel(
    runtime: Runtime, tenant: Tenant, limits: dict[str, Any] | None
) -> uuid.UUID:
    """A real Mastodon channel, with what it keeps of its instance's configuration."""
    async with unit_of_work(runtime.sessions) as session:
        channel = await channels.connect(
            session,
            runtime,
            organization_id=tenant.organization_id,
            provider="mastodon",
            name=f"mastodon {uuid.uuid4().hex[:6]}",
            credentials=CREDENTIALS,
            limits=limits,
        )
        return channel.id


def body(channel: uuid.UUID, text: str, **options: Any) -> dict[str, Any]:
    return {"text": text, "targets": [{"channelId": str(channel), "options": options}]}


async def test_a_channel_of_a_1000_character_instance_accepts_900_characters(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel = await mastodon_channel(runtime, tenant, {"maxCharacters": 1000})
    response = await client.post(
        "/api/v1/posts",
        json=body(channel, "a" * 900, thread=["b" * 900], firstComment="c" * 900),
        headers=tenant.headers,
    )
    assert response.status_code == 201, response.text


async def test_its_errors_report_the_instances_limit(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel = await mastodon_channel(runtime, tenant, {"maxCharacters": 1000})
    response = await client.post(
        "/api/v1/posts", json=body(channel, "a" * 1001), headers=tenant.headers
    )
    assert response.status_code == 400, response.text
    assert response.json()["errors"] == [
        {
            "field": "targets[0].text",
            "code": "too_long",
            "message": "has 1001 graphemes; mastodon allows 1000",
        }
    ]


async def test_a_channel_of_a_stock_instance_refuses_501_characters(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    stock = await mastodon_channel(runtime, tenant, {"maxCharacters": 500})
    unknown = await mastodon_channel(runtime, tenant, None)
    for channel in (stock, unknown):
        response = await client.post(
            "/api/v1/posts", json=body(channel, "a" * 501), headers=tenant.headers
        )
        assert response.status_code == 400, response.text
        [error] = response.json()["errors"]
        assert error["message"] == "has 501 graphemes; mastodon allows 500"


async def test_an_update_is_held_to_the_instances_limit_too(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel = await mastodon_channel(runtime, tenant, {"maxCharacters": 1000})
    created = await client.post(
        "/api/v1/posts", json=body(channel, "short"), headers=tenant.headers
    )
    assert created.status_code == 201, created.text
    post_id = created.json()["id"]
    fits = await client.patch(
        f"/api/v1/posts/{post_id}", json={"text": "a" * 1000}, headers=tenant.headers
    )
    assert fits.status_code == 200, fits.text
    over = await client.patch(
        f"/api/v1/posts/{post_id}", json={"text": "a" * 1001}, headers=tenant.headers
    )
    assert over.status_code == 400, over.text
    assert "mastodon allows 1000" in over.json()["errors"][0]["message"]
