"""`pressroom channels connect PROVIDER --access-token-env VAR` for networks connected through
an OAuth connector: the connector's `from_token` verifies the operator's long-lived token
before anything is stored; a token that reaches several accounts connects one channel each.
A fake connector stands in for the network (Facebook)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pressroom.providers.adapter import ProviderError
from tests.channels.fake_connector import APP_SECRET
from tests.channels.fake_connector import FakeConnector
from tests.channels.fake_connector import page
from tests.channels.test_connect_command import _organization
from tests.channels.test_connect_command import cli_env  # noqa: F401
from tests.channels.test_connect_real_accounts import assert_no_secret_anywhere
from tests.channels.test_connect_real_accounts import connect
from tests.channels.test_connect_real_accounts import credentials_of
from tests.channels.test_connect_real_accounts import read

TOKEN = "long-lived-user-token-0123456789"


@pytest.fixture
def facebook_app(monkeypatch: pytest.MonkeyPatch, cli_env: None) -> None:  # noqa: F811
    monkeypatch.setenv("PRESSROOM_FACEBOOK_CLIENT_ID", "facebook-app-id")
    monkeypatch.setenv("PRESSROOM_FACEBOOK_CLIENT_SECRET", APP_SECRET)
    monkeypatch.setenv("FACEBOOK_TOKEN", TOKEN)


def connect_facebook(organization_id: str, *extra: str) -> Any:
    return connect(
        "facebook",
        "--org",
        organization_id,
        "--name",
        "Acme",
        "--access-token-env",
        "FACEBOOK_TOKEN",
        *extra,
    )


@pytest.mark.usefixtures("facebook_app")
def test_a_token_of_one_account_connects_one_channel_and_prints_its_id(
    connector: FakeConnector,
) -> None:
    organization_id = _organization()

    result = connect_facebook(organization_id)

    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert set(printed) == {"id"}
    [(app, token)] = connector.tokens
    assert token == TOKEN
    assert app is not None and (app.client_id, app.client_secret) == ("facebook-app-id", APP_SECRET)
    [channel], entries = read(organization_id)
    assert str(channel.id) == printed["id"]
    assert (channel.provider, channel.name, channel.handle, channel.simulated) == (
        "facebook",
        "Acme",
        "@page1",
        False,
    )
    assert credentials_of(channel)["accessToken"] == "page-token-1-secret"
    [audited] = [e for e in entries if e.get("provider") == "facebook"]
    assert audited["verified"] is True and audited["options"] == ["--access-token"]
    assert "channelIds" not in audited
    assert_no_secret_anywhere(result, organization_id, TOKEN, "page-token-1-secret", APP_SECRET)


@pytest.mark.usefixtures("facebook_app")
def test_a_token_of_several_accounts_connects_a_channel_each_and_prints_every_id(
    connector: FakeConnector,
) -> None:
    connector.accounts = [page(1, name="Bakery"), page(2, name="Café"), page(3, name="Deli")]
    organization_id = _organization()

    result = connect_facebook(organization_id)

    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert set(printed) == {"id", "ids"}
    assert len(printed["ids"]) == 3 and printed["id"] == printed["ids"][0]
    channels, entries = read(organization_id)
    by_id = {str(channel.id): channel for channel in channels}
    assert [(by_id[i].name, by_id[i].handle) for i in printed["ids"]] == [
        ("Acme: Bakery", "@page1"),
        ("Acme: Café", "@page2"),
        ("Acme: Deli", "@page3"),
    ]
    audited = [e for e in entries if e.get("provider") == "facebook"]
    assert [e["name"] for e in audited] == ["Acme: Bakery", "Acme: Café", "Acme: Deli"]
    assert all(e["channelIds"] == printed["ids"] for e in audited)
    tokens = [f"page-token-{n}-secret" for n in (1, 2, 3)]
    assert_no_secret_anywhere(result, organization_id, TOKEN, *tokens)


@pytest.mark.usefixtures("facebook_app")
def test_a_token_the_network_refuses_stores_nothing(connector: FakeConnector) -> None:
    connector.refusal = ProviderError(
        "auth_expired", "Error validating access token: Session has expired"
    )
    organization_id = _organization()

    result = connect_facebook(organization_id)

    assert result.exit_code != 0
    assert "Session has expired" in result.stderr
    assert read(organization_id)[0] == []
    assert TOKEN not in result.output


@pytest.mark.usefixtures("facebook_app")
def test_a_token_that_reaches_no_account_stores_nothing(connector: FakeConnector) -> None:
    connector.accounts = []
    organization_id = _organization()

    result = connect_facebook(organization_id)

    assert result.exit_code != 0
    assert "no account" in result.stderr
    assert read(organization_id)[0] == []


@pytest.mark.usefixtures("facebook_app")
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--refresh-token", "r"), "--refresh-token is not an option of facebook"),
        (("--instance", "https://m.example"), "--instance is not an option of facebook"),
    ],
)
def test_options_a_connector_does_not_take_are_refused(
    connector: FakeConnector, extra: tuple[str, ...], message: str
) -> None:
    result = connect_facebook(_organization(), *extra)
    assert result.exit_code != 0
    assert message in result.stderr
    assert connector.tokens == []


@pytest.mark.usefixtures("cli_env")
def test_without_the_app_settings_the_error_names_them(
    connector: FakeConnector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACEBOOK_TOKEN", TOKEN)

    result = connect_facebook(_organization())

    assert result.exit_code != 0
    assert (
        "PRESSROOM_FACEBOOK_CLIENT_ID and PRESSROOM_FACEBOOK_CLIENT_SECRET are not set"
        in result.stderr
    )
    assert connector.tokens == []


@pytest.mark.usefixtures("facebook_app")
def test_a_missing_token_says_which_option_to_give(connector: FakeConnector) -> None:
    result = connect("facebook", "--org", _organization(), "--name", "Acme")
    assert result.exit_code != 0
    assert "--access-token-env" in result.stderr
    assert connector.tokens == []
