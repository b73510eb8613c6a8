"""Connecting channels through OAuth: `POST /api/v1/connect/{provider}` and the provider's
redirect back to `GET /connect/{provider}/callback` (no key: the single-use state authenticates).

Recorded exchanges (respx; any unrecorded request fails): X POST /2/oauth2/token and
GET /2/users/me (docs.x.com OAuth 2.0 authorization code with PKCE); Mastodon POST /api/v1/apps,
POST /oauth/token and GET /api/v1/accounts/verify_credentials (docs.joinmastodon.org
methods/apps, methods/oauth, methods/accounts)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import socket
import uuid
from collections.abc import AsyncIterator
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import httpx
import pytest
import respx
from fastapi import FastAPI
from pydantic import SecretStr
from sqlalchemy import select
from sqlalchemy import update

from pressroom.app import create_app
from pressroom.audit.models import AuditEntry
from pressroom.channels.models import Channel
from pressroom.channels.models import ChannelAuthorization
from pressroom.channels.models import MastodonApp
from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.kit.clock import utcnow
from pressroom.kit.logs import JSONFormatter
from pressroom.runtime import Runtime
from tests.factories import SERVER_KEY
from tests.factories import Tenant
from tests.factories import add_member_with_key
from tests.posts.factories import events_of

PUBLIC_URL = "https://pressroom.example"
X_CALLBACK = f"{PUBLIC_URL}/connect/x/callback"
X_ACCESS = "x-access-token-from-oauth"
X_REFRESH = "x-refresh-token-from-oauth"
MASTODON_TOKEN = "mastodon-token-from-oauth"
MASTODON_SECRET = "mastodon-client-secret-value"


@pytest.fixture
def settings(database_url: str, data_dir: Path) -> Settings:
    """A deployment with an X app and a public address (the redirect URIs are built on it)."""
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        secret_key=SERVER_KEY,
        redis_url=None,
        public_url=PUBLIC_URL,
        x_client_id="x-client-id",
        x_client_secret=SecretStr("x-app-secret-value"),
    )


@pytest.fixture
def network() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=True) as router:
        yield router


async def start(
    client: httpx.AsyncClient, tenant: Tenant, provider: str, body: dict[str, Any]
) -> httpx.Response:
    return await client.post(f"/api/v1/connect/{provider}", json=body, headers=tenant.headers)


async def started(
    client: httpx.AsyncClient, tenant: Tenant, provider: str = "x", **body: Any
) -> dict[str, Any]:
    response = await start(client, tenant, provider, {"name": "Main", **body})
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def x_exchange(network: respx.MockRouter) -> tuple[respx.Route, respx.Route]:
    token = network.post("https://api.x.com/2/oauth2/token").mock(
        return_value=httpx.Response(
            200,
            json={
                "token_type": "bearer",
                "expires_in": 7200,
                "access_token": X_ACCESS,
                "scope": "tweet.read tweet.write users.read media.write offline.access",
                "refresh_token": X_REFRESH,
            },
        )
    )
    me = network.get("https://api.x.com/2/users/me").mock(
        return_value=httpx.Response(
            200, json={"data": {"id": "2244994945", "name": "Pressroom", "username": "pressroom"}}
        )
    )
    return token, me


async def channels_of(runtime: Runtime, tenant: Tenant) -> list[Channel]:
    async with unit_of_work(runtime.sessions) as session:
        return list(
            await session.scalars(
                select(Channel).where(Channel.organization_id == tenant.organization_id)
            )
        )


async def audit_of(runtime: Runtime, tenant: Tenant, operation: str) -> list[AuditEntry]:
    async with unit_of_work(runtime.sessions) as session:
        return list(
            await session.scalars(
                select(AuditEntry)
                .where(
                    AuditEntry.organization_id == tenant.organization_id,
                    AuditEntry.operation_id == operation,
                )
                .order_by(AuditEntry.sequence)
            )
        )


# --- X -------------------------------------------------------------------------------------------


async def test_x_start_answers_the_authorization_url_with_pkce_and_stores_no_plain_secret(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    response = await start(client, tenant, "x", {"name": "X main"})
    assert response.status_code == 201, response.text
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert set(body) == {"authorizationUrl", "state", "expiresAt"}
    url = urlsplit(body["authorizationUrl"])
    assert (url.scheme, url.netloc, url.path) == ("https", "x.com", "/i/oauth2/authorize")
    query = query_of(body["authorizationUrl"])
    assert query["client_id"] == "x-client-id"
    assert query["redirect_uri"] == X_CALLBACK
    assert query["state"] == body["state"]
    assert query["code_challenge_method"] == "S256"
    assert "offline.access" in query["scope"].split()
    async with unit_of_work(runtime.sessions) as session:
        row = (
            await session.scalars(
                select(ChannelAuthorization).where(
                    ChannelAuthorization.organization_id == tenant.organization_id
                )
            )
        ).one()
    assert row.member_id == tenant.member_id
    assert row.credential_id == tenant.key_id
    assert row.expires_at - row.created_at == timedelta(minutes=10)
    assert row.used_at is None
    stored = json.dumps({c: str(getattr(row, c)) for c in row.__table__.columns.keys()})  # noqa: SIM118
    assert body["state"] not in stored
    verifier = json.loads(runtime.box.decrypt(row.secret_encrypted))["codeVerifier"]
    assert verifier not in stored
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    assert query["code_challenge"] == challenge.rstrip(b"=").decode()


async def test_x_callback_connects_the_channel_for_the_member_who_started_it(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, network: respx.MockRouter
) -> None:
    body = await started(client, tenant, "x", name="X main")
    token, me = x_exchange(network)

    response = await client.get(
        "/connect/x/callback", params={"code": "code-from-x", "state": body["state"]}
    )

    assert response.status_code == 200, response.text
    shown = response.json()
    assert (shown["provider"], shown["name"], shown["handle"]) == ("x", "X main", "@pressroom")
    assert shown["health"]["state"] == "healthy"
    sent = {k: v[0] for k, v in parse_qs(token.calls[0].request.content.decode()).items()}
    assert (sent["grant_type"], sent["code"], sent["redirect_uri"]) == (
        "authorization_code",
        "code-from-x",
        X_CALLBACK,
    )
    challenge = query_of(body["authorizationUrl"])["code_challenge"]
    digest = hashlib.sha256(sent["code_verifier"].encode()).digest()
    assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == challenge
    assert me.calls[0].request.headers["Authorization"] == f"Bearer {X_ACCESS}"

    read = await client.get(f"/api/v1/channels/{shown['id']}", headers=tenant.headers)
    assert read.status_code == 200
    [channel] = await channels_of(runtime, tenant)
    credentials = json.loads(runtime.box.decrypt(channel.credentials_encrypted or ""))
    assert (credentials["accessToken"], credentials["refreshToken"]) == (X_ACCESS, X_REFRESH)
    events = await events_of(runtime, tenant.organization_id, "channel.connected.v1")
    assert [e["data"]["channel"]["id"] for e in events] == [shown["id"]]
    [entry] = await audit_of(runtime, tenant, "completeChannelConnection")
    assert (entry.member_id, entry.credential_id, entry.credential_prefix) == (
        tenant.member_id,
        tenant.key_id,
        tenant.key[:12],
    )
    assert (entry.resource_type, entry.resource_id, entry.outcome_status) == (
        "channel",
        shown["id"],
        200,
    )
    assert len(await audit_of(runtime, tenant, "startChannelConnection")) == 1


async def test_a_state_serves_one_callback_only(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, network: respx.MockRouter
) -> None:
    body = await started(client, tenant)
    token, _ = x_exchange(network)
    params = {"code": "code-from-x", "state": body["state"]}
    assert (await client.get("/connect/x/callback", params=params)).status_code == 200

    again = await client.get("/connect/x/callback", params=params)

    assert again.status_code == 400
    assert again.headers["content-type"] == "application/problem+json"
    assert again.json()["errors"][0]["field"] == "state"
    assert again.json()["errors"][0]["code"] == "already_used"
    assert token.call_count == 1
    assert len(await channels_of(runtime, tenant)) == 1


async def test_of_two_concurrent_callbacks_with_one_state_exactly_one_connects(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, network: respx.MockRouter
) -> None:
    body = await started(client, tenant)
    token, _ = x_exchange(network)
    params = {"code": "code-from-x", "state": body["state"]}

    answers = await asyncio.gather(
        client.get("/connect/x/callback", params=params),
        client.get("/connect/x/callback", params=params),
    )

    assert sorted(a.status_code for a in answers) == [200, 400]
    assert token.call_count == 1
    assert len(await channels_of(runtime, tenant)) == 1


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"code": "c", "state": "never-issued-state"}, "unknown"),
        ({"code": "c"}, "required"),
    ],
)
async def test_a_missing_or_unknown_state_is_400(
    client: httpx.AsyncClient, params: dict[str, str], code: str
) -> None:
    response = await client.get("/connect/x/callback", params=params)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "state", "code": code, "message": response.json()["errors"][0]["message"]}
    ]


async def test_the_callback_documents_its_state_as_required(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    operation = document["paths"]["/connect/{provider}/callback"]["get"]
    parameters = {p["name"]: p for p in operation["parameters"]}
    assert parameters["state"]["required"] is True
    assert parameters["state"]["schema"]["type"] == "string"
    assert parameters["code"]["required"] is False


async def test_an_expired_state_is_400_and_exchanges_nothing(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    body = await started(client, tenant)
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(ChannelAuthorization)
            .where(ChannelAuthorization.organization_id == tenant.organization_id)
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    with respx.mock(assert_all_mocked=True) as network:
        response = await client.get(
            "/connect/x/callback", params={"code": "c", "state": body["state"]}
        )
        assert network.calls.call_count == 0
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "expired"
    assert await channels_of(runtime, tenant) == []


async def test_a_state_is_for_its_own_provider(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    body = await started(client, tenant)
    response = await client.get(
        "/connect/mastodon/callback", params={"code": "c", "state": body["state"]}
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "unknown"


async def test_access_denied_is_400_naming_it_and_creates_nothing(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    body = await started(client, tenant)
    params = {
        "error": "access_denied",
        "error_description": "The user denied the request",
        "state": body["state"],
    }
    with respx.mock(assert_all_mocked=True) as network:
        response = await client.get("/connect/x/callback", params=params)
        assert network.calls.call_count == 0

    assert response.status_code == 400
    problem = response.json()
    assert problem["errors"][0]["field"] == "error"
    assert problem["errors"][0]["code"] == "access_denied"
    assert "declined" in problem["detail"]
    assert await channels_of(runtime, tenant) == []
    assert await events_of(runtime, tenant.organization_id, "channel.connected.v1") == []
    [entry] = await audit_of(runtime, tenant, "completeChannelConnection")
    assert (entry.member_id, entry.outcome_status) == (tenant.member_id, 400)
    # The refused state is spent too.
    retry = await client.get("/connect/x/callback", params={"code": "c", "state": body["state"]})
    assert retry.json()["errors"][0]["code"] == "already_used"


async def test_a_code_the_provider_refuses_is_400_and_creates_nothing(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, network: respx.MockRouter
) -> None:
    body = await started(client, tenant)
    network.post("https://api.x.com/2/oauth2/token").mock(
        return_value=httpx.Response(
            400,
            json={
                "error": "invalid_request",
                "error_description": "Value passed for the authorization code was invalid.",
            },
        )
    )
    response = await client.get(
        "/connect/x/callback", params={"code": "stale-code", "state": body["state"]}
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "code"
    assert "stale-code" not in response.text
    assert await channels_of(runtime, tenant) == []


async def test_the_callback_can_send_the_browser_back_to_the_integrator(
    client: httpx.AsyncClient, tenant: Tenant, network: respx.MockRouter
) -> None:
    body = await started(client, tenant, redirectUri="https://app.example/settings?tab=social")
    x_exchange(network)
    response = await client.get("/connect/x/callback", params={"code": "c", "state": body["state"]})
    assert response.status_code == 303
    location = urlsplit(response.headers["location"])
    assert (location.netloc, location.path) == ("app.example", "/settings")
    query = query_of(response.headers["location"])
    assert query["tab"] == "social"
    read = await client.get(f"/api/v1/channels/{query['channelId']}", headers=tenant.headers)
    assert read.json()["provider"] == "x"


async def test_a_browser_gets_an_html_confirmation(
    client: httpx.AsyncClient, tenant: Tenant, network: respx.MockRouter
) -> None:
    body = await started(client, tenant, name="<b>Main</b>")
    x_exchange(network)
    response = await client.get(
        "/connect/x/callback",
        params={"code": "c", "state": body["state"]},
        headers={"Accept": "text/html,application/xhtml+xml"},
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "@pressroom" in response.text
    assert "&lt;b&gt;Main&lt;/b&gt;" in response.text


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"name": "X", "instance": "https://m.example"}, "instance", "not_applicable"),
        ({"name": "X", "redirectUri": "http://app.example/back"}, "redirectUri", "invalid"),
        ({"name": "X", "redirectUri": "https://app.example/#top"}, "redirectUri", "invalid"),
        ({"name": "  "}, "name", "required"),
    ],
)
async def test_start_is_validated_field_by_field(
    client: httpx.AsyncClient, tenant: Tenant, body: dict[str, Any], field: str, code: str
) -> None:
    response = await start(client, tenant, "x", body)
    assert response.status_code == 400
    assert [(e["field"], e["code"]) for e in response.json()["errors"]] == [(field, code)]


@pytest.mark.parametrize(
    ("provider", "status", "code"),
    [("bluesky", 400, "unsupported"), ("myspace", 404, None)],
)
async def test_providers_not_connected_through_oauth_are_refused(
    client: httpx.AsyncClient, tenant: Tenant, provider: str, status: int, code: str | None
) -> None:
    response = await start(client, tenant, provider, {"name": "N"})
    assert response.status_code == status
    if code is not None:
        assert response.json()["errors"][0] == {
            "field": "provider",
            "code": code,
            "message": response.json()["errors"][0]["message"],
        }


@pytest.fixture
async def unconfigured_client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    runtime = Runtime.build(settings.model_copy(update={"x_client_id": None}))
    app = create_app(runtime=runtime)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client
    await runtime.close()


async def test_x_without_the_deployments_x_app_is_not_configured(
    unconfigured_client: httpx.AsyncClient, tenant: Tenant
) -> None:
    response = await start(unconfigured_client, tenant, "x", {"name": "X"})
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["field"], error["code"]) == ("provider", "not_configured")
    assert "PRESSROOM_X_CLIENT_ID" in error["message"]


async def test_starting_needs_channels_write(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    reader = await add_member_with_key(runtime, tenant.organization_id, scopes=["channels:read"])
    response = await start(client, reader, "x", {"name": "X"})
    assert response.status_code == 403
    assert response.json()["requiredScope"] == "channels:write"


# --- Mastodon ------------------------------------------------------------------------------------


def fresh_instance() -> str:
    """An instance no other test registered on (registered apps are kept in the database)."""
    return f"https://{uuid.uuid4().hex[:8]}.mastodon.example"


def mastodon_app_registration(network: respx.MockRouter, instance: str) -> respx.Route:
    return network.post(f"{instance}/api/v1/apps").mock(
        return_value=httpx.Response(
            200,
            json={
                "id": "563419",
                "name": "Pressroom",
                "website": None,
                "redirect_uri": f"{PUBLIC_URL}/connect/mastodon/callback",
                "client_id": "mastodon-client-id",
                "client_secret": MASTODON_SECRET,
                "vapid_key": "BCk-QqERU0q-CfYZjcuB6lnyyOYfJ2AifKqfeGIm7Z-HiTU5T9eTG5Gx",
            },
        )
    )


async def test_mastodon_registers_its_app_once_per_instance_and_connects_the_account(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, network: respx.MockRouter
) -> None:
    instance = fresh_instance()
    register = mastodon_app_registration(network, instance)
    first = await started(client, tenant, "mastodon", instance=instance)
    second = await started(client, tenant, "mastodon", instance=instance.upper() + "/")
    assert register.call_count == 1
    sent = json.loads(register.calls[0].request.content)
    assert sent["redirect_uris"] == f"{PUBLIC_URL}/connect/mastodon/callback"
    assert sent["scopes"] == "read:accounts read:statuses write:media write:statuses"
    url = urlsplit(second["authorizationUrl"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{instance}/oauth/authorize"
    query = query_of(second["authorizationUrl"])
    assert (query["client_id"], query["state"]) == ("mastodon-client-id", second["state"])
    async with unit_of_work(runtime.sessions) as session:
        app_row = (
            await session.scalars(select(MastodonApp).where(MastodonApp.base_url == instance))
        ).one()
    assert MASTODON_SECRET not in app_row.client_secret_encrypted

    token = network.post(f"{instance}/oauth/token").mock(
        return_value=httpx.Response(
            200,
            json={
                "access_token": MASTODON_TOKEN,
                "token_type": "Bearer",
                "scope": "read:accounts read:statuses write:media write:statuses",
                "created_at": 1573979017,
            },
        )
    )
    verify = network.get(f"{instance}/api/v1/accounts/verify_credentials").mock(
        return_value=httpx.Response(200, json={"id": "109", "username": "alice", "acct": "alice"})
    )
    # The instance's own limits are read at connect (they are kept on the channel).
    network.get(f"{instance}/api/v2/instance").mock(
        return_value=httpx.Response(200, json={"configuration": {}})
    )
    response = await client.get(
        "/connect/mastodon/callback", params={"code": "masto-code", "state": first["state"]}
    )

    assert response.status_code == 200, response.text
    host = urlsplit(instance).netloc
    assert response.json()["handle"] == f"@alice@{host}"
    form = {k: v[0] for k, v in parse_qs(token.calls[0].request.content.decode()).items()}
    assert (form["grant_type"], form["code"], form["client_id"], form["client_secret"]) == (
        "authorization_code",
        "masto-code",
        "mastodon-client-id",
        MASTODON_SECRET,
    )
    assert form["redirect_uri"] == f"{PUBLIC_URL}/connect/mastodon/callback"
    challenge = query_of(first["authorizationUrl"])["code_challenge"]
    digest = hashlib.sha256(form["code_verifier"].encode()).digest()
    assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == challenge
    assert verify.calls[0].request.headers["Authorization"] == f"Bearer {MASTODON_TOKEN}"
    [channel] = await channels_of(runtime, tenant)
    credentials = json.loads(runtime.box.decrypt(channel.credentials_encrypted or ""))
    assert (credentials["baseUrl"], credentials["accessToken"]) == (instance, MASTODON_TOKEN)
    events = await events_of(runtime, tenant.organization_id, "channel.connected.v1")
    assert [e["data"]["channel"]["id"] for e in events] == [str(channel.id)]


@pytest.mark.parametrize(
    ("instance", "code"),
    [
        (None, "required"),
        ("https://127.0.0.1", "invalid"),
        ("https://mastodon.internal", "invalid"),
        ("https://mastodon.example:8443", "invalid"),
        ("https://user:pw@mastodon.example", "invalid"),
    ],
)
async def test_a_mastodon_instance_must_be_a_public_https_origin(
    client: httpx.AsyncClient, tenant: Tenant, instance: str | None, code: str
) -> None:
    body: dict[str, Any] = {"name": "Fediverse"}
    if instance is not None:
        body["instance"] = instance
    with respx.mock(assert_all_mocked=True) as network:
        response = await start(client, tenant, "mastodon", body)
        assert network.calls.call_count == 0
    assert response.status_code == 400
    assert [(e["field"], e["code"]) for e in response.json()["errors"]] == [("instance", code)]


async def test_an_instance_that_is_not_mastodon_is_400_on_instance(
    client: httpx.AsyncClient, tenant: Tenant, network: respx.MockRouter
) -> None:
    instance = fresh_instance()
    network.post(f"{instance}/api/v1/apps").mock(
        return_value=httpx.Response(404, text="<html>Not Found</html>")
    )
    response = await start(client, tenant, "mastodon", {"name": "F", "instance": instance})
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["field"], error["code"]) == ("instance", "unreachable")


async def test_an_instance_resolving_to_an_internal_address_is_400_without_the_address(
    client: httpx.AsyncClient,
    tenant: Tenant,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="pressroom.kit.outbound.destination")

    async def getaddrinfo(host: str, port: int, **kwargs: object) -> list[tuple[Any, ...]]:
        # The server's resolver knows an internal name the caller is probing for.
        assert host == "vm"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", getaddrinfo)

    response = await start(client, tenant, "mastodon", {"name": "F", "instance": "https://vm"})

    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["field"], error["code"]) == ("instance", "unreachable")
    assert "vm is not a public destination" in error["message"]
    assert "127.0.0.1" not in response.text
    # The operator's log keeps what the name resolved to.
    assert any(record.__dict__.get("address") == "127.0.0.1" for record in caplog.records)


# --- secrets and the callback's access -----------------------------------------------------------


async def test_no_token_verifier_secret_or_state_in_any_response_log_line_or_audit_entry(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    network: respx.MockRouter,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    instance = fresh_instance()
    mastodon_app_registration(network, instance)
    x_exchange(network)
    network.post(f"{instance}/oauth/token").mock(
        return_value=httpx.Response(200, json={"access_token": MASTODON_TOKEN})
    )
    network.get(f"{instance}/api/v1/accounts/verify_credentials").mock(
        return_value=httpx.Response(200, json={"id": "1", "username": "alice", "acct": "alice"})
    )
    # The instance's own limits are read at connect (they are kept on the channel).
    network.get(f"{instance}/api/v2/instance").mock(
        return_value=httpx.Response(200, json={"configuration": {}})
    )
    responses = []
    x_start = await start(client, tenant, "x", {"name": "X"})
    m_start = await start(client, tenant, "mastodon", {"name": "M", "instance": instance})
    responses += [x_start, m_start]
    for provider, begun in (("x", x_start.json()), ("mastodon", m_start.json())):
        params = {"code": f"{provider}-code-secret", "state": begun["state"]}
        responses.append(await client.get(f"/connect/{provider}/callback", params=params))
        responses.append(await client.get(f"/connect/{provider}/callback", params=params))
    listed = await client.get("/api/v1/channels", headers=tenant.headers)
    responses.append(listed)
    assert [r.status_code for r in responses] == [201, 201, 200, 400, 200, 400, 200]

    verifiers = []
    async with unit_of_work(runtime.sessions) as session:
        for row in await session.scalars(
            select(ChannelAuthorization).where(
                ChannelAuthorization.organization_id == tenant.organization_id
            )
        ):
            verifiers.append(json.loads(runtime.box.decrypt(row.secret_encrypted))["codeVerifier"])
    secrets = [
        X_ACCESS,
        X_REFRESH,
        MASTODON_TOKEN,
        MASTODON_SECRET,
        "x-app-secret-value",
        "x-code-secret",
        "mastodon-code-secret",
        *verifiers,
    ]
    after_start = [r.text for r in responses[2:]]  # the start responses show the state, once
    lines = [JSONFormatter().format(record) for record in caplog.records]
    entries = [
        json.dumps(entry.changes)
        for operation in ("startChannelConnection", "completeChannelConnection")
        for entry in await audit_of(runtime, tenant, operation)
    ]
    # Two starts and two completions; the replayed states were refused before any was known.
    assert len(entries) == 4
    for secret in secrets:
        for text in [x_start.text, m_start.text, *after_start, *lines, *entries]:
            assert secret not in text
    for state in (x_start.json()["state"], m_start.json()["state"]):
        for text in [*after_start, *lines, *entries]:
            assert state not in text


async def test_the_callback_takes_no_key_and_is_rate_limited_per_address(
    settings: Settings,
) -> None:
    runtime = Runtime.build(settings.model_copy(update={"rate_limit": "2/60"}))
    app: FastAPI = create_app(runtime=runtime)
    transport = httpx.ASGITransport(app=app, client=(f"192.0.2.{uuid.uuid4().int % 250}", 1))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            answers = [
                await client.get("/connect/x/callback", params={"code": "c", "state": "s"})
                for _ in range(3)
            ]
    finally:
        await runtime.close()
    assert [a.status_code for a in answers] == [400, 400, 429]
    assert answers[0].headers["ratelimit-limit"] == "2"
    assert answers[0].json()["code"] == "validation_failed"  # not 401: no key is needed
