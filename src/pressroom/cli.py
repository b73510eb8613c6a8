"""The `pressroom` command: thin, it calls services. Every command takes --json."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Annotated, Any, TypeVar

import typer

from pressroom.audit import service as audit
from pressroom.audit.service import CLI_ACTOR
from pressroom.auth import service as auth
from pressroom.auth.models import Member, Organization
from pressroom.auth.scopes import SCOPES, parse_scopes
from pressroom.config import Settings
from pressroom.db import migrate, unit_of_work
from pressroom.kit.logs import configure_logging
from pressroom.runtime import Runtime
from pressroom.tenant import service as tenant

T = TypeVar("T")

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Pressroom publishing API.",
)
db_app = typer.Typer(no_args_is_help=True, help="Database migrations.")
orgs_app = typer.Typer(no_args_is_help=True, help="Organizations.")
members_app = typer.Typer(no_args_is_help=True, help="Members of an organization.")
keys_app = typer.Typer(no_args_is_help=True, help="API keys.")
audit_app = typer.Typer(no_args_is_help=True, help="The audit ledger.")
app.add_typer(db_app, name="db")
app.add_typer(orgs_app, name="orgs")
app.add_typer(members_app, name="members")
app.add_typer(keys_app, name="keys")
app.add_typer(audit_app, name="audit")
channels_app = typer.Typer(no_args_is_help=True, help="Connected social accounts.")
app.add_typer(channels_app, name="channels")
analytics_app = typer.Typer(no_args_is_help=True, help="Analytics history.")
app.add_typer(analytics_app, name="analytics")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


class CommandError(Exception):
    """A failure to report on stderr with a non-zero exit."""


def _emit(as_json: bool, payload: dict[str, Any], human: str) -> None:
    typer.echo(json.dumps(payload) if as_json else human)


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=1)


def _run(work: Callable[[Runtime], Coroutine[Any, Any, T]]) -> T:
    """Run one command against the configured database, with migrations applied."""
    settings = Settings()

    async def main() -> T:
        runtime = Runtime.build(settings)
        try:
            return await work(runtime)
        finally:
            await runtime.close()

    try:
        migrate(settings.effective_database_url)
        return asyncio.run(main())
    except (ValueError, LookupError, CommandError) as exc:
        _fail(str(exc))
        raise  # unreachable: _fail exits


def _uuid(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise CommandError(f"{what} must be a UUID, got {value!r}") from None


async def _record(
    session: Any,
    organization_id: uuid.UUID,
    operation: str,
    kind: str,
    rid: object,
    changes: dict[str, Any],
) -> None:
    await audit.append(
        session,
        organization_id=organization_id,
        actor=CLI_ACTOR,
        operation_id=operation,
        outcome_status=0,
        resource_type=kind,
        resource_id=str(rid),
        changes=changes,
    )


@db_app.command("upgrade")
def db_upgrade(as_json: JsonFlag = False) -> None:
    """Apply all migrations."""
    settings = Settings()
    try:
        migrate(settings.effective_database_url)
    except Exception as exc:  # a migration failure is reported, never a traceback dump
        _fail(f"migration failed: {exc}")
    _emit(as_json, {"ok": True}, "database is up to date")


@orgs_app.command("create")
def orgs_create(
    name: Annotated[str, typer.Option("--name", help="Organization name.")],
    as_json: JsonFlag = False,
) -> None:
    """Create an organization."""

    async def work(runtime: Runtime) -> uuid.UUID:
        async with unit_of_work(runtime.sessions) as session:
            organization = await tenant.create_organization(session, name)
            await _record(
                session,
                organization.id,
                "cli.orgs.create",
                "organization",
                organization.id,
                {"name": name},
            )
            return organization.id

    org_id = _run(work)
    _emit(as_json, {"id": str(org_id)}, f"organization {org_id}")


@members_app.command("add")
def members_add(
    org: Annotated[str, typer.Option("--org", help="Organization id.")],
    email: Annotated[str, typer.Option("--email")],
    role: Annotated[str, typer.Option("--role", help="owner, admin or member.")],
    as_json: JsonFlag = False,
) -> None:
    """Add a person to an organization."""

    async def work(runtime: Runtime) -> uuid.UUID:
        org_id = _uuid(org, "--org")
        async with unit_of_work(runtime.sessions) as session:
            member = await tenant.add_member(session, org_id, email, role)
            await _record(
                session,
                org_id,
                "cli.members.add",
                "member",
                member.id,
                {"email": member.email, "role": role},
            )
            return member.id

    member_id = _run(work)
    _emit(as_json, {"id": str(member_id)}, f"member {member_id}")


@keys_app.command("create")
def keys_create(
    org: Annotated[str, typer.Option("--org", help="Organization id.")],
    member: Annotated[str, typer.Option("--member", help="Member id (the person).")],
    scopes: Annotated[
        str, typer.Option("--scopes", help=f"Comma-separated, or 'all': {','.join(SCOPES)}")
    ],
    name: Annotated[str | None, typer.Option("--name")] = None,
    expires_in: Annotated[
        int | None, typer.Option("--expires-in", min=1, help="Lifetime in seconds.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Issue an API key; the key is shown once and stored only as a digest."""

    async def work(runtime: Runtime) -> auth.IssuedKey:
        org_id = _uuid(org, "--org")
        member_id = _uuid(member, "--member")
        scope_list = parse_scopes(scopes)
        async with unit_of_work(runtime.sessions) as session:
            issued = await auth.issue_key(
                session,
                organization_id=org_id,
                member_id=member_id,
                scopes=scope_list,
                name=name,
                expires_in=expires_in,
            )
            await _record(
                session,
                org_id,
                "cli.keys.create",
                "apiKey",
                issued.id,
                {
                    "name": name,
                    "scopes": scope_list,
                    "expiresIn": expires_in,
                    "memberId": str(member_id),
                    "prefix": issued.prefix,
                },
            )
            return issued

    issued = _run(work)
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

    async def work(runtime: Runtime) -> None:
        async with unit_of_work(runtime.sessions) as session:
            row = await auth.revoke_key(session, _uuid(key_id, "KEY_ID"), runtime.notifier)
            await _record(
                session, row.organization_id, "cli.keys.revoke", "apiKey", row.id, {"revoked": True}
            )

    _run(work)
    _emit(as_json, {"id": key_id, "revoked": True}, f"key {key_id} revoked")


