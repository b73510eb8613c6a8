"""`pressroom channels connect bluesky|mastodon|x`: the credentials are verified with the network
first (recorded exchanges: respx, any unrecorded request fails), stored encrypted, audited
without secrets; a refusal exits non-zero with the reason and stores nothing.

Recorded shapes: Bluesky com.atproto.server.createSession (docs.bsky.app; a wrong password is
401 `AuthenticationRequired` "Invalid identifier or password"), Mastodon
GET /api/v1/accounts/verify_credentials (docs.joinmastodon.org methods/accounts; a revoked
token is 401 `{"error": "The access token is invalid"}`), X GET /2/users/me (docs.x.com
x-api/users/user-lookup-me; a bad token is 401 with a problem body)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from sqlalchemy import select
from typer.testing import CliRunner

from pressroom.audit.models import AuditEntry
from pressroom.channels.models import Channel
from pressroom.cli import app
from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from tests.channels.test_connect_command import _organization
from tests.channels.test_connect_command import cli_env  # noqa: F401

runner = CliRunner()

APP_PASSWORD = "abcd-efgh-ijkl-mnop"
MASTODON_TOKEN = "ZA-Yj3aBD8U8Cm7lKUp-lm9O9BmDgdhHzDeqsY8tlL0"
X_TOKEN = "x-user-access-token-0123456789"
X_REFRESH = "x-user-refresh-token-9876543210"
DID = "did:plc:z72i7hdynmk6r22z27h6tvur"
PDS = "https://morel.us-east.host.bsky.network"


@pytest.fixture
def network() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=True) as router:
        yield router


def connect(*arguments: str) -> Any:
    return runner.invoke(app, ["channels", "connect", *arguments, "--json"])


def read(organization_id: str) -> tuple[list[Channel], list[dict[str, Any]]]:
    """The organization's channels and its audit entries' changes, read like another process."""

    async def work() -> tuple[list[Channel], list[dict[str, Any]]]:
        runtime = Runtime.build(Settings())
        try:
            async with unit_of_work(runtime.sessions) as session:
                org = uuid.UUID(organization_id)
                found = list(
                    await session.scalars(select(Channel).where(Channel.organization_id == org))
                )
                entries = list(
                    await session.scalars(
                        select(AuditEntry.changes).where(AuditEntry.organization_id == org)
                    )
                )
            return found, entries
        finally:
            await runtime.close()

    return asyncio.run(work())


def credentials_of(channel: Channel) -> dict[str, Any]:
    runtime = Runtime.build(Settings())
    try:
        assert channel.credentials_encrypted is not None
        return json.loads(runtime.box.decrypt(channel.credentials_encrypted))  # type: ignore[no-any-return]
    finally:
        asyncio.run(runtime.close())


def assert_no_secret_anywhere(result: Any, organization_id: str, *secrets: str) -> None:
    channels, entries = read(organization_id)
    shown = result.stdout + result.stderr + json.dumps(entries)
    for channel in channels:
        shown += channel.credentials_encrypted or ""
    for secret in secrets:
        assert secret not in shown


def session_body() -> dict[str, Any]:
    return {
        "did": DID,
        "handle": "alice.bsky.social",
        "accessJwt": "access-jwt-1",
        "refreshJwt": "refresh-jwt-1",
        "didDoc": {
            "id": DID,
            "service": [
                {"id": "#atproto_pds", "type": "AtprotoPersonalDataServer", "serviceEndpoint": PDS}
            ],
        },
        "active": True,
    }


@pytest.mark.usefixtures("cli_env")
def test_bluesky_connects_with_an_app_password_from_the_environment(
    network: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    organization_id = _organization()
    login = network.post("https://bsky.social/xrpc/com.atproto.server.createSession").mock(
        return_value=httpx.Response(200, json=session_body())
    )
    monkeypatch.setenv("BLUESKY_APP_PASSWORD", APP_PASSWORD)
    result = connect(
        "bluesky",
        "--org",
        organization_id,
        "--name",
        "Bluesky",
        "--handle",
        "@alice.bsky.social",
        "--app-password-env",
        "BLUESKY_APP_PASSWORD",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(login.calls[0].request.content) == {
        "identifier": "alice.bsky.social",
        "password": APP_PASSWORD,
    }
    printed = json.loads(result.stdout)
    assert set(printed) == {"id"}
    [channel], entries = read(organization_id)
    assert str(channel.id) == printed["id"]
    assert (channel.provider, channel.handle, channel.simulated) == (
        "bluesky",
        "@alice.bsky.social",
        False,
    )
    credentials = credentials_of(channel)
    assert credentials["appPassword"] == APP_PASSWORD
    assert (credentials["did"], credentials["accessJwt"]) == (DID, "access-jwt-1")
    [audited] = [e for e in entries if e.get("provider") == "bluesky"]
    assert audited["verified"] is True
    assert_no_secret_anywhere(result, organization_id, APP_PASSWORD, "access-jwt-1")


@pytest.mark.usefixtures("cli_env")
def test_a_wrong_bluesky_app_password_stores_nothing(network: respx.MockRouter) -> None:
    organization_id = _organization()
    network.post("https://bsky.social/xrpc/com.atproto.server.createSession").mock(
        return_value=httpx.Response(
            401,
            json={"error": "AuthenticationRequired", "message": "Invalid identifier or password"},
        )
    )
    result = connect(
        "bluesky",
        "--org",
        organization_id,
        "--name",
        "Bluesky",
        "--handle",
        "alice.bsky.social",
        "--app-password",
        APP_PASSWORD,
    )
    assert result.exit_code != 0
    assert result.stdout == ""
    assert "bluesky refused the credentials" in result.stderr
    assert "Invalid identifier or password" in result.stderr
    assert "app password" in result.stderr
    channels, _ = read(organization_id)
    assert channels == []
    assert_no_secret_anywhere(result, organization_id, APP_PASSWORD)


@pytest.mark.usefixtures("cli_env")
def test_mastodon_connects_with_an_access_token_and_reads_the_handle(
    network: respx.MockRouter,
) -> None:
    organization_id = _organization()
    verify = network.get("https://mastodon.example/api/v1/accounts/verify_credentials").mock(
        return_value=httpx.Response(
            200, json={"id": "109", "username": "alice", "acct": "alice", "display_name": "A"}
        )
    )
    # The instance's own limits are read at connect (they are kept on the channel).
    network.get("https://mastodon.example/api/v2/instance").mock(
        return_value=httpx.Response(200, json={"configuration": {}})
    )
    result = connect(
        "mastodon",
        "--org",
        organization_id,
        "--name",
        "Fediverse",
        "--instance",
        "https://Mastodon.Example/",
        "--access-token",
        MASTODON_TOKEN,
    )
    assert result.exit_code == 0, result.output
    assert verify.calls[0].request.headers["Authorization"] == f"Bearer {MASTODON_TOKEN}"
    [channel], entries = read(organization_id)
    assert (channel.provider, channel.handle) == ("mastodon", "@alice@mastodon.example")
    assert credentials_of(channel) == {
        "baseUrl": "https://mastodon.example",
        "accessToken": MASTODON_TOKEN,
        "accountId": "109",
        "username": "alice",
    }
    [audited] = [e for e in entries if e.get("provider") == "mastodon"]
    assert audited["instance"] == "https://mastodon.example"
    assert_no_secret_anywhere(result, organization_id, MASTODON_TOKEN)


@pytest.mark.usefixtures("cli_env")
def test_a_revoked_mastodon_token_stores_nothing(network: respx.MockRouter) -> None:
    organization_id = _organization()
    network.get("https://mastodon.example/api/v1/accounts/verify_credentials").mock(
        return_value=httpx.Response(401, json={"error": "The access token is invalid"})
    )
    result = connect(
        "mastodon",
        "--org",
        organization_id,
        "--name",
        "Fediverse",
        "--instance",
        "mastodon.example",
        "--access-token",
        MASTODON_TOKEN,
    )
    assert result.exit_code != 0
    assert "The access token is invalid" in result.stderr
    assert "Create a new token" in result.stderr
    assert read(organization_id)[0] == []
    assert_no_secret_anywhere(result, organization_id, MASTODON_TOKEN)


@pytest.mark.usefixtures("cli_env")
@pytest.mark.parametrize(
    ("instance", "reason"),
    [
        ("https://10.0.0.7", "private address"),
        ("http://mastodon.example", "must use https"),
        ("https://mastodon.local", "local-only name"),
    ],
)
def test_a_mastodon_instance_that_is_not_public_https_is_refused_without_a_request(
    instance: str, reason: str
) -> None:
    organization_id = _organization()
    with respx.mock(assert_all_mocked=True) as network:
        result = connect(
            "mastodon",
            "--org",
            organization_id,
            "--name",
            "Fediverse",
            "--instance",
            instance,
            "--access-token",
            MASTODON_TOKEN,
        )
    assert result.exit_code != 0
    assert reason in result.stderr
    assert network.calls.call_count == 0
    assert read(organization_id)[0] == []


@pytest.mark.usefixtures("cli_env")
def test_x_connects_with_tokens_when_the_deployment_has_an_x_app(
    network: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRESSROOM_X_CLIENT_ID", "x-client")
    organization_id = _organization()
    me = network.get("https://api.x.com/2/users/me").mock(
        return_value=httpx.Response(
            200, json={"data": {"id": "2244994945", "name": "Pressroom", "username": "pressroom"}}
        )
    )
    monkeypatch.setenv("X_REFRESH", X_REFRESH)
    result = connect(
        "x",
        "--org",
        organization_id,
        "--name",
        "X",
        "--access-token",
        X_TOKEN,
        "--refresh-token-env",
        "X_REFRESH",
    )
    assert result.exit_code == 0, result.output
    assert me.calls[0].request.headers["Authorization"] == f"Bearer {X_TOKEN}"
    [channel], _ = read(organization_id)
    assert (channel.provider, channel.handle) == ("x", "@pressroom")
    assert credentials_of(channel) == {
        "accessToken": X_TOKEN,
        "refreshToken": X_REFRESH,
        "userId": "2244994945",
        "username": "pressroom",
    }
    assert_no_secret_anywhere(result, organization_id, X_TOKEN, X_REFRESH)


@pytest.mark.usefixtures("cli_env")
def test_an_x_token_refused_by_x_stores_nothing(
    network: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRESSROOM_X_CLIENT_ID", "x-client")
    organization_id = _organization()
    network.get("https://api.x.com/2/users/me").mock(
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
    result = connect("x", "--org", organization_id, "--name", "X", "--access-token", X_TOKEN)
    assert result.exit_code != 0
    assert "x refused the credentials" in result.stderr
    assert read(organization_id)[0] == []
    assert_no_secret_anywhere(result, organization_id, X_TOKEN)


@pytest.mark.usefixtures("cli_env")
def test_x_without_the_deployments_x_app_is_not_configured() -> None:
    organization_id = _organization()
    with respx.mock(assert_all_mocked=True) as network:
        result = connect("x", "--org", organization_id, "--name", "X", "--access-token", X_TOKEN)
    assert result.exit_code != 0
    assert "PRESSROOM_X_CLIENT_ID" in result.stderr
    assert network.calls.call_count == 0


@pytest.mark.usefixtures("cli_env")
@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        (["bluesky", "--handle", "a.bsky.social"], "needs an app password"),
        (["bluesky", "--app-password", "p"], "needs --handle"),
        (["bluesky", "--handle", "a", "--instance", "https://m.example"], "--instance is not an"),
        (["mastodon", "--access-token", "t"], "needs --instance"),
        (["bluesky", "--handle", "a", "--app-password-env", "UNSET_VARIABLE_X"], "not set"),
        (["sandbox", "--access-token", "t"], "take no credentials"),
        (["x", "--simulated", "--access-token", "t"], "take no credentials"),
    ],
)
def test_missing_or_stray_options_are_refused_before_any_request(
    arguments: list[str], reason: str
) -> None:
    organization_id = _organization()
    with respx.mock(assert_all_mocked=True) as network:
        result = connect(*arguments, "--org", organization_id, "--name", "N")
    assert result.exit_code != 0
    assert reason in result.stderr
    assert network.calls.call_count == 0
    assert read(organization_id)[0] == []


@pytest.mark.usefixtures("cli_env")
def test_simulated_and_sandbox_channels_still_need_no_credentials() -> None:
    organization_id = _organization()
    with respx.mock(assert_all_mocked=True) as network:
        simulated = connect("x", "--simulated", "--org", organization_id, "--name", "Staging")
        sandbox = connect("sandbox", "--org", organization_id, "--name", "Sandbox")
    assert simulated.exit_code == 0, simulated.output
    assert sandbox.exit_code == 0, sandbox.output
    assert network.calls.call_count == 0
    channels, _ = read(organization_id)
    assert sorted((c.provider, c.simulated, c.credentials_encrypted) for c in channels) == [
        ("sandbox", False, None),
        ("x", True, None),
    ]
