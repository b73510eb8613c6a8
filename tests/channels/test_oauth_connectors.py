"""The OAuth connection of networks connected through their `OAuthConnector`
(`registry.CONNECTORS`: Facebook, Instagram, Threads, ...), generic over the connector: start,
callback, one channel per granted account. A fake connector stands in for the network."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import select

from pressroom.app import create_app
from pressroom.channels import service as channels
from pressroom.channels.models import ChannelAuthorization
from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.kit.logs import JSONFormatter
from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import ConnectedAccount
from pressroom.runtime import Runtime
from tests.channels.fake_connector import APP_SECRET
from tests.channels.fake_connector import AUTHORIZE
from tests.channels.fake_connector import KEPT_SECRET
from tests.channels.fake_connector import FakeConnector
from tests.channels.fake_connector import page
from tests.channels.test_oauth_connect import audit_of
from tests.channels.test_oauth_connect import channels_of
from tests.channels.test_oauth_connect import query_of
from tests.channels.test_oauth_connect import start
from tests.factories import SERVER_KEY
from tests.factories import Tenant
from tests.posts.factories import events_of

PUBLIC_URL = "https://pressroom.example"
CALLBACK = f"{PUBLIC_URL}/connect/facebook/callback"


@pytest.fixture
def settings(database_url: str, data_dir: Path) -> Settings:
    """A deployment with a Facebook app and a public address."""
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        secret_key=SERVER_KEY,
        redis_url=None,
        public_url=PUBLIC_URL,
        facebook_client_id="facebook-app-id",
        facebook_client_secret=SecretStr(APP_SECRET),
    )


@asynccontextmanager
async def client_for(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """A client of an application over its own runtime (other settings, same database)."""
    runtime = Runtime.build(settings)
    transport = httpx.ASGITransport(app=create_app(runtime=runtime))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client
    finally:
        await runtime.close()


async def begin(client: httpx.AsyncClient, tenant: Tenant, **body: Any) -> dict[str, Any]:
    response = await start(client, tenant, "facebook", {"name": "Main", **body})
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


async def callback(
    client: httpx.AsyncClient, state: str, code: str = "code-from-facebook", **headers: str
) -> httpx.Response:
    return await client.get(
        "/connect/facebook/callback", params={"code": code, "state": state}, headers=headers
    )


async def test_start_answers_the_connectors_url_and_keeps_its_secret_encrypted(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, connector: FakeConnector
) -> None:
    body = await begin(client, tenant)

    [(app, state)] = connector.started
    assert (app.provider, app.client_id, app.client_secret) == (
        "facebook",
        "facebook-app-id",
        APP_SECRET,
    )
    assert app.redirect_uri == CALLBACK
    assert state == body["state"]
    assert body["authorizationUrl"].startswith(AUTHORIZE + "?")
    assert query_of(body["authorizationUrl"])["redirect_uri"] == CALLBACK
    async with unit_of_work(runtime.sessions) as session:
        row = (
            await session.scalars(
                select(ChannelAuthorization).where(
                    ChannelAuthorization.organization_id == tenant.organization_id
                )
            )
        ).one()
    stored = json.dumps({c: str(getattr(row, c)) for c in row.__table__.columns.keys()})  # noqa: SIM118
    assert body["state"] not in stored and KEPT_SECRET not in stored
    assert (row.provider, row.name, row.instance) == ("facebook", "Main", None)
    assert json.loads(runtime.box.decrypt(row.secret_encrypted)) == {"nonce": KEPT_SECRET}
    assert len(await audit_of(runtime, tenant, "startChannelConnection")) == 1


async def test_a_grant_of_one_account_connects_one_channel_answered_as_today(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, connector: FakeConnector
) -> None:
    body = await begin(client, tenant, name="Acme on Facebook")

    response = await callback(client, body["state"])

    assert response.status_code == 200, response.text
    shown = response.json()
    assert (shown["provider"], shown["name"], shown["handle"]) == (
        "facebook",
        "Acme on Facebook",
        "@page1",
    )
    [exchanged] = connector.exchanged
    assert exchanged["code"] == "code-from-facebook"
    assert exchanged["kept"] == {"nonce": KEPT_SECRET}
    assert exchanged["app"].redirect_uri == CALLBACK
    [channel] = await channels_of(runtime, tenant)
    assert str(channel.id) == shown["id"]
    assert json.loads(runtime.box.decrypt(channel.credentials_encrypted or "")) == {
        "pageId": "101",
        "accessToken": "page-token-1-secret",
    }
    events = await events_of(runtime, tenant.organization_id, "channel.connected.v1")
    assert [e["data"]["channel"]["id"] for e in events] == [shown["id"]]
    [entry] = await audit_of(runtime, tenant, "completeChannelConnection")
    assert (entry.member_id, entry.resource_type, entry.resource_id, entry.outcome_status) == (
        tenant.member_id,
        "channel",
        shown["id"],
        200,
    )
    assert "channelIds" not in entry.changes


async def test_the_code_is_exchanged_after_the_state_was_spent_outside_its_transaction(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, connector: FakeConnector
) -> None:
    body = await begin(client, tenant)
    seen: list[object] = []
    exchange = connector.exchange

    async def observing(*args: Any) -> list[ConnectedAccount]:
        # Another session sees the state used: the claim committed before the network call.
        async with unit_of_work(runtime.sessions) as session:
            seen.append(
                await session.scalar(
                    select(ChannelAuthorization.used_at).where(
                        ChannelAuthorization.organization_id == tenant.organization_id
                    )
                )
            )
        return await exchange(*args)

    connector.exchange = observing  # type: ignore[method-assign]
    assert (await callback(client, body["state"])).status_code == 200
    assert seen and seen[0] is not None


async def test_a_grant_of_three_accounts_connects_three_channels(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, connector: FakeConnector
) -> None:
    connector.accounts = [page(1, name="Bakery"), page(2, name="Café"), page(3, name="Deli")]
    body = await begin(client, tenant, name="Acme")

    response = await callback(client, body["state"])

    assert response.status_code == 200, response.text
    items = response.json()["items"]
    assert set(response.json()) == {"items"}
    assert [(c["name"], c["handle"]) for c in items] == [
        ("Acme: Bakery", "@page1"),
        ("Acme: Café", "@page2"),
        ("Acme: Deli", "@page3"),
    ]
    ids = [c["id"] for c in items]
    stored = {str(c.id): c for c in await channels_of(runtime, tenant)}
    assert set(stored) == set(ids)
    for number, channel_id in enumerate(ids, start=1):
        credentials = json.loads(
            runtime.box.decrypt(stored[channel_id].credentials_encrypted or "")
        )
        assert credentials["accessToken"] == f"page-token-{number}-secret"
    events = await events_of(runtime, tenant.organization_id, "channel.connected.v1")
    assert sorted(e["data"]["channel"]["id"] for e in events) == sorted(ids)
    entries = await audit_of(runtime, tenant, "completeChannelConnection")
    assert [e.resource_id for e in entries] == ids
    assert all(e.changes["channelIds"] == ids for e in entries)
    assert all(e.member_id == tenant.member_id and e.outcome_status == 200 for e in entries)
    listed = await client.get("/api/v1/channels", headers=tenant.headers)
    assert {c["id"] for c in listed.json()["items"]} == set(ids)


async def test_several_channels_go_back_to_the_integrator_as_one_channel_id_each(
    client: httpx.AsyncClient, tenant: Tenant, connector: FakeConnector
) -> None:
    connector.accounts = [page(1), page(2), page(3)]
    body = await begin(client, tenant, redirectUri="https://app.example/back?tab=social")

    response = await callback(client, body["state"])

    assert response.status_code == 303
    query = parse_qs(urlsplit(response.headers["location"]).query)
    assert query["tab"] == ["social"]
    assert len(query["channelId"]) == 3
    for number, channel_id in enumerate(query["channelId"], start=1):
        read = await client.get(f"/api/v1/channels/{channel_id}", headers=tenant.headers)
        assert read.json()["handle"] == f"@page{number}"


async def test_a_browser_sees_every_channel_of_the_grant(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, connector: FakeConnector
) -> None:
    connector.accounts = [page(1, name="<i>Bakery</i>"), page(2), page(3)]
    body = await begin(client, tenant)

    response = await callback(client, body["state"], Accept="text/html")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "3 channels connected" in response.text
    for channel in await channels_of(runtime, tenant):
        assert str(channel.id) in response.text
    assert "&lt;i&gt;Bakery&lt;/i&gt;" in response.text and "<i>" not in response.text


async def test_a_code_the_network_refuses_is_400_and_creates_nothing(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, connector: FakeConnector
) -> None:
    connector.refusal = ProviderError(
        "auth_expired", "This authorization code has been used. (code 100, subcode 36009)"
    )
    body = await begin(client, tenant)

    response = await callback(client, body["state"])

    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["field"], error["code"]) == ("code", "rejected")
    assert "has been used" in error["message"]
    assert await channels_of(runtime, tenant) == []
    [entry] = await audit_of(runtime, tenant, "completeChannelConnection")
    assert (entry.resource_type, entry.outcome_status) == ("channelConnection", 400)


async def test_a_grant_of_no_account_is_400_and_creates_nothing(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, connector: FakeConnector
) -> None:
    connector.accounts = []
    body = await begin(client, tenant)

    response = await callback(client, body["state"])

    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "no_account"
    assert await channels_of(runtime, tenant) == []


@pytest.mark.parametrize(
    ("update", "message"),
    [
        (
            {"facebook_client_id": None, "facebook_client_secret": None},
            "PRESSROOM_FACEBOOK_CLIENT_ID and PRESSROOM_FACEBOOK_CLIENT_SECRET are not set",
        ),
        ({"facebook_client_secret": None}, "PRESSROOM_FACEBOOK_CLIENT_SECRET is not set"),
    ],
)
async def test_without_the_app_settings_starting_is_400_naming_them(
    settings: Settings,
    tenant: Tenant,
    connector: FakeConnector,
    update: dict[str, Any],
    message: str,
) -> None:
    async with client_for(settings.model_copy(update=update)) as unconfigured:
        response = await start(unconfigured, tenant, "facebook", {"name": "Main"})
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["field"], error["code"]) == ("provider", "not_configured")
    assert message in error["message"]
    assert connector.started == []


async def test_app_settings_removed_before_the_callback_are_400_not_configured(
    client: httpx.AsyncClient,
    settings: Settings,
    runtime: Runtime,
    tenant: Tenant,
    connector: FakeConnector,
) -> None:
    body = await begin(client, tenant)
    update = {"facebook_client_id": None, "facebook_client_secret": None}
    async with client_for(settings.model_copy(update=update)) as unconfigured:
        response = await callback(unconfigured, body["state"])
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "not_configured"
    assert connector.exchanged == []
    assert await channels_of(runtime, tenant) == []


async def test_no_secret_reaches_a_response_log_line_or_audit_entry(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    connector: FakeConnector,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    connector.accounts = [page(1), page(2)]
    first = await begin(client, tenant)
    second = await begin(client, tenant)
    answers = [
        await callback(client, first["state"], code="first-code-secret"),
        await callback(client, first["state"], code="first-code-secret"),  # spent
        await callback(client, second["state"], code="second-code-secret", Accept="text/html"),
        await client.get("/api/v1/channels", headers=tenant.headers),
    ]
    assert [a.status_code for a in answers] == [200, 400, 200, 200]

    secrets = [
        APP_SECRET,
        KEPT_SECRET,
        "page-token-1-secret",
        "page-token-2-secret",
        "first-code-secret",
        "second-code-secret",
        first["state"],
        second["state"],
    ]
    lines = [JSONFormatter().format(record) for record in caplog.records]
    entries = [
        json.dumps(entry.changes)
        for operation in ("startChannelConnection", "completeChannelConnection")
        for entry in await audit_of(runtime, tenant, operation)
    ]
    assert len(entries) == 2 + 4
    for secret in secrets:
        for text in [*(a.text for a in answers), *lines, *entries]:
            assert secret not in text


def test_channel_names_tell_the_accounts_of_a_grant_apart() -> None:
    accounts = [
        ConnectedAccount({}, "@one", "Bakery"),
        ConnectedAccount({}, "@two", None),
        ConnectedAccount({}, None, None),
        ConnectedAccount({}, None, "P" * 300),
    ]
    names = channels.channel_names("  Acme  ", accounts)
    assert names[:3] == ["Acme: Bakery", "Acme: @two", "Acme: #3"]
    assert len(names[3]) <= channels.MAX_NAME_LENGTH and names[3].startswith("Acme: PPP")
    long = channels.channel_names("N" * 200, accounts[:2])
    assert all(len(name) <= channels.MAX_NAME_LENGTH for name in long)
    assert long[0].endswith(": Bakery")
    assert channels.channel_names("Acme", accounts[:1]) == ["Acme"]