@audit_app.command("verify")
def audit_verify(
    org: Annotated[str, typer.Option("--org", help="Organization id.")], as_json: JsonFlag = False
) -> None:
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


def _secret_option(value: str | None, variable: str | None, option: str) -> str | None:
    """A secret given directly (`--app-password P`) or, to keep it out of shell history and
    process listings, by the name of an environment variable that holds it
    (`--app-password-env VAR`)."""
    if value is not None and variable is not None:
        raise CommandError(f"give {option} or {option}-env, not both")
    if variable is None:
        return value
    found = os.environ.get(variable, "").strip()
    if not found:
        raise CommandError(f"{option}-env names {variable}, which is not set or is empty")
    return found


@channels_app.command("connect")
def channels_connect(
    provider: Annotated[
        str, typer.Argument(help="Provider id: sandbox, bluesky, mastodon, x, ...")
    ],
    org: Annotated[str, typer.Option("--org", help="Organization id.")],
    name: Annotated[str, typer.Option("--name", help="A name for the channel.")],
    handle: Annotated[
        str | None,
        typer.Option(
            "--handle",
            help="bluesky: the account to log in as (handle, DID or email). Sandbox and "
            "--simulated: the handle shown on the channel.",
        ),
    ] = None,
    simulated: Annotated[
        bool,
        typer.Option(
            "--simulated",
            help="Validate by the provider's real rules, publish through the sandbox simulator.",
        ),
    ] = False,
    app_password: Annotated[
        str | None, typer.Option("--app-password", help="bluesky: an app password.")
    ] = None,
    app_password_env: Annotated[
        str | None,
        typer.Option(
            "--app-password-env", help="bluesky: read the app password from this variable."
        ),
    ] = None,
    service: Annotated[
        str | None,
        typer.Option(
            "--service", help="bluesky: the account's service (default https://bsky.social)."
        ),
    ] = None,
    instance: Annotated[
        str | None,
        typer.Option("--instance", help="mastodon: the instance, e.g. https://mastodon.social."),
    ] = None,
    access_token: Annotated[
        str | None,
        typer.Option("--access-token", help="mastodon, x: the account's access token."),
    ] = None,
    access_token_env: Annotated[
        str | None,
        typer.Option(
            "--access-token-env", help="mastodon, x: read the access token from this variable."
        ),
    ] = None,
    refresh_token: Annotated[
        str | None, typer.Option("--refresh-token", help="x: the OAuth 2.0 refresh token.")
    ] = None,
    refresh_token_env: Annotated[
        str | None,
        typer.Option("--refresh-token-env", help="x: read the refresh token from this variable."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Connect a channel; prints its id. Real bluesky, mastodon and x accounts are verified with
    the network first (nothing is stored if the provider refuses); the sandbox, and any provider
    with --simulated, need no credentials."""
    from pressroom.channels import service as channels
    from pressroom.channels import verification
    from pressroom.providers.declarations import PROVIDER_IDS
    from pressroom.providers.registry import configured_providers

    given = {
        "--app-password": app_password is not None or app_password_env is not None,
        "--service": service is not None,
        "--instance": instance is not None,
        "--access-token": access_token is not None or access_token_env is not None,
        "--refresh-token": refresh_token is not None or refresh_token_env is not None,
    }
    real = provider != "sandbox" and not simulated

    def options() -> verification.ProviderOptions:
        accepted = verification.PROVIDER_OPTIONS.get(provider, ())
        stray = [option for option, present in given.items() if present and option not in accepted]
        if stray:
            takes = ", ".join(accepted) or "no credential options"
            raise CommandError(f"{stray[0]} is not an option of {provider} (it takes {takes})")
        return verification.ProviderOptions(
            handle=handle,
            app_password=_secret_option(app_password, app_password_env, "--app-password"),
            service=service,
            instance=instance,
            access_token=_secret_option(access_token, access_token_env, "--access-token"),
            refresh_token=_secret_option(refresh_token, refresh_token_env, "--refresh-token"),
        )

    async def work(runtime: Runtime) -> uuid.UUID:
        org_id = _uuid(org, "--org")
        configured = configured_providers(runtime.settings)
        account: verification.VerifiedAccount | None = None
        if not real:
            if any(given.values()):
                raise CommandError(
                    "the sandbox and --simulated channels take no credentials; drop the "
                    "provider options"
                )
        elif provider not in PROVIDER_IDS:
            raise CommandError(f"unknown provider {provider!r}; one of {', '.join(PROVIDER_IDS)}")
        elif provider not in configured:
            raise CommandError(channels.not_configured_reason(provider))
        else:
            provider_options = options()
        async with unit_of_work(runtime.sessions) as session:
            if await session.get(Organization, org_id) is None:
                raise CommandError("no such organization")
        if real:
            # The network is asked outside any transaction; nothing is stored if it says no.
            try:
                account = await verification.verify(
                    provider,
                    provider_options,
                    settings=runtime.settings,
                    http=runtime.provider_http,
                )
            except verification.VerificationFailed as exc:
                raise CommandError(str(exc)) from None
        async with unit_of_work(runtime.sessions) as session:
            channel = await channels.connect(
                session,
                runtime,
                organization_id=org_id,
                provider=provider,
                name=name,
                handle=account.handle if account is not None else handle,
                simulated=simulated,
                credentials=account.credentials if account is not None else None,
                configured=configured,
            )
            changes: dict[str, Any] = {
                "provider": provider,
                "name": name,
                "handle": channel.handle,
                "simulated": simulated,
            }
            if account is not None:
                # What was verified, never the secrets themselves.
                changes["verified"] = True
                changes["options"] = [option for option, present in given.items() if present]
                if instance is not None:
                    changes["instance"] = account.credentials.get("baseUrl")
                if service is not None:
                    changes["service"] = service
            await _record(session, org_id, "cli.channels.connect", "channel", channel.id, changes)
            return channel.id

    channel_id = _run(work)
    _emit(as_json, {"id": str(channel_id)}, f"channel {channel_id}")


@analytics_app.command("import")
def analytics_import(
    org: Annotated[str, typer.Option("--org", help="Organization id.")],
    file: Annotated[
        str | None,
        typer.Argument(help="JSON lines, one published post each ('-' reads stdin)."),
    ] = None,
    demo: Annotated[
        bool, typer.Option("--demo", help="Instead of a file: about 90 days of demo history.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Import published history with its metrics; all lines or none."""
    from pressroom.analytics import demo as analytics_demo
    from pressroom.analytics import importer

    if (file is None) == (not demo):
        _fail("give either FILE or --demo")

    async def work(runtime: Runtime) -> int:
        org_id = _uuid(org, "--org")
        async with unit_of_work(runtime.sessions) as session:
            if await session.get(Organization, org_id) is None:
                raise CommandError("no such organization")
            if demo:
                imported = await analytics_demo.create_demo_history(session, runtime, org_id)
            else:
                assert file is not None
                try:
                    if file == "-":
                        imported = await importer.import_history(session, org_id, sys.stdin)
                    else:
                        with open(file, encoding="utf-8") as lines:  # noqa: ASYNC230
                            imported = await importer.import_history(session, org_id, lines)
                except (OSError, UnicodeDecodeError) as exc:
                    raise CommandError(f"cannot read {file}: {exc}") from None
            await _record(
                session,
                org_id,
                "cli.analytics.import",
                "organization",
                org_id,
                {"imported": imported, "source": "demo" if demo else "file"},
            )
            return imported

    imported = _run(work)
    _emit(as_json, {"imported": imported}, f"imported {imported} published posts")


DEMO_EMAIL = "owner@demo.pressroom.example"


async def create_demo(runtime: Runtime) -> dict[str, str]:
    """The demo organization (made once), its owner, and a fresh all-scope key."""
    from sqlalchemy import select

    async with unit_of_work(runtime.sessions) as session:
        owner = await session.scalar(select(Member).where(Member.email == DEMO_EMAIL))
        if owner is None:
            organization = await tenant.create_organization(session, "Demo organization")
            owner = await tenant.add_member(session, organization.id, DEMO_EMAIL, "owner")
            await _record(
                session,
                organization.id,
                "cli.demo.create",
                "organization",
                organization.id,
                {"name": organization.name},
            )
        for hook in DEMO_HOOKS:
            await hook(session, runtime, owner.organization_id)
        issued = await auth.issue_key(
            session,
            organization_id=owner.organization_id,
            member_id=owner.id,
            scopes=list(SCOPES),
            name="demo owner key",
        )
        await _record(
            session,
            owner.organization_id,
            "cli.keys.create",
            "apiKey",
            issued.id,
            {"name": "demo owner key", "scopes": list(SCOPES)},
        )
    return {"organizationId": str(owner.organization_id), "key": issued.key}


# Domains add demo content (sandbox channels, analytics history) here.
DEMO_HOOKS: list[Callable[[Any, Runtime, uuid.UUID], Awaitable[None]]] = []


async def _demo_channels(session: Any, runtime: Runtime, organization_id: uuid.UUID) -> None:
    """A sandbox channel and a simulated Bluesky channel, so the demo can publish at once."""
    from pressroom.channels import service as channels

    made = await channels.connect_demo_channels(session, runtime, organization_id=organization_id)
    for channel in made:
        await _record(
            session,
            organization_id,
            "cli.channels.connect",
            "channel",
            channel.id,
            {"provider": channel.provider, "name": channel.name, "simulated": channel.simulated},
        )


DEMO_HOOKS.insert(0, _demo_channels)


async def _demo_analytics(session: Any, runtime: Runtime, organization_id: uuid.UUID) -> None:
    """About 90 days of published history on the demo channels, for the analytics charts."""
    from pressroom.analytics.demo import create_demo_history

    imported = await create_demo_history(session, runtime, organization_id)
    if imported:
        await _record(
            session,
            organization_id,
            "cli.analytics.import",
            "organization",
            organization_id,
            {"imported": imported, "source": "demo"},
        )


# After the channels: the history goes on the demo's sandbox channels.
DEMO_HOOKS.append(_demo_analytics)


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8000,
    no_workers: Annotated[bool, typer.Option("--no-workers", help="API only.")] = False,
    demo: Annotated[bool, typer.Option("--demo", help="Create a demo organization.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Run the API (and, unless --no-workers, the background workers in this process)."""
    import uvicorn

    from pressroom.app import create_app

    settings = Settings()
    configure_logging(settings.log_level)
    migrate(settings.effective_database_url)
    runtime = Runtime.build(settings)
    if demo:
        created = asyncio.run(_with_fresh_runtime(settings, create_demo))
        base = f"http://{host}:{port}"
        _emit(
            as_json,
            {**created, "baseUrl": base},
            "Pressroom demo is ready.\n"
            f"  Organization: {created['organizationId']}\n"
            f"  Owner API key (all scopes, shown once): {created['key']}\n"
            f"  Try: curl -H 'Authorization: Bearer {created['key']}' {base}/api/v1/tenant\n"
            f"  Channels (the Sandbox one publishes at once): curl -H 'Authorization: Bearer "
            f"{created['key']}' {base}/api/v1/channels\n"
            f"  Docs: {base}/docs",
        )
        sys.stdout.flush()
    application = create_app(settings, runtime=runtime, run_workers=not no_workers)
    config = uvicorn.Config(
        application,
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        proxy_headers=False,
        timeout_graceful_shutdown=30,
    )
    uvicorn.Server(config).run()


async def _with_fresh_runtime(
    settings: Settings, work: Callable[[Runtime], Coroutine[Any, Any, T]]
) -> T:
    runtime = Runtime.build(settings)
    try:
        return await work(runtime)
    finally:
        await runtime.close()


@app.command()
def worker(as_json: JsonFlag = False) -> None:
    """Run the background workers only (any number of these may run at once)."""
    from pressroom.workers.loops import default_loops
    from pressroom.workers.runner import WorkerRunner

    settings = Settings()
    configure_logging(settings.log_level)

    async def main() -> None:
        runtime = Runtime.build(settings)
        try:
            await WorkerRunner(runtime, default_loops()).run_until_signalled()
        finally:
            await runtime.close()

    asyncio.run(main())
    _emit(as_json, {"stopped": True}, "workers stopped")


def main() -> None:
    app()
