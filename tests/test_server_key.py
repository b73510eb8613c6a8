"""The server key (README "The server key"): strong, and the same on every node; a node whose
key cannot read the database's secrets refuses to start, naming the setting."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError
from sqlalchemy import delete
from sqlalchemy import func
from sqlalchemy import select
from typer.testing import CliRunner

from pressroom.app import create_app
from pressroom.cli import app
from pressroom.config import Settings
from pressroom.db import migrate
from pressroom.db import unit_of_work
from pressroom.kit.crypto import SecretBox
from pressroom.kit.crypto import load_or_create_server_key
from pressroom.runtime import Runtime
from pressroom.server_key import ServerKeyCheck
from pressroom.server_key import ServerKeyMismatch
from tests.factories import SERVER_KEY
from tests.factories import make_tenant

runner = CliRunner()
OTHER_KEY = secrets.token_urlsafe(32)


def weak_key_error(key: str, tmp_path: Path) -> str:
    with pytest.raises(ValidationError) as caught:
        Settings(secret_key=key, data_dir=tmp_path)
    return str(caught.value)


def test_a_short_key_is_refused_naming_the_setting_but_not_the_key(tmp_path: Path):
    message = weak_key_error("abc", tmp_path)
    assert "PRESSROOM_SECRET_KEY is too weak" in message
    assert "secrets.token_urlsafe(32)" in message  # how to make a good one
    assert "abc" not in message


@pytest.mark.parametrize(
    "key",
    [
        "test-server-key-" + "x" * 32,
        "x" * 64,
        "0123456789" * 4,
        "changeme-changeme-changeme-changeme-",
    ],
)
def test_a_long_key_of_little_variety_or_a_repeated_pattern_is_refused(key: str, tmp_path: Path):
    message = weak_key_error(key, tmp_path)
    assert "PRESSROOM_SECRET_KEY is too weak" in message
    assert key not in message


def test_generated_keys_are_accepted(tmp_path: Path):
    for _ in range(200):
        for key in (
            secrets.token_urlsafe(32),
            secrets.token_hex(32),
            base64.b64encode(secrets.token_bytes(32)).decode(),
        ):
            assert Settings(secret_key=key, data_dir=tmp_path).secret_key == key


def test_postgresql_needs_an_explicitly_set_key(tmp_path: Path):
    url = "postgresql://pressroom@127.0.0.1:5432/pressroom"
    with pytest.raises(ValidationError) as caught:
        Settings(database_url=url, data_dir=tmp_path)
    assert "PRESSROOM_SECRET_KEY must be set" in str(caught.value)
    assert Settings(database_url=url, data_dir=tmp_path, secret_key=SERVER_KEY).secret_key


def test_a_weak_key_fails_a_command_naming_the_variable_not_the_value(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("PRESSROOM_DATABASE_URL", raising=False)
    monkeypatch.setenv("PRESSROOM_SECRET_KEY", "hunter2-hunter2")
    result = runner.invoke(app, ["orgs", "list", "--json"])
    assert result.exit_code == 1
    assert "PRESSROOM_SECRET_KEY is too weak" in result.stderr
    assert "hunter2" not in result.output
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def record_server_key(settings: Settings) -> None:
    """The shared test database's key check: recorded from the suite's key (the first use)."""

    async def verify() -> None:
        runtime = Runtime.build(settings)
        try:
            await runtime.verify_server_key()
        finally:
            await runtime.close()

    asyncio.run(verify())


def count_organizations(settings: Settings, name: str) -> int:
    async def count() -> int:
        from pressroom.auth.models import Organization

        runtime = Runtime.build(settings)
        try:
            async with unit_of_work(runtime.sessions) as session:
                statement = select(func.count()).where(Organization.name == name)
                return int(await session.scalar(statement) or 0)
        finally:
            await runtime.close()

    return asyncio.run(count())


def test_a_command_with_another_key_refuses_to_run_and_changes_nothing(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    record_server_key(settings)
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", settings.effective_database_url)
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "other-node"))
    monkeypatch.setenv("PRESSROOM_SECRET_KEY", OTHER_KEY)
    result = runner.invoke(app, ["orgs", "create", "--name", "Wrong key node", "--json"])
    assert result.exit_code == 1
    assert "PRESSROOM_SECRET_KEY" in result.stderr
    assert "does not match this database" in result.stderr
    assert OTHER_KEY not in result.output and SERVER_KEY not in result.output
    assert result.stdout == ""
    assert count_organizations(settings, "Wrong key node") == 0


def test_a_worker_with_another_key_exits_at_start_naming_the_setting(
    settings: Settings, tmp_path: Path
):
    record_server_key(settings)
    env = {
        **os.environ,
        "PRESSROOM_DATABASE_URL": settings.effective_database_url,
        "PRESSROOM_DATA_DIR": str(tmp_path / "worker"),
        "PRESSROOM_SECRET_KEY": OTHER_KEY,
    }
    # Without the check the worker would run (and fail every delivery): the timeout says so.
    finished = subprocess.run(
        [sys.executable, "-m", "pressroom", "worker"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert finished.returncode == 1
    assert "PRESSROOM_SECRET_KEY" in finished.stderr
    assert OTHER_KEY not in finished.stderr + finished.stdout


def test_a_node_that_generated_its_own_key_refuses_to_start(
    settings: Settings, is_postgres: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    if is_postgres:
        pytest.skip("PostgreSQL never generates a key: it must be set")
    record_server_key(settings)
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", settings.effective_database_url)
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "own-key"))
    monkeypatch.delenv("PRESSROOM_SECRET_KEY", raising=False)
    result = runner.invoke(app, ["orgs", "list", "--json"])
    assert result.exit_code == 1
    assert "PRESSROOM_SECRET_KEY" in result.stderr
    assert str(tmp_path / "own-key" / "secret.key") in result.stderr
    generated = (tmp_path / "own-key" / "secret.key").read_text()
    assert generated not in result.output


async def test_the_application_refuses_to_start_with_another_key(
    runtime: Runtime, settings: Settings
):
    await runtime.verify_server_key()
    other = Settings(
        database_url=settings.effective_database_url,
        data_dir=settings.data_dir,
        secret_key=OTHER_KEY,
    )
    application = create_app(other)
    with pytest.raises(ServerKeyMismatch) as caught:
        async with application.router.lifespan_context(application):
            pass
    assert "PRESSROOM_SECRET_KEY" in str(caught.value)
    assert OTHER_KEY not in str(caught.value)


async def test_concurrent_first_starts_record_one_check_value(runtime: Runtime):
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(delete(ServerKeyCheck))
    await asyncio.gather(*(runtime.verify_server_key() for _ in range(8)))
    async with unit_of_work(runtime.sessions) as session:
        values = list((await session.scalars(select(ServerKeyCheck.check_value))).all())
    assert values == [runtime.box.key_check_value()]


def test_the_check_value_reveals_nothing_of_the_key():
    value = SecretBox(SERVER_KEY).key_check_value()
    assert len(value) == 64 and SERVER_KEY not in value
    assert value != SecretBox(OTHER_KEY).key_check_value()


def test_a_data_dir_of_the_previous_version_upgrades_and_keeps_working(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """`db upgrade` of a SQLite data directory made before the check existed: its generated
    key becomes the database's key on the first start, and everything stays readable."""
    data_dir = tmp_path / "data"
    migrate(f"sqlite:///{data_dir / 'pressroom.db'}", "0007_credential_revocations")
    key = load_or_create_server_key(None, data_dir)
    before = Settings(data_dir=data_dir)

    async def previous_version_data() -> str:
        runtime = Runtime.build(before)
        try:
            return str((await make_tenant(runtime, name="Before the upgrade")).organization_id)
        finally:
            await runtime.close()

    organization_id = asyncio.run(previous_version_data())
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(data_dir))
    monkeypatch.delenv("PRESSROOM_DATABASE_URL", raising=False)
    monkeypatch.delenv("PRESSROOM_SECRET_KEY", raising=False)

    upgraded = runner.invoke(app, ["db", "upgrade", "--json"])
    assert upgraded.exit_code == 0, upgraded.output
    assert json.loads(upgraded.stdout)["applied"][0] == "0008_server_key_check"
    listed = runner.invoke(app, ["keys", "list", "--org", organization_id, "--json"])
    assert listed.exit_code == 0, listed.output
    assert len(json.loads(listed.stdout)["items"]) == 1

    async def stored_check() -> str | None:
        runtime = Runtime.build(before)
        try:
            async with unit_of_work(runtime.sessions) as session:
                return await session.scalar(select(ServerKeyCheck.check_value))
        finally:
            await runtime.close()

    assert asyncio.run(stored_check()) == SecretBox(key).key_check_value()
