"""disconnectChannel revokes the provider tokens it erases (contract section 7), through the
revocation queue and its worker loop (channels/worker.py).

Recorded request shapes (respx: any request not recorded fails the test, nothing leaves the
machine): X `POST https://api.x.com/2/oauth2/revoke` (form `token`, `token_type_hint`,
`client_id`; HTTP Basic for a confidential client; docs.x.com OAuth 2.0), Mastodon
`POST {instance}/oauth/revoke` (form `client_id`, `client_secret`, `token`;
docs.joinmastodon.org methods/oauth), Bluesky `com.atproto.server.deleteSession` authorised by
the refresh JWT (docs.bsky.app), TikTok `POST https://open.tiktokapis.com/v2/oauth/revoke/`
(form `client_key`, `client_secret`, `token`; developers.tiktok.com
oauth-user-access-token-management)."""

from __future__ import annotations

import base64
import json
import logging
import uuid
from collections.abc import AsyncIterator
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
import respx
from pydantic import SecretStr
from sqlalchemy import delete
from sqlalchemy import select
from sqlalchemy import update

from pressroom.audit.models import AuditEntry
from pressroom.channels import repository
from pressroom.channels import service as channels
from pressroom.channels.models import Channel
from pressroom.channels.models import CredentialRevocation
from pressroom.channels.worker import MAX_ATTEMPTS
from pressroom.channels.worker import RETRY_DELAYS_SECONDS
from pressroom.channels.worker import revoke_disconnected_credentials
from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.providers.registry import configured_providers
from pressroom.runtime import Runtime
from pressroom.workers.loops import default_loops
from tests.channels.factories import connect_channel
from tests.factories import SERVER_KEY
from tests.factories import Tenant

X_CLIENT = "revocation-x-client"
X_SECRET = f"x-app-secret-{uuid.uuid4().hex}"
X_REVOKE = "https://api.x.com/2/oauth2/revoke"
MASTODON = "https://mastodon.example"
PDS = "https://morel.us-east.host.bsky.network"
TIKTOK_KEY = "revocation-tiktok-key"
TIKTOK_SECRET = f"tiktok-app-secret-{uuid.uuid4().hex}"
TIKTOK_REVOKE = "https://open.tiktokapis.com/v2/oauth/revoke/"


@pytest.fixture
def settings(database_url: str, data_dir: Path) -> Settings:
    """A deployment with a confidential X app and a TikTok app."""
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        secret_key=SERVER_KEY,
        redis_url=None,
        x_client_id=X_CLIENT,
        x_client_secret=SecretStr(X_SECRET),
        tiktok_client_id=TIKTOK_KEY,
        tiktok_client_secret=SecretStr(TIKTOK_SECRET),
    )


@pytest.fixture(autouse=True)
async def empty_revocation_queue(runtime: Runtime) -> AsyncIterator[None]:
    """The queue is shared by every organization of the test database: each test starts and
    leaves it empty, so no worker of another test ever calls a provider for it."""
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(delete(CredentialRevocation))
    yield
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(delete(CredentialRevocation))


@pytest.fixture
def network() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        yield router


def secret(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex}"


async def connect(
    runtime: Runtime, tenant: Tenant, provider: str, credentials: dict[str, Any]
) -> uuid.UUID:
    """A real (not simulated) channel with these credentials, as a connect stores them."""
    async with unit_of_work(runtime.sessions) as session:
        channel = await channels.connect(
            session,
            runtime,
            organization_id=tenant.organization_id,
            provider=provider,
            name=f"{provider} {uuid.uuid4().hex[:6]}",
            credentials=credentials,
            configured=configured_providers(runtime.settings),
        )
        return channel.id


async def disconnect(client: httpx.AsyncClient, tenant: Tenant, channel_id: uuid.UUID) -> str:
    response = await client.delete(f"/api/v1/channels/{channel_id}", headers=tenant.headers)
    assert response.status_code == 200, response.text
    assert response.json() == {"id": str(channel_id), "object": "channel", "deleted": True}
    return response.text


