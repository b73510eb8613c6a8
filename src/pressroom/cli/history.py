"""`analytics import`: published history from a file of JSON lines, or the demo's."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated
from typing import Any
from typing import TextIO

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.cli import Change
from pressroom.cli import CommandError
from pressroom.cli import JsonFlag
from pressroom.cli import OrgOption
from pressroom.cli import _emit
from pressroom.cli import _fail
from pressroom.cli import _progress
from pressroom.cli import _run
from pressroom.cli import _run_recorded
from pressroom.cli import _uuid
from pressroom.cli import analytics_app
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from pressroom.tenant import service as tenant


@analytics_app.command("import")
def analytics_import(
    org: OrgOption,
    file: Annotated[
        str | None,
        typer.Argument(
            metavar="FILE", help="JSON lines, one published post each ('-' reads stdin)."
        ),
    ] = None,
    demo: Annotated[
        bool, typer.Option("--demo", help="Instead of a file: about 90 days of demo history.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Import published history with its metrics; all lines or none. Progress goes to stderr.
    --demo adds nothing to an organization that already has published history (and says so)."""
    from pressroom.analytics.demo import create_demo_history
    from pressroom.analytics.demo import has_history
    from pressroom.analytics.importer import import_history

    if (file is None) == (not demo):
        _fail("give either FILE or --demo")

    async def work(session: AsyncSession, runtime: Runtime) -> tuple[tuple[int, str], Change]:
        org_id = _uuid(org, "--org")
        await tenant.require_organization(session, org_id)
        reason = ""
        if file is None:
            if await has_history(session, org_id):
                # Not a failure: demo history is made once, and real history is never mixed
                # with made-up posts.
                reason = "the organization already has published history"
            imported = await create_demo_history(session, runtime, org_id)
        else:
            with _lines_of(file) as lines:
                imported = await import_history(session, org_id, _counted(lines))
            reason = "" if imported else "the file holds no posts"
        details = {"imported": imported, "source": "demo" if demo else "file"}
        return (imported, reason), Change(org_id, "organization", org_id, details)

    imported, reason = _run_recorded("cli.analytics.import", work)
    payload: dict[str, Any] = {"imported": imported}
    if reason:
        payload["reason"] = reason
    _emit(
        as_json,
        payload,
        f"imported {imported} published posts" + (f": {reason}" if reason else ""),
    )


# Lines between two progress reports of `analytics import FILE`.
PROGRESS_EVERY = 10_000


def _counted(lines: Iterable[str]) -> Iterator[str]:
    """The lines, reporting on stderr every PROGRESS_EVERY lines read (each is parsed and
    checked as it is read; the rows are written once all of them passed)."""
    count = 0
    for count, line in enumerate(lines, start=1):
        if count % PROGRESS_EVERY == 0:
            _progress(f"read {count} lines")
        yield line
    if count >= PROGRESS_EVERY:
        _progress(f"read {count} lines; writing them")


@contextmanager
def _lines_of(file: str) -> Iterator[TextIO]:
    """FILE opened for reading ('-': stdin); a file that cannot be read fails the command."""
    try:
        if file == "-":
            yield sys.stdin
        else:
            with open(file, encoding="utf-8") as lines:
                yield lines
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"cannot read {file}: {exc}") from None


@analytics_app.command("rebuild")
def analytics_rebuild(org: OrgOption, as_json: JsonFlag = False) -> None:
    """Recompute the organization's report rollups from its published posts, in one
    transaction (reports keep answering from the old rows until it commits). A progress bar
    goes to stderr."""
    from pressroom.analytics.rollups import count_posts
    from pressroom.analytics.rollups import rebuild

    async def work(runtime: Runtime) -> int:
        org_id = _uuid(org, "--org")
        async with unit_of_work(runtime.sessions) as session:
            await tenant.require_organization(session, org_id)
            total = await count_posts(session, org_id)
            with typer.progressbar(
                length=total, label="rebuilding", file=sys.stderr, show_pos=True
            ) as bar:
                return await rebuild(session, org_id, progress=bar.update)

    posts = _run(work)
    _emit(as_json, {"posts": posts}, f"rebuilt the analytics rollups of {posts} posts")


def apply_rollup_logs() -> None:
    """After `db upgrade`: apply every organization's log of report changes (the migration
    that adds the rollups fills it with every published post)."""
    from pressroom.analytics.rollups import apply_waiting_logs
    from pressroom.analytics.rollups import organizations_with_log

    async def work(runtime: Runtime) -> None:
        async with unit_of_work(runtime.sessions) as session:
            if await organizations_with_log(session):
                _progress("filling the analytics rollups from the stored history")
        while await apply_waiting_logs(runtime):
            pass

    _run(work)
