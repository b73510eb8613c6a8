"""The command line (contract section 10), in-process and as a person runs it."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from pressroom.cli import app
from tests import servers
from tests.factories import SERVER_KEY

runner = CliRunner()


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, database_url: str, tmp_path: Path) -> dict[str, str]:
    env = {
        "PRESSROOM_DATABASE_URL": database_url,
        "PRESSROOM_DATA_DIR": str(tmp_path / "data"),
        "PRESSROOM_SECRET_KEY": SERVER_KEY,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def run_json(*args: str) -> dict[str, object]:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def bootstrap() -> tuple[str, str, str]:
    org = run_json("orgs", "create", "--name", "CLI Org")["id"]
    member = run_json(
        "members", "add", "--org", str(org), "--email", "o@cli.example", "--role", "owner"
    )["id"]
    key = run_json(
        "keys",
        "create",
        "--org",
        str(org),
        "--member",
        str(member),
        "--scopes",
        "workspace:read,posts:read",
    )
    assert re.fullmatch(r"prk_[A-Za-z0-9_-]{43}", str(key["key"]))
    return str(org), str(member), str(key["key"])


def test_bootstrap_commands_print_one_json_object(cli_env: dict[str, str]):
    org, member, _key = bootstrap()
    assert org and member
    verified = run_json("audit", "verify", "--org", org)
    assert verified == {"entries": 3, "ok": True}


def test_keys_revoke_and_expiry_options(cli_env: dict[str, str]):
    org, member, _ = bootstrap()
    issued = run_json(
        "keys",
        "create",
        "--org",
        org,
        "--member",
        member,
        "--scopes",
        "all",
        "--name",
        "short",
        "--expires-in",
        "60",
    )
    revoked = run_json("keys", "revoke", str(issued["id"]))
    assert revoked == {"id": issued["id"], "revoked": True}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["orgs", "create", "--name", "   "], "organization name"),
        (["members", "add", "--org", "not-a-uuid", "--email", "a@b.co", "--role", "owner"], "UUID"),
        (
            [
                "members",
                "add",
                "--org",
                "00000000-0000-7000-8000-000000000000",
                "--email",
                "a@b.co",
                "--role",
                "owner",
            ],
            "no such organization",
        ),
        (
            [
                "keys",
                "create",
                "--org",
                "00000000-0000-7000-8000-000000000000",
                "--member",
                "00000000-0000-7000-8000-000000000000",
                "--scopes",
                "posts:fly",
            ],
            "unknown scope",
        ),
        (["keys", "revoke", "00000000-0000-7000-8000-000000000000"], "no such key"),
    ],
)
def test_failures_exit_non_zero_with_the_reason_on_stderr(
    cli_env: dict[str, str], args: list[str], message: str
):
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code != 0
    assert message in result.stderr
    assert result.stdout.strip() == ""


def test_members_role_is_validated(cli_env: dict[str, str]):
    org = run_json("orgs", "create", "--name", "Roles")["id"]
    result = runner.invoke(
        app,
        ["members", "add", "--org", str(org), "--email", "x@y.co", "--role", "emperor", "--json"],
    )
    assert result.exit_code != 0
    assert "role must be one of owner, admin, member" in result.stderr


def test_audit_verify_exits_1_on_a_broken_chain(cli_env: dict[str, str], database_url: str):
    import asyncio

    from sqlalchemy import update

    from pressroom.audit.models import AuditEntry
    from pressroom.config import Settings
    from pressroom.db import unit_of_work
    from pressroom.runtime import Runtime

    org, _, _ = bootstrap()

    async def tamper() -> None:
        runtime = Runtime.build(Settings())
        async with unit_of_work(runtime.sessions) as session:
            await session.execute(
                update(AuditEntry)
                .where(AuditEntry.organization_id == __import__("uuid").UUID(org))
                .where(AuditEntry.sequence == 1)
                .values(operation_id="cli.orgs.rename")
            )
        await runtime.close()

    asyncio.run(tamper())
    result = runner.invoke(app, ["audit", "verify", "--org", org, "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["ok"] is False
    assert "entry 1 was altered" in result.stderr


DEMO_OWNER = "owner@demo.pressroom.example"
# The whole line, so a half-written one is not read.
CURL_LINE = re.compile(r"Bearer prk_[A-Za-z0-9_-]+' http://\S+/api/v1/tenant\n")


@pytest.mark.slow
def test_serve_demo_prints_a_working_curl_line(tmp_path: Path, database_url: str):
    """As the README says: `pressroom serve --demo`, then the printed curl line works."""
    port = servers.free_port()
    env = {**os.environ, "PRESSROOM_DATA_DIR": str(tmp_path / "demo")}
    env.pop("PRESSROOM_DATABASE_URL", None)  # the embedded SQLite default
    process = servers.start(
        "serve-demo", ["serve", "--demo", "--port", str(port)], env, tmp_path / "logs"
    )
    try:
        servers.wait_until(
            "the curl line", lambda: CURL_LINE.search(process.printed()) is not None, [process]
        )
        curl = next(line for line in process.printed().splitlines() if "curl" in line)
        key = re.search(r"Bearer (prk_[A-Za-z0-9_-]+)", curl).group(1)  # type: ignore[union-attr]
        url = re.search(r"(http://\S+/api/v1/tenant)", curl).group(1)  # type: ignore[union-attr]
        servers.wait_until(
            "the API", servers.healthy(url.removesuffix("/api/v1/tenant")), [process]
        )
        response = httpx.get(url, headers={"Authorization": f"Bearer {key}"}, timeout=5)
        assert response is not None and response.status_code == 200
        assert response.json()["name"] == "Demo organization"
        assert response.json()["member"]["role"] == "owner"
        assert (tmp_path / "demo" / "pressroom.db").exists()
        # The printed console link signs the demo owner in, once.
        link = re.search(
            r"Console: (http://\S+/console/sign-in/link\?token=prl_\S+)", process.printed()
        )
        assert link is not None, process.printed()
        with httpx.Client() as browser:
            signed_in = browser.post(link.group(1), timeout=5)
            assert signed_in.status_code == 303 and signed_in.headers["location"] == "/console"
            overview = browser.get(url.removesuffix("/api/v1/tenant") + "/console", timeout=5)
            assert overview.status_code == 200 and DEMO_OWNER in overview.text
        assert httpx.post(link.group(1), timeout=5).status_code == 400
    finally:
        process.stop()
    stderr = process.output()
    # uvicorn re-raises SIGTERM once its graceful shutdown is complete.
    assert process.popen.returncode in (0, -signal.SIGTERM), stderr[-2000:]
    assert "workers stopped" in stderr and "Application shutdown complete" in stderr
    assert key not in stderr  # the key is printed once on stdout, never logged


@pytest.mark.slow
def test_worker_stops_gracefully_on_sigterm(tmp_path: Path, database_url: str):
    env = {
        **os.environ,
        "PRESSROOM_DATABASE_URL": database_url,
        "PRESSROOM_DATA_DIR": str(tmp_path / "w"),
        "PRESSROOM_SECRET_KEY": SERVER_KEY,
    }
    process = servers.start("worker", ["worker"], env, tmp_path / "logs")
    servers.wait_until("the worker", servers.workers_started([process]), [process])
    process.stop()
    assert process.popen.returncode == 0
    assert "workers stopped" in process.output()


def test_migrations_run_down_and_up_again(tmp_path: Path):
    from alembic import command
    from alembic.config import Config

    from pressroom.db import async_url
    from pressroom.db import migrate

    server = os.environ.get("PRESSROOM_TEST_DATABASE_URL")
    if server:
        import asyncio
        import secrets

        import asyncpg

        base, _, admin = server.rpartition("/")
        name = f"pressroom_mig_{secrets.token_hex(4)}"

        async def admin_sql(sql: str) -> None:
            conn = await asyncpg.connect(f"{base}/{admin}")
            try:
                await conn.execute(sql)
            finally:
                await conn.close()

        asyncio.run(admin_sql(f'CREATE DATABASE "{name}"'))
        url = f"{base}/{name}"
    else:
        url = f"sqlite:///{tmp_path / 'mig.db'}"
    try:
        migrate(url)
        # Alembic's default stdout is whatever sys.stdout was when alembic.config was first
        # imported, perhaps by an earlier test, inside a CliRunner whose stream is now closed.
        config = Config(stdout=sys.stdout)
        config.set_main_option(
            "script_location", str(Path(__file__).parents[1] / "src/pressroom/migrations")
        )
        config.set_main_option("sqlalchemy.url", async_url(url))
        command.downgrade(config, "base")
        command.upgrade(config, "heads")
        command.check(config)  # the models and the migrations describe the same schema
    finally:
        if server:
            asyncio.run(admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def test_db_upgrade_names_the_migrations_it_applied_and_then_that_none_were_left(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", f"sqlite:///{tmp_path / 'fresh.db'}")
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PRESSROOM_SECRET_KEY", SERVER_KEY)
    first = runner.invoke(app, ["db", "upgrade", "--json"])
    assert first.exit_code == 0, first.output
    applied = json.loads(first.stdout)["applied"]
    assert applied[0] == "0001_foundation" and "0008_server_key_check" in applied
    # Progress on stderr, one line per migration as it is applied.
    assert [f"pressroom: applied migration {r}" for r in applied] == first.stderr.splitlines()
    again = runner.invoke(app, ["db", "upgrade"])
    assert again.exit_code == 0, again.output
    assert again.stdout.strip() == "nothing to apply: the database was already up to date"


def test_db_upgrade_in_words_counts_what_it_applied(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", f"sqlite:///{tmp_path / 'fresh.db'}")
    monkeypatch.setenv("PRESSROOM_SECRET_KEY", SERVER_KEY)
    result = runner.invoke(app, ["db", "upgrade"])
    assert result.exit_code == 0, result.output
    assert re.fullmatch(
        r"applied \d+ migrations \(0001_foundation, .*\); the database is up to "
        r"date",
        result.stdout.strip(),
    )


def test_lists_print_items_and_never_a_key(cli_env: dict[str, str]):
    org, member, key = bootstrap()
    organizations = run_json("orgs", "list")["items"]
    assert {"id": org, "name": "CLI Org"} in [
        {"id": o["id"], "name": o["name"]}
        for o in organizations  # type: ignore[index]
    ]
    members = run_json("members", "list", "--org", org)["items"]
    assert [(m["id"], m["email"], m["role"]) for m in members] == [  # type: ignore[index]
        (member, "o@cli.example", "owner")
    ]
    revoked_id = run_json(
        "keys", "create", "--org", org, "--member", member, "--scopes", "all", "--name", "old"
    )["id"]
    run_json("keys", "revoke", str(revoked_id))
    result = runner.invoke(app, ["keys", "list", "--org", org, "--json"])
    assert result.exit_code == 0, result.output
    items = json.loads(result.stdout)["items"]
    assert [set(item) for item in items] == [
        {"id", "name", "prefix", "scopes", "memberId", "createdAt", "expiresAt", "revokedAt"}
    ] * 2
    assert key.startswith(items[0]["prefix"]) and items[0]["revokedAt"] is None
    assert items[0]["scopes"] == ["workspace:read", "posts:read"]
    assert items[1]["id"] == revoked_id and items[1]["revokedAt"] is not None
    from pressroom.kit.crypto import digest_api_key

    human = runner.invoke(app, ["keys", "list", "--org", org])
    for output in (result.output, human.output):
        assert key not in output and digest_api_key(key) not in output
    assert len(human.stdout.splitlines()) == 2


def test_keys_list_of_an_unknown_organization_fails(cli_env: dict[str, str]):
    result = runner.invoke(
        app, ["keys", "list", "--org", "00000000-0000-7000-8000-000000000000", "--json"]
    )
    assert result.exit_code == 1
    assert "no such organization" in result.stderr


def _commands(group: object, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in getattr(group, "commands", {}).items():
        found.append((*path, name))
        found += _commands(command, (*path, name))
    return found


def test_help_names_values_without_type_placeholders():
    import typer.main

    commands = _commands(typer.main.get_command(app))
    assert ("keys", "list") in commands and ("channels", "connect") in commands
    for command in [(), *commands]:
        result = runner.invoke(app, [*command, "--help"])
        assert result.exit_code == 0, (command, result.output)
        for placeholder in ("<bool>", "<str>", "<int>", "<path>"):
            assert placeholder not in result.output, (command, result.output)
    keys_create = runner.invoke(app, ["keys", "create", "--help"]).output
    assert "--org ORG" in keys_create and "--expires-in SECONDS" in keys_create


def test_version_prints_the_installed_version():
    from importlib.metadata import version

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"pressroom {version('pressroom')}"


def test_serve_on_a_busy_port_exits_1_having_printed_and_created_nothing(tmp_path: Path):
    import socket
    import subprocess
    import sys

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = {**os.environ, "PRESSROOM_DATA_DIR": str(tmp_path / "demo")}
        env.pop("PRESSROOM_DATABASE_URL", None)
        env.pop("PRESSROOM_SECRET_KEY", None)
        finished = subprocess.run(
            [sys.executable, "-m", "pressroom", "serve", "--demo", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert finished.returncode == 1
    assert finished.stdout == ""
    assert f"cannot listen on 127.0.0.1:{port}" in finished.stderr
    # No database, no key: nothing was minted.
    assert not (tmp_path / "demo" / "pressroom.db").exists()


def test_each_demo_run_revokes_the_previous_demo_key(cli_env: dict[str, str]):
    import asyncio

    from pressroom.cli import create_demo
    from pressroom.config import Settings
    from pressroom.runtime import Runtime

    async def twice() -> tuple[dict[str, object], dict[str, object], bool, bool]:
        runtime = Runtime.build(Settings())
        try:
            first = await create_demo(runtime)
            second = await create_demo(runtime)
            old = await runtime.authenticate(str(first["key"]))
            new = await runtime.authenticate(str(second["key"]))
            return first, second, old is None, new is not None
        finally:
            await runtime.close()

    first, second, old_refused, new_accepted = asyncio.run(twice())
    assert first["organizationId"] == second["organizationId"]
    assert second["revokedKeys"] >= 1  # type: ignore[operator]
    assert old_refused and new_accepted
    keys = run_json("keys", "list", "--org", str(second["organizationId"]))["items"]
    working = [k for k in keys if k["revokedAt"] is None]  # type: ignore[index]
    assert [k["name"] for k in working] == ["demo owner key"]  # type: ignore[index]
