"""`pressroom channels connect` and the demo's sandbox channels (contract section 10)."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from pressroom.channels.models import Channel
from pressroom.cli import app
from pressroom.cli import create_demo
from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from tests.factories import SERVER_KEY

runner = CliRunner()


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, database_url: str, tmp_path: Path) -> None:
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", database_url)
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PRESSROOM_SECRET_KEY", SERVER_KEY)


def _organization() -> str:
    result = runner.invoke(app, ["orgs", "create", "--name", "CLI channels", "--json"])
    assert result.exit_code == 0, result.output
    return str(json.loads(result.stdout)["id"])


def _channel(channel_id: str) -> Channel:
    """The stored channel, read the way another process would (the commands run their own
    event loop, so these tests are synchronous)."""

    async def read() -> Channel:
        runtime = Runtime.build(Settings())
        try:
            async with unit_of_work(runtime.sessions) as session:
                channel = await session.get(Channel, uuid.UUID(channel_id))
                assert channel is not None
                return channel
        finally:
            await runtime.close()

    return asyncio.run(read())


@pytest.mark.usefixtures("cli_env")
def test_connect_sandbox_prints_the_id():
    organization_id = _organization()
    result = runner.invoke(
        app,
        [
            "channels",
            "connect",
            "sandbox",
            "--org",
            organization_id,
            "--name",
            "Sandbox",
            "--handle",
            "@demo",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert set(printed) == {"id"}
    channel = _channel(printed["id"])
    assert (channel.provider, channel.name, channel.handle, channel.simulated) == (
        "sandbox",
        "Sandbox",
        "@demo",
        False,
    )
    assert str(channel.organization_id) == organization_id


@pytest.mark.usefixtures("cli_env")
def test_connect_any_provider_simulated():
    organization_id = _organization()
    result = runner.invoke(
        app,
        [
            "channels",
            "connect",
            "bluesky",
            "--simulated",
            "--org",
            organization_id,
            "--name",
            "Staging",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    channel = _channel(json.loads(result.stdout)["id"])
    assert (channel.provider, channel.simulated) == ("bluesky", True)


@pytest.mark.usefixtures("cli_env")
@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        (["pinterest"], "not configured"),
        (["myspace"], "unknown provider"),
        (["sandbox", "--name", " "], "name"),
    ],
)
def test_connect_refusals_exit_non_zero_with_the_reason(arguments: list[str], reason: str):
    organization_id = _organization()
    name = [] if "--name" in arguments else ["--name", "N"]
    result = runner.invoke(
        app,
        ["channels", "connect", *arguments, *name, "--org", organization_id, "--json"],
    )
    assert result.exit_code != 0
    assert reason in result.stderr
    assert result.stdout == ""


@pytest.mark.usefixtures("cli_env")
def test_connect_to_an_unknown_organization_fails():
    result = runner.invoke(
        app,
        ["channels", "connect", "sandbox", "--org", str(uuid.uuid4()), "--name", "N", "--json"],
    )
    assert result.exit_code != 0
    assert "no such organization" in result.stderr


async def test_demo_connects_a_sandbox_and_a_simulated_bluesky_channel_once(runtime: Runtime):
    first = await create_demo(runtime)
    await create_demo(runtime)
    async with unit_of_work(runtime.sessions) as session:
        channels = (
            await session.scalars(
                select(Channel).where(Channel.organization_id == uuid.UUID(first["organizationId"]))
            )
        ).all()
    assert sorted((c.provider, c.name, c.simulated) for c in channels) == [
        ("bluesky", "Bluesky (simulated)", True),
        ("sandbox", "Sandbox", False),
    ]
