"""The real publisher (publishing/worker.py) publishing through the Bluesky, Mastodon and X
adapters to connected channels, against recorded exchanges (respx: any request not recorded
fails the test, nothing leaves the machine).

Recorded shapes: Bluesky com.atproto.server.createSession / refreshSession and
com.atproto.repo.createRecord (docs.bsky.app HTTP reference, XRPC errors `{"error", "message"}`);
Mastodon POST /api/v2/media and POST /api/v1/statuses (docs.joinmastodon.org methods/media,
methods/statuses); X POST /2/tweets (docs.x.com x-api/posts/create-post, 401 problem body)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from pydantic import SecretStr

from pressroom.channels import service as channels
from pressroom.channels.models import Channel
from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.media.service import storage_for
from pressroom.providers.registry import configured_providers
from pressroom.publishing.worker import publish_due_targets
from pressroom.runtime import Runtime
from tests.adapters.support import multipart_parts
from tests.adapters.support import png_bytes
from tests.factories import Tenant
from tests.posts.factories import add_media
from tests.posts.factories import create_post
from tests.posts.factories import events_of
from tests.posts.factories import get_post
from tests.posts.factories import post_body

SERVICE = "https://bsky.social"
PDS = "https://morel.us-east.host.bsky.network"
DID = "did:plc:z72i7hdynmk6r22z27h6tvur"
MASTODON = "https://mastodon.example"
X_API = "https://api.x.com"


@pytest.fixture
def network() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=True) as router:
        yield router


@pytest.fixture
async def x_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """A publisher of a deployment with an X app (so X tokens can be refreshed)."""
    runtime = Runtime.build(
        settings.model_copy(
            update={"x_client_id": "x-client", "x_client_secret": SecretStr("x-app-secret")}
        )
    )
    yield runtime
    await runtime.close()


async def connect(
    runtime: Runtime,
    tenant: Tenant,
    provider: str,
    credentials: dict[str, Any],
    handle: str | None = None,
) -> uuid.UUID:
    """A real (not simulated) channel with these credentials, as a connect stores it."""
    async with unit_of_work(runtime.sessions) as session:
        channel = await channels.connect(
            session,
            runtime,
            organization_id=tenant.organization_id,
            provider=provider,
            name=f"{provider} {uuid.uuid4().hex[:6]}",
            handle=handle,
            credentials=credentials,
            configured=configured_providers(runtime.settings) | {"x"},
        )
        return channel.id


async def stored(runtime: Runtime, channel_id: uuid.UUID) -> tuple[Channel, dict[str, Any]]:
    """The channel row and its decrypted credentials."""
    async with unit_of_work(runtime.sessions) as session:
        channel = await session.get(Channel, channel_id)
        assert channel is not None
        assert channel.credentials_encrypted is not None
        return channel, json.loads(runtime.box.decrypt(channel.credentials_encrypted))


def session_body(access: str, refresh: str) -> dict[str, Any]:
    return {
        "did": DID,
        "handle": "alice.bsky.social",
        "accessJwt": access,
        "refreshJwt": refresh,
        "didDoc": {
            "id": DID,
            "service": [
                {"id": "#atproto_pds", "type": "AtprotoPersonalDataServer", "serviceEndpoint": PDS}
            ],
        },
        "active": True,
    }


def record_created(request: httpx.Request) -> httpx.Response:
    """createRecord answers the record's AT URI (with the key it was given) and CID."""
    body = json.loads(request.content)
    uri = f"at://{body['repo']}/{body['collection']}/{body['rkey']}"
    return httpx.Response(200, json={"uri": uri, "cid": f"bafy{body['rkey']}"})


