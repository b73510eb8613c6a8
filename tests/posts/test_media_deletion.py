"""deleteMedia: an asset leaves the library (no longer listed, read or served) unless a post
still to be published uses it (409 naming the post); scope, organization and audit."""

from __future__ import annotations

import httpx
from sqlalchemy import select

from pressroom.audit.models import AuditEntry
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.factories import make_tenant
from tests.posts.factories import add_media
from tests.posts.factories import create_post
from tests.posts.factories import future
from tests.posts.factories import patch_post
from tests.posts.factories import post_body

MEDIA = "/api/v1/media"


async def test_an_unused_asset_is_deleted_and_audited(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    asset = str(await add_media(runtime, tenant.organization_id))
    response = await client.delete(f"{MEDIA}/{asset}", headers=tenant.headers)
    assert response.status_code == 200, response.text
    assert response.json() == {"id": asset, "object": "media", "deleted": True}
    assert (await client.get(f"{MEDIA}/{asset}", headers=tenant.headers)).status_code == 404
    assert (await client.get(f"{MEDIA}/{asset}/content", headers=tenant.headers)).status_code == 404
    listed = (await client.get(MEDIA, headers=tenant.headers)).json()["items"]
    assert asset not in [item["id"] for item in listed]
    again = await client.delete(f"{MEDIA}/{asset}", headers=tenant.headers)
    assert again.status_code == 404
    async with unit_of_work(runtime.sessions) as session:
        entry = await session.scalar(
            select(AuditEntry).where(
                AuditEntry.organization_id == tenant.organization_id,
                AuditEntry.operation_id == "deleteMedia",
                AuditEntry.outcome_status == 200,
            )
        )
    assert entry is not None and entry.resource_id == asset
    assert entry.changes["deleted"] is True and entry.changes["filename"] == "file.jpeg"


async def test_an_asset_a_scheduled_post_uses_is_409_until_it_is_taken_out(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    channel = await connect_channel(runtime, tenant.organization_id)
    asset = str(await add_media(runtime, tenant.organization_id))
    post = await create_post(
        client, tenant, post_body(channel, mediaIds=[asset], scheduledAt=future())
    )
    refused = await client.delete(f"{MEDIA}/{asset}", headers=tenant.headers)
    assert refused.status_code == 409
    assert refused.json()["code"] == "conflict"
    assert post["id"] in refused.json()["detail"]
    assert (await client.get(f"{MEDIA}/{asset}", headers=tenant.headers)).status_code == 200

    taken_out = await patch_post(client, tenant, post["id"], {"mediaIds": []})
    assert taken_out.status_code == 200, taken_out.text
    deleted = await client.delete(f"{MEDIA}/{asset}", headers=tenant.headers)
    assert deleted.status_code == 200


async def test_a_targets_own_media_counts_and_a_deleted_post_does_not(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    channel = await connect_channel(runtime, tenant.organization_id)
    asset = str(await add_media(runtime, tenant.organization_id))
    body = post_body(channel, targets=[{"channelId": str(channel), "mediaIds": [asset]}])
    post = await create_post(client, tenant, body)
    assert (await client.delete(f"{MEDIA}/{asset}", headers=tenant.headers)).status_code == 409
    gone = await client.delete(f"/api/v1/posts/{post['id']}", headers=tenant.headers)
    assert gone.status_code == 200, gone.text
    assert (await client.delete(f"{MEDIA}/{asset}", headers=tenant.headers)).status_code == 200


async def test_scope_and_organization(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    asset = str(await add_media(runtime, tenant.organization_id))
    other = await make_tenant(runtime, name="Other")
    foreign = await client.delete(f"{MEDIA}/{asset}", headers=other.headers)
    assert foreign.status_code == 404
    reader = await make_tenant(runtime, name="Reader", scopes=["media:read"])
    own = str(await add_media(runtime, reader.organization_id))
    refused = await client.delete(f"{MEDIA}/{own}", headers=reader.headers)
    assert refused.status_code == 403 and refused.json()["code"] == "insufficient_scope"
    assert (await client.get(f"{MEDIA}/{asset}", headers=tenant.headers)).status_code == 200
