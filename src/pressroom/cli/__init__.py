"""The `pressroom` command: thin, each command parses, calls a service and prints. Every
command takes --json."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Annotated
from typing import Any
from typing import TypeVar

import typer
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession
from typer.core import TyperArgument

from pressroom.audit import service as audit
from pressroom.auth import service as auth
from pressroom.auth.scopes import SCOPES
from pressroom.auth.scopes import parse_scopes
from pressroom.config import Settings
from pressroom.db import migrate
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from pressroom.server_key import ServerKeyMismatch
from pressroom.tenant import service as tenant

T = TypeVar("T")


def _group(help_text: str) -> typer.Typer:
    # Plain help: rich panels would show `<bool>` beside every flag and `--help`.
    return typer.Typer(no_args_is_help=True, rich_markup_mode=None, help=help_text)


app: typer.Typer = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Pressroom publishing API.",
)
db_app = _group("Database migrations.")
orgs_app = _group("Organizations.")
members_app = _group("Members of an organization.")
keys_app = _group("API keys.")
audit_app = _group("The audit ledger.")
app.add_typer(db_app, name="db")
app.add_typer(orgs_app, name="orgs")
app.add_typer(members_app, name="members")
app.add_typer(keys_app, name="keys")
app.add_typer(audit_app, name="audit")
channels_app = _group("Connected social accounts.")
app.add_typer(channels_app, name="channels")
analytics_app = _group("Analytics history.")
app.add_typer(analytics_app, name="analytics")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
OrgOption = Annotated[str, typer.Option("--org", metavar="ORG", help="Organization id.")]


def _show_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"pressroom {version('pressroom')}")
        raise typer.Exit()


def _name_values(command: Any) -> None:
    """Help names each value after its option or argument (`--org ORG`, `FILE`), never by a
    Python type such as `<str>`, in every command, including those declared without a
    metavar."""
    for param in command.params:
        if param.metavar is None and param.name and not getattr(param, "is_flag", False):
            param.metavar = param.name.upper()
        if isinstance(param, TyperArgument):
            # Typer adds the type after an argument's name whatever its metavar.
            # (an instance attribute: typer's classes declare no such hook for mypy to see).
            setattr(param, "display_type_rich", _no_type)  # noqa: B010
    for subcommand in getattr(command, "commands", {}).values():
        _name_values(subcommand)


def _no_type(ctx: Any) -> None:
    return None


@app.callback()
def _main(
    ctx: typer.Context,
    _version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_show_version, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Pressroom publishing API."""
    # Runs before the subcommand parses its arguments, so before any help is printed.
    _name_values(ctx.command)


class CommandError(Exception):
    """A failure to report on stderr with a non-zero exit."""


@dataclass(frozen=True)
class Change:
    """What a command changed, for its entry in the audit ledger."""

    organization_id: uuid.UUID
    resource_type: str
    resource_id: object
    details: dict[str, Any]


def _emit(as_json: bool, payload: dict[str, Any], human: str) -> None:
    typer.echo(json.dumps(payload) if as_json else human)


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=1)


def _progress(message: str) -> None:
    """A line of progress: stderr only, so stdout stays the one JSON object under --json."""
    typer.echo(f"pressroom: {message}", err=True)


def _settings() -> Settings:
    """The settings from the environment; a bad value fails the command naming its variable
    (never showing the value: it may be a key)."""
    try:
        return Settings()
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False, include_input=False):
            message = str(error["msg"]).removeprefix("Value error, ")
            name = f"PRESSROOM_{str(error['loc'][0]).upper()}" if error["loc"] else ""
            problems.append(message if name in message else f"{name}: {message}")
        _fail("invalid settings: " + "; ".join(problems))
        raise  # unreachable: _fail exits


def _runtime(settings: Settings) -> Runtime:
    """The process's runtime with the cross-domain hooks the API has too."""
    # Imported here: it pulls in every domain, which `--help` has no use for.
    from pressroom.wiring import wire

    return wire(Runtime.build(settings))


async def _with_runtime(settings: Settings, work: Callable[[Runtime], Coroutine[Any, Any, T]]) -> T:
    """`work` on a runtime whose server key matches the database's (else the command fails)."""
    runtime = _runtime(settings)
    try:
        try:
            await runtime.verify_server_key()
        except ServerKeyMismatch as exc:
            _fail(str(exc))
        return await work(runtime)
    finally:
        await runtime.close()


def _run(work: Callable[[Runtime], Coroutine[Any, Any, T]]) -> T:
    """Run one command against the configured database, with migrations applied."""
    settings = _settings()
    try:
        migrate(settings.effective_database_url)
        return asyncio.run(_with_runtime(settings, work))
    except (ValueError, LookupError, CommandError) as exc:
        _fail(str(exc))
        raise  # unreachable: _fail exits