async def test_bluesky_post_and_thread_are_published_with_the_provider_id_and_url(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, network: respx.MockRouter
) -> None:
    channel_id = await connect(
        runtime,
        tenant,
        "bluesky",
        {
            "identifier": "alice.bsky.social",
            "appPassword": "abcd-efgh-ijkl-mnop",
            "service": SERVICE,
        },
        handle="@alice.bsky.social",
    )
    login = network.post(f"{SERVICE}/xrpc/com.atproto.server.createSession").mock(
        return_value=httpx.Response(200, json=session_body("access-1", "refresh-1"))
    )
    create = network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        side_effect=record_created
    )
    body = post_body(
        channel_id,
        text="Hello from Pressroom",
        publishNow=True,
        targets=[{"channelId": str(channel_id), "options": {"thread": ["And a reply"]}}],
    )
    post = await create_post(client, tenant, body)

    assert await publish_due_targets(runtime) is True

    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert target["status"] == "published", target["error"]
    first, reply = (json.loads(call.request.content) for call in create.calls)
    rkey = first["rkey"]
    assert target["providerPostId"] == f"at://{DID}/app.bsky.feed.post/{rkey}"
    assert target["url"] == f"https://bsky.app/profile/alice.bsky.social/post/{rkey}"
    assert login.calls[0].request.headers.get("Authorization") is None
    assert create.calls[0].request.headers["Authorization"] == "Bearer access-1"
    assert first["repo"] == DID
    assert first["record"]["text"] == "Hello from Pressroom"
    assert reply["record"]["text"] == "And a reply"
    assert reply["record"]["reply"]["root"]["uri"] == target["providerPostId"]
    # The session the publish opened is kept, encrypted: the next publish needs no login.
    row, credentials = await stored(runtime, channel_id)
    assert (credentials["accessJwt"], credentials["refreshJwt"]) == ("access-1", "refresh-1")
    assert "access-1" not in (row.credentials_encrypted or "")


async def test_a_refreshed_bluesky_session_is_stored_at_once(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, network: respx.MockRouter
) -> None:
    channel_id = await connect(
        runtime,
        tenant,
        "bluesky",
        {
            "identifier": "alice.bsky.social",
            "appPassword": "abcd-efgh-ijkl-mnop",
            "service": SERVICE,
            "did": DID,
            "handle": "alice.bsky.social",
            "accessJwt": "access-old",
            "refreshJwt": "refresh-old",
            "pds": PDS,
        },
    )
    expired = httpx.Response(400, json={"error": "ExpiredToken", "message": "Token has expired"})
    create = network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        side_effect=[expired, record_created]
    )
    refresh = network.post(f"{PDS}/xrpc/com.atproto.server.refreshSession").mock(
        return_value=httpx.Response(200, json=session_body("access-new", "refresh-new"))
    )
    await create_post(client, tenant, post_body(channel_id, publishNow=True))

    await publish_due_targets(runtime)

    assert refresh.calls[0].request.headers["Authorization"] == "Bearer refresh-old"
    assert create.calls[1].request.headers["Authorization"] == "Bearer access-new"
    _, credentials = await stored(runtime, channel_id)
    assert (credentials["accessJwt"], credentials["refreshJwt"]) == ("access-new", "refresh-new")


async def test_mastodon_status_with_an_image_is_published_with_its_options(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, network: respx.MockRouter
) -> None:
    channel_id = await connect(
        runtime,
        tenant,
        "mastodon",
        {"baseUrl": MASTODON, "accessToken": "mastodon-token-1", "accountId": "1"},
        handle="@alice@mastodon.example",
    )
    image = png_bytes(4, 3)
    media_id = await add_media(
        runtime, tenant.organization_id, mime_type="image/png", size_bytes=len(image)
    )
    async with unit_of_work(runtime.sessions) as session:
        from pressroom.media.models import MediaAsset

        asset = await session.get(MediaAsset, media_id)
        assert asset is not None
        key = asset.storage_key
    path = storage_for(runtime.settings).path_for(key)  # type: ignore[attr-defined]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(image)

    upload = network.post(f"{MASTODON}/api/v2/media").mock(
        return_value=httpx.Response(
            200, json={"id": "22", "type": "image", "url": f"{MASTODON}/media/22.png"}
        )
    )
    status = network.post(f"{MASTODON}/api/v1/statuses").mock(
        return_value=httpx.Response(
            200,
            json={
                "id": "113549875521473519",
                "created_at": "2026-11-22T09:30:01.456Z",
                "url": f"{MASTODON}/@alice/113549875521473519",
                "uri": f"{MASTODON}/users/alice/statuses/113549875521473519",
            },
        )
    )
    options = {"visibility": "unlisted", "spoilerText": "cw", "altTexts": ["a red square"]}
    body = post_body(
        channel_id,
        text="Hello, fediverse",
        mediaIds=[str(media_id)],
        publishNow=True,
        targets=[{"channelId": str(channel_id), "options": options}],
    )
    post = await create_post(client, tenant, body)

    await publish_due_targets(runtime)

    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert target["status"] == "published", target["error"]
    assert target["providerPostId"] == "113549875521473519"
    assert target["url"] == f"{MASTODON}/@alice/113549875521473519"
    parts = multipart_parts(upload.calls[0].request)
    assert parts["file"].data == image
    assert parts["description"].data == b"a red square"
    sent = status.calls[0].request
    assert sent.headers["Authorization"] == "Bearer mastodon-token-1"
    assert sent.headers["Idempotency-Key"].startswith(target["id"])
    assert json.loads(sent.content) == {
        "status": "Hello, fediverse",
        "visibility": "unlisted",
        "spoiler_text": "cw",
        "media_ids": ["22"],
    }