async def queued(runtime: Runtime) -> list[CredentialRevocation]:
    async with unit_of_work(runtime.sessions) as session:
        return list(await session.scalars(select(CredentialRevocation)))


async def channel_row(runtime: Runtime, channel_id: uuid.UUID) -> Channel:
    async with unit_of_work(runtime.sessions) as session:
        channel = await session.get(Channel, channel_id)
        assert channel is not None
        return channel


async def disconnect_audit(runtime: Runtime, channel_id: uuid.UUID) -> AuditEntry:
    async with unit_of_work(runtime.sessions) as session:
        return (
            await session.scalars(
                select(AuditEntry).where(
                    AuditEntry.operation_id == "disconnectChannel",
                    AuditEntry.resource_id == str(channel_id),
                )
            )
        ).one()


def form(request: httpx.Request) -> dict[str, list[str]]:
    return parse_qs(request.content.decode())


async def make_due(runtime: Runtime) -> None:
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(CredentialRevocation).values(next_attempt_at=utcnow() - timedelta(seconds=1))
        )


def logged(caplog: pytest.LogCaptureFixture) -> str:
    """Every log record with all its fields (extras included), as text."""
    return "\n".join(
        record.getMessage() + json.dumps(vars(record), default=str) for record in caplog.records
    )


def assert_never_said(tokens: list[str], *texts: str) -> None:
    for token in tokens:
        for text in texts:
            assert token not in text