def _run_recorded(
    operation: str, work: Callable[[AsyncSession, Runtime], Awaitable[tuple[T, Change]]]
) -> T:
    """Run one command in one unit of work with its audit entry, `operation` by the command
    line."""

    async def recorded(runtime: Runtime) -> T:
        async with unit_of_work(runtime.sessions) as session:
            result, change = await work(session, runtime)
            await audit.append_command_line(
                session,
                change.organization_id,
                operation,
                change.resource_type,
                change.resource_id,
                change.details,
            )
            return result

    return _run(recorded)


def _uuid(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise CommandError(f"{what} must be a UUID, got {value!r}") from None


@db_app.command("upgrade")
def db_upgrade(as_json: JsonFlag = False) -> None:
    """Apply all migrations; says which were applied (each also on stderr as it is done)."""
    settings = _settings()
    applied: list[str] = []
    try:
        applied = migrate(
            settings.effective_database_url,
            on_applied=lambda revision: _progress(f"applied migration {revision}"),
        )
    except Exception as exc:  # a migration failure is reported, never a traceback dump
        _fail(f"migration failed: {exc}")
    if "0014_analytics_rollups" in applied:
        from pressroom.cli.history import apply_rollup_logs

        apply_rollup_logs()
    human = (
        f"applied {len(applied)} migration{'s' if len(applied) != 1 else ''} "
        f"({', '.join(applied)}); the database is up to date"
        if applied
        else "nothing to apply: the database was already up to date"
    )
    _emit(as_json, {"ok": True, "applied": applied}, human)


@orgs_app.command("create")
def orgs_create(
    name: Annotated[str, typer.Option("--name", help="Organization name.")],
    as_json: JsonFlag = False,
) -> None:
    """Create an organization."""

    async def work(session: AsyncSession, _: Runtime) -> tuple[uuid.UUID, Change]:
        organization = await tenant.create_organization(session, name)
        return organization.id, Change(
            organization.id, "organization", organization.id, {"name": name}
        )

    org_id = _run_recorded("cli.orgs.create", work)
    _emit(as_json, {"id": str(org_id)}, f"organization {org_id}")


@members_app.command("add")
def members_add(
    org: OrgOption,
    email: Annotated[str, typer.Option("--email", metavar="EMAIL")],
    role: Annotated[str, typer.Option("--role", metavar="ROLE", help="owner, admin or member.")],
    as_json: JsonFlag = False,
) -> None:
    """Add a person to an organization."""

    async def work(session: AsyncSession, _: Runtime) -> tuple[uuid.UUID, Change]:
        org_id = _uuid(org, "--org")
        member = await tenant.add_member(session, org_id, email, role)
        return member.id, Change(org_id, "member", member.id, {"email": member.email, "role": role})

    member_id = _run_recorded("cli.members.add", work)
    _emit(as_json, {"id": str(member_id)}, f"member {member_id}")


@keys_app.command("create")
def keys_create(
    org: OrgOption,
    member: Annotated[
        str, typer.Option("--member", metavar="MEMBER", help="Member id (the person).")
    ],
    scopes: Annotated[
        str,
        typer.Option(
            "--scopes", metavar="SCOPES", help=f"Comma-separated, or 'all': {','.join(SCOPES)}"
        ),
    ],
    name: Annotated[str | None, typer.Option("--name", metavar="NAME")] = None,
    expires_in: Annotated[
        int | None,
        typer.Option("--expires-in", metavar="SECONDS", min=1, help="Lifetime in seconds."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Issue an API key; the key is shown once and stored only as a digest."""

    async def work(session: AsyncSession, _: Runtime) -> tuple[auth.IssuedKey, Change]:
        org_id = _uuid(org, "--org")
        member_id = _uuid(member, "--member")
        scope_list = parse_scopes(scopes)
        issued = await auth.issue_key(
            session,
            organization_id=org_id,
            member_id=member_id,
            scopes=scope_list,
            name=name,
            expires_in=expires_in,
        )
        details = {
            "name": name,
            "scopes": scope_list,
            "expiresIn": expires_in,
            "memberId": str(member_id),
            "prefix": issued.prefix,
        }
        return issued, Change(org_id, "apiKey", issued.id, details)

    issued = _run_recorded("cli.keys.create", work)
    _emit(
        as_json,
        {"id": str(issued.id), "key": issued.key},
        f"key {issued.id}\n{issued.key}\n(shown once: store it now)",
    )


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id.")], as_json: JsonFlag = False
) -> None:
    """Revoke an API key at once."""

    async def work(session: AsyncSession, runtime: Runtime) -> tuple[None, Change]:
        row = await auth.revoke_key(session, _uuid(key_id, "KEY_ID"), runtime.notifier)
        return None, Change(row.organization_id, "apiKey", row.id, {"revoked": True})

    _run_recorded("cli.keys.revoke", work)
    _emit(as_json, {"id": key_id, "revoked": True}, f"key {key_id} revoked")


@audit_app.command("verify")
def audit_verify(org: OrgOption, as_json: JsonFlag = False) -> None:
    """Check the organization's audit chain; exit 1 if it was edited or truncated."""

    async def work(runtime: Runtime) -> audit.VerifyResult:
        async with unit_of_work(runtime.sessions) as session:
            return await audit.verify(session, _uuid(org, "--org"))

    result = _run(work)
    if not result.ok:
        for problem in result.problems:
            typer.echo(f"audit: {problem}", err=True)
        _emit(
            as_json,
            {"entries": result.entries, "ok": False, "problems": result.problems},
            f"{result.entries} entries; chain BROKEN",
        )
        raise typer.Exit(code=1)
    _emit(as_json, {"entries": result.entries, "ok": True}, f"{result.entries} entries; chain ok")


# The options of `channels connect`, named here so that its signature stays a readable list.
HandleOption = Annotated[
    str | None,
    typer.Option(
        "--handle",
        help="bluesky: the account to log in as (handle, DID or email). Sandbox and "
        "--simulated: the handle shown on the channel.",
    ),
]
SimulatedFlag = Annotated[
    bool,
    typer.Option(
        "--simulated",
        help="Validate by the provider's real rules, publish through the sandbox simulator.",
    ),
]
AppPassword = Annotated[
    str | None, typer.Option("--app-password", help="bluesky: an app password.")
]
AppPasswordEnv = Annotated[
    str | None,
    typer.Option("--app-password-env", help="bluesky: read the app password from this variable."),
]
ServiceOption = Annotated[
    str | None,
    typer.Option("--service", help="bluesky: the account's service (default https://bsky.social)."),
]
InstanceOption = Annotated[
    str | None,
    typer.Option("--instance", help="mastodon: the instance, e.g. https://mastodon.social."),
]
AccessToken = Annotated[
    str | None,
    typer.Option(
        "--access-token",
        help="mastodon, x, and networks connected through OAuth (facebook, instagram, threads, "
        "...): the account's (long-lived) access token.",
    ),
]
AccessTokenEnv = Annotated[
    str | None,
    typer.Option(
        "--access-token-env",
        help="mastodon, x, facebook, instagram, threads, ...: read the access token from this "
        "variable.",
    ),
]
RefreshToken = Annotated[
    str | None, typer.Option("--refresh-token", help="x: the OAuth 2.0 refresh token.")
]
RefreshTokenEnv = Annotated[
    str | None,
    typer.Option("--refresh-token-env", help="x: read the refresh token from this variable."),
]


@channels_app.command("connect")
def channels_connect(
    provider: Annotated[
        str, typer.Argument(help="Provider id: sandbox, bluesky, mastodon, x, ...")
    ],
    org: OrgOption,
    name: Annotated[str, typer.Option("--name", help="A name for the channel.")],
    handle: HandleOption = None,
    simulated: SimulatedFlag = False,
    app_password: AppPassword = None,
    app_password_env: AppPasswordEnv = None,
    service: ServiceOption = None,
    instance: InstanceOption = None,
    access_token: AccessToken = None,
    access_token_env: AccessTokenEnv = None,
    refresh_token: RefreshToken = None,
    refresh_token_env: RefreshTokenEnv = None,
    as_json: JsonFlag = False,
) -> None:
    """Connect a channel; prints its id. Real accounts are verified with the network first
    (nothing is stored if the provider refuses); a token that reaches several accounts (a
    Facebook user's Pages) connects one channel each and prints `ids` too. The sandbox, and any
    provider with --simulated, need no credentials."""
    from pressroom.channels.connecting import ConnectRequest
    from pressroom.channels.connecting import SecretOption
    from pressroom.channels.connecting import connect_from_command_line

    request = ConnectRequest(
        provider=provider,
        name=name,
        handle=handle,
        simulated=simulated,
        app_password=SecretOption(app_password, app_password_env),
        service=service,
        instance=instance,
        access_token=SecretOption(access_token, access_token_env),
        refresh_token=SecretOption(refresh_token, refresh_token_env),
    )
    ids = [
        str(channel_id)
        for channel_id in _run(
            lambda runtime: connect_from_command_line(runtime, _uuid(org, "--org"), request)
        )
    ]
    # One account: {"id"}. A token reaching several (a Facebook user's Pages) connects one
    # channel each: `id` is still the first, `ids` lists them all in the network's order.
    printed: dict[str, Any] = {"id": ids[0]} if len(ids) == 1 else {"id": ids[0], "ids": ids}
    _emit(as_json, printed, f"channel{'s' if len(ids) > 1 else ''} {', '.join(ids)}")


# These modules' commands register themselves on the groups above.
from pressroom.cli import agents  # noqa: E402
from pressroom.cli import console  # noqa: E402
from pressroom.cli import history  # noqa: E402
from pressroom.cli import listing  # noqa: E402
from pressroom.cli import serving  # noqa: E402
from pressroom.cli.serving import create_demo  # noqa: E402

__all__ = ["agents", "app", "console", "create_demo", "history", "listing", "main", "serving"]


def main() -> None:
    app()