async def test_x_post_is_published_with_its_url(
    client: httpx.AsyncClient,
    x_runtime: Runtime,
    tenant: Tenant,
    network: respx.MockRouter,
) -> None:
    channel_id = await connect(
        x_runtime,
        tenant,
        "x",
        {"accessToken": "x-access-1", "refreshToken": "x-refresh-1", "userId": "2244994945"},
        handle="@pressroom",
    )
    tweet = network.post(f"{X_API}/2/tweets").mock(
        return_value=httpx.Response(
            201,
            json={
                "data": {
                    "id": "1850000000000000001",
                    "text": "Hello X",
                    "edit_history_tweet_ids": ["1850000000000000001"],
                }
            },
        )
    )
    post = await create_post(client, tenant, post_body(channel_id, text="Hello X", publishNow=True))

    await publish_due_targets(x_runtime)

    [target] = (await get_post(client, tenant, post["id"]))["targets"]
    assert target["status"] == "published", target["error"]
    assert target["providerPostId"] == "1850000000000000001"
    assert target["url"] == "https://x.com/pressroom/status/1850000000000000001"
    assert tweet.calls[0].request.headers["Authorization"] == "Bearer x-access-1"
    assert json.loads(tweet.calls[0].request.content) == {"text": "Hello X"}


def refuse_mastodon(network: respx.MockRouter) -> dict[str, Any]:
    network.post(f"{MASTODON}/api/v1/statuses").mock(
        return_value=httpx.Response(401, json={"error": "The access token is invalid"})
    )
    return {"baseUrl": MASTODON, "accessToken": "revoked-token"}


def refuse_x(network: respx.MockRouter) -> dict[str, Any]:
    network.post(f"{X_API}/2/tweets").mock(
        return_value=httpx.Response(
            401,
            json={
                "title": "Unauthorized",
                "type": "about:blank",
                "status": 401,
                "detail": "Unauthorized",
            },
        )
    )
    return {"accessToken": "expired-token"}  # no refresh token: nothing can renew it


def refuse_bluesky(network: respx.MockRouter) -> dict[str, Any]:
    # The session is refused, and so is a new login with the stored app password (revoked).
    network.post(f"{PDS}/xrpc/com.atproto.repo.createRecord").mock(
        return_value=httpx.Response(
            401, json={"error": "AuthenticationRequired", "message": "Invalid token"}
        )
    )
    network.post(f"{SERVICE}/xrpc/com.atproto.server.createSession").mock(
        return_value=httpx.Response(
            401,
            json={"error": "AuthenticationRequired", "message": "Invalid identifier or password"},
        )
    )
    return {
        "identifier": "alice.bsky.social",
        "appPassword": "revoked-app-password",
        "service": SERVICE,
        "did": DID,
        "handle": "alice.bsky.social",
        "accessJwt": "revoked-session",
        "refreshJwt": "refresh-1",
        "pds": PDS,
    }


REFUSALS = {"bluesky": refuse_bluesky, "mastodon": refuse_mastodon, "x": refuse_x}
SECRETS = {"accessToken", "refreshToken", "appPassword", "accessJwt", "refreshJwt"}


@pytest.mark.parametrize("provider", sorted(REFUSALS))
async def test_an_expired_token_requires_reconnecting_the_channel_once(
    client: httpx.AsyncClient,
    x_runtime: Runtime,
    tenant: Tenant,
    network: respx.MockRouter,
    provider: str,
) -> None:
    credentials = REFUSALS[provider](network)
    channel_id = await connect(x_runtime, tenant, provider, credentials)
    posts = [
        await create_post(client, tenant, post_body(channel_id, text=f"Post {n}", publishNow=True))
        for n in range(2)
    ]

    await publish_due_targets(x_runtime)

    for post in posts:
        [target] = (await get_post(client, tenant, post["id"]))["targets"]
        assert target["status"] == "failed"
        assert target["error"]["code"] == "auth_expired"
        assert target["error"]["retryable"] is False
        for key in SECRETS & set(credentials):
            assert credentials[key] not in target["error"]["message"]
    shown = await client.get(f"/api/v1/channels/{channel_id}", headers=tenant.headers)
    assert shown.json()["health"]["state"] == "reconnect_required"
    events = await events_of(x_runtime, tenant.organization_id, "channel.reconnect-required.v1")
    assert [e["data"]["channel"]["id"] for e in events] == [str(channel_id)]