async def test_disconnecting_an_x_channel_revokes_its_refresh_and_access_tokens(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    network: respx.MockRouter,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    access, refresh = secret("x-access"), secret("x-refresh")
    channel_id = await connect(
        runtime,
        tenant,
        "x",
        {"accessToken": access, "refreshToken": refresh, "userId": "12", "username": "me"},
    )
    revoke = network.post(X_REVOKE).mock(return_value=httpx.Response(200, json={"revoked": True}))

    answer = await disconnect(client, tenant, channel_id)
    assert not revoke.called  # the request never waits for the provider
    assert (await channel_row(runtime, channel_id)).credentials_encrypted is None
    [row] = await queued(runtime)
    assert (row.channel_id, row.provider, row.attempts) == (channel_id, "x", 0)
    audit = await disconnect_audit(runtime, channel_id)
    assert audit.changes["providerAccess"] == "erased, revocation queued"

    assert await revoke_disconnected_credentials(runtime) is True
    sent = [call.request for call in revoke.calls]
    assert [form(request) for request in sent] == [
        {"token": [refresh], "client_id": [X_CLIENT], "token_type_hint": ["refresh_token"]},
        {"token": [access], "client_id": [X_CLIENT], "token_type_hint": ["access_token"]},
    ]
    basic = base64.b64encode(f"{X_CLIENT}:{X_SECRET}".encode()).decode()
    assert {request.headers["authorization"] for request in sent} == {f"Basic {basic}"}
    assert await queued(runtime) == []
    assert await revoke_disconnected_credentials(runtime) is False
    assert any(r.getMessage() == "credential revocation done" for r in caplog.records)
    assert_never_said(
        [access, refresh, X_SECRET], answer, logged(caplog), json.dumps(audit.changes)
    )


async def test_disconnecting_an_oauth_connected_mastodon_channel_revokes_its_token(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    network: respx.MockRouter,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    token, app_secret = secret("mastodon-token"), secret("mastodon-app-secret")
    channel_id = await connect(
        runtime,
        tenant,
        "mastodon",
        {
            "baseUrl": MASTODON,
            "accessToken": token,
            "accountId": "1",
            "username": "alice",
            "clientId": "mastodon-client",
            "clientSecret": app_secret,
        },
    )
    revoke = network.post(f"{MASTODON}/oauth/revoke").mock(
        return_value=httpx.Response(200, json={})
    )

    answer = await disconnect(client, tenant, channel_id)
    assert len(await queued(runtime)) == 1
    assert await revoke_disconnected_credentials(runtime) is True

    [call] = revoke.calls
    assert form(call.request) == {
        "client_id": ["mastodon-client"],
        "client_secret": [app_secret],
        "token": [token],
    }
    assert await queued(runtime) == []
    audit = await disconnect_audit(runtime, channel_id)
    assert_never_said([token, app_secret], answer, logged(caplog), json.dumps(audit.changes))


async def test_disconnecting_a_tiktok_channel_revokes_its_access_token(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    network: respx.MockRouter,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    access, refresh = secret("act.tiktok-access"), secret("rft.tiktok-refresh")
    expires = int(utcnow().timestamp()) + 20 * 3600
    channel_id = await connect(
        runtime,
        tenant,
        "tiktok",
        {"accessToken": access, "expiresAt": expires, "refreshToken": refresh, "openId": "o-1"},
    )
    revoke = network.post(TIKTOK_REVOKE).mock(return_value=httpx.Response(200, json={}))

    answer = await disconnect(client, tenant, channel_id)
    assert not revoke.called
    [row] = await queued(runtime)
    assert row.provider == "tiktok"
    assert await revoke_disconnected_credentials(runtime) is True

    [call] = revoke.calls
    assert form(call.request) == {
        "client_key": [TIKTOK_KEY],
        "client_secret": [TIKTOK_SECRET],
        "token": [access],
    }
    assert await queued(runtime) == []
    audit = await disconnect_audit(runtime, channel_id)
    assert_never_said(
        [access, refresh, TIKTOK_SECRET], answer, logged(caplog), json.dumps(audit.changes)
    )


async def test_disconnecting_a_bluesky_channel_ends_its_session_with_the_refresh_token(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    network: respx.MockRouter,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    app_password, access, refresh = secret("app-pw"), secret("access-jwt"), secret("refresh-jwt")
    channel_id = await connect(
        runtime,
        tenant,
        "bluesky",
        {
            "identifier": "alice.bsky.social",
            "appPassword": app_password,
            "service": "https://bsky.social",
            "did": "did:plc:z72i7hdynmk6r22z27h6tvur",
            "handle": "alice.bsky.social",
            "accessJwt": access,
            "refreshJwt": refresh,
            "pds": PDS,
        },
    )
    delete_session = network.post(f"{PDS}/xrpc/com.atproto.server.deleteSession").mock(
        return_value=httpx.Response(200)
    )

    answer = await disconnect(client, tenant, channel_id)
    assert await revoke_disconnected_credentials(runtime) is True

    [call] = delete_session.calls
    assert call.request.headers["authorization"] == f"Bearer {refresh}"
    assert call.request.content == b""
    assert await queued(runtime) == []
    audit = await disconnect_audit(runtime, channel_id)
    assert_never_said(
        [app_password, access, refresh], answer, logged(caplog), json.dumps(audit.changes)
    )


async def test_a_provider_5xx_is_retried_with_growing_pauses_then_given_up(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    network: respx.MockRouter,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    access, refresh = secret("x-access"), secret("x-refresh")
    channel_id = await connect(
        runtime, tenant, "x", {"accessToken": access, "refreshToken": refresh}
    )
    revoke = network.post(X_REVOKE).mock(
        return_value=httpx.Response(503, json={"title": "Service Unavailable"})
    )
    await disconnect(client, tenant, channel_id)

    for attempt in range(1, MAX_ATTEMPTS):
        started = utcnow()
        assert await revoke_disconnected_credentials(runtime) is True
        [row] = await queued(runtime)
        assert (row.attempts, row.lease_owner) == (attempt, None)
        pause = (row.next_attempt_at - started).total_seconds()
        assert RETRY_DELAYS_SECONDS[attempt - 1] <= pause < RETRY_DELAYS_SECONDS[attempt - 1] + 30
        assert await revoke_disconnected_credentials(runtime) is False  # not due yet
        await make_due(runtime)
    assert await revoke_disconnected_credentials(runtime) is True

    assert await queued(runtime) == []
    assert revoke.call_count == MAX_ATTEMPTS  # the refresh token each time; X never answered
    [given_up] = [r for r in caplog.records if r.getMessage() == "credential revocation given up"]
    assert (given_up.levelname, given_up.code, given_up.attempt) == (  # type: ignore[attr-defined]
        "WARNING",
        "provider_unavailable",
        MAX_ATTEMPTS,
    )
    assert sum(RETRY_DELAYS_SECONDS) / 60 == pytest.approx(61)  # about an hour in all
    assert_never_said([access, refresh, X_SECRET], logged(caplog))


async def test_a_mastodon_token_given_on_the_command_line_is_unsupported_and_dropped(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    network: respx.MockRouter,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    token = secret("mastodon-token")
    channel_id = await connect(
        runtime,
        tenant,
        "mastodon",
        {"baseUrl": MASTODON, "accessToken": token, "accountId": "1", "username": "alice"},
    )
    await disconnect(client, tenant, channel_id)
    assert len(await queued(runtime)) == 1

    assert await revoke_disconnected_credentials(runtime) is True
    assert network.calls.call_count == 0
    assert await queued(runtime) == []
    [done] = [r for r in caplog.records if r.getMessage() == "credential revocation done"]
    assert done.outcome == "unsupported"  # type: ignore[attr-defined]
    assert_never_said([token], logged(caplog))


async def test_sandbox_and_simulated_channels_queue_nothing(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    sandbox = await connect_channel(
        runtime, tenant.organization_id, credentials={"accessToken": secret("sandbox")}
    )
    simulated = await connect_channel(
        runtime,
        tenant.organization_id,
        provider="x",
        credentials={"accessToken": secret("simulated")},
    )
    for channel_id in (sandbox, simulated):
        await disconnect(client, tenant, channel_id)
        assert (await channel_row(runtime, channel_id)).credentials_encrypted is None
        assert (await disconnect_audit(runtime, channel_id)).changes["providerAccess"] == "erased"
    assert await queued(runtime) == []
    assert await revoke_disconnected_credentials(runtime) is False


async def test_tokens_refreshed_by_a_call_in_flight_during_the_disconnect_are_queued_too(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    channel_id = await connect(runtime, tenant, "x", {"accessToken": secret("x-access")})
    await disconnect(client, tenant, channel_id)
    rotated = {"accessToken": secret("x-access"), "refreshToken": secret("x-refresh")}
    async with unit_of_work(runtime.sessions) as session:
        await channels.store_credentials(session, runtime, channel_id, rotated)

    assert (await channel_row(runtime, channel_id)).credentials_encrypted is None
    rows = await queued(runtime)
    assert len(rows) == 2
    stored = [json.loads(runtime.box.decrypt(row.credentials_encrypted)) for row in rows]
    assert rotated in stored
    assert all(rotated["refreshToken"] not in row.credentials_encrypted for row in rows)


async def test_a_revocation_whose_worker_died_is_taken_over_when_its_lease_runs_out(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, network: respx.MockRouter
) -> None:
    token, app_secret = secret("mastodon-token"), secret("mastodon-app-secret")
    channel_id = await connect(
        runtime,
        tenant,
        "mastodon",
        {"baseUrl": MASTODON, "accessToken": token, "clientId": "c", "clientSecret": app_secret},
    )
    revoke = network.post(f"{MASTODON}/oauth/revoke").mock(
        return_value=httpx.Response(200, json={})
    )
    await disconnect(client, tenant, channel_id)
    async with unit_of_work(runtime.sessions) as session:
        [claimed] = await repository.claim_due_revocations(
            session, owner="dead-worker", lease_seconds=60, limit=10, now=utcnow()
        )
    assert await revoke_disconnected_credentials(runtime) is False  # leased to another worker

    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(CredentialRevocation).values(lease_until=utcnow() - timedelta(seconds=1))
        )
    assert await revoke_disconnected_credentials(runtime) is True
    assert revoke.call_count == 1
    assert await queued(runtime) == []
    # The dead worker's late outcome finds nothing to record.
    async with unit_of_work(runtime.sessions) as session:
        assert await repository.finish_revocation(session, claimed.id, "dead-worker") is False


def test_the_revoker_is_one_of_the_default_loops() -> None:
    assert "credential-revoker" in {loop.name for loop in default_loops()}
