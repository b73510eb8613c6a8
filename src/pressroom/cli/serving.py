"""The long-running processes: `serve` (with its demo) and `worker`."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import Callable
from collections.abc import Iterator
from typing import Annotated
from typing import Any

import typer

from pressroom.cli import JsonFlag
from pressroom.cli import _emit
from pressroom.cli import _fail
from pressroom.cli import _progress
from pressroom.cli import _runtime
from pressroom.cli import _settings
from pressroom.cli import _with_runtime
from pressroom.cli import app
from pressroom.cli.supervise import READY_LINE
from pressroom.db import migrate
from pressroom.db import unit_of_work
from pressroom.kit.logs import configure_logging
from pressroom.runtime import Runtime


async def create_demo(runtime: Runtime) -> dict[str, Any]:
    """The demo organization (made once), its owner, and a fresh all-scope key (the demo keys
    of earlier runs are revoked)."""
    from pressroom.analytics.demo_organization import DEMO_EMAIL
    from pressroom.analytics.demo_organization import create_demo as set_up_demo
    from pressroom.cli.console import issue_demo_link
    from pressroom.tenant import service as tenant

    async with unit_of_work(runtime.sessions) as session:
        demo = await set_up_demo(session, runtime)
        owner = await tenant.member_with_email(session, DEMO_EMAIL)
        assert owner is not None
        link = await issue_demo_link(session, demo.organization_id, owner.id)
    return {
        "organizationId": str(demo.organization_id),
        "key": demo.key,
        "revokedKeys": demo.revoked,
        "signInToken": link.token,
    }


async def _nothing(_: Runtime) -> dict[str, Any]:
    return {}


def _listen(host: str, port: int) -> socket.socket:
    """The server's bound socket, taken before anything is printed or created: a busy port
    fails the command having done nothing."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    return listener


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", metavar="HOST")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", metavar="PORT")] = 8000,
    no_workers: Annotated[bool, typer.Option("--no-workers", help="API only.")] = False,
    demo: Annotated[
        bool,
        typer.Option(
            "--demo", help="Create a demo organization; a new owner key revokes the previous one."
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Run the API (and, unless --no-workers, the background workers in a child process)."""
    import uvicorn

    from pressroom.app import create_app

    settings = _settings()
    configure_logging(settings.log_level)
    listener = _listen(host, port)
    applied = migrate(settings.effective_database_url)
    if applied:
        _progress(f"applied {len(applied)} database migrations")
    # Its own runtime (the key check, the demo): the server's connections belong to its loop.
    created = asyncio.run(_with_runtime(settings, create_demo if demo else _nothing))
    if demo:
        _emit_demo(as_json, created, f"http://{host}:{port}")
    runtime = _runtime(settings)
    application = create_app(settings, runtime=runtime)
    if not no_workers:
        _host_workers(application, runtime)
    config = uvicorn.Config(
        application,
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        proxy_headers=False,
        timeout_graceful_shutdown=30,
    )
    uvicorn.Server(config).run(sockets=[listener])


def _host_workers(application: Any, runtime: Runtime) -> None:
    """The workers in a supervised child process (cli/supervise.py), started and stopped with
    the API; without cross-process notifications (SQLite) the API forwards its wake-ups."""
    from functools import partial

    from pressroom.cli.supervise import WorkerProcess
    from pressroom.cli.supervise import with_worker_process
    from pressroom.workers.loops import default_loops

    workers = WorkerProcess()
    if runtime.engine.dialect.name != "postgresql":
        for channel in sorted({loop.channel for loop in default_loops() if loop.channel}):
            runtime.notifier.subscribe(channel, partial(workers.wake, channel))
    router = application.router
    router.lifespan_context = with_worker_process(router.lifespan_context, workers)


def _emit_demo(as_json: bool, created: dict[str, Any], base: str) -> None:
    from pressroom.cli.console import link_url

    created = {**created, "signInLink": link_url(base, created.pop("signInToken"))}
    key = created["key"]
    revoked = created["revokedKeys"]
    earlier = (
        f"  The earlier demo key{'s' if revoked > 1 else ''} (revoked) no longer work"
        f"{'' if revoked > 1 else 's'}.\n"
        if revoked
        else ""
    )
    _emit(
        as_json,
        {**created, "baseUrl": base},
        "Pressroom demo is ready.\n"
        f"  Organization: {created['organizationId']}\n"
        f"  Owner API key (all scopes, shown once): {key}\n"
        + earlier
        + f"  Try: curl -H 'Authorization: Bearer {key}' {base}/api/v1/tenant\n"
        f"  Channels (the Sandbox one publishes at once): curl -H 'Authorization: Bearer "
        f"{key}' {base}/api/v1/channels\n"
        f"  Docs: {base}/docs\n"
        f"  Console: {created['signInLink']}\n"
        "    (a one-time sign-in link for the demo owner, valid 15 minutes)",
    )
    sys.stdout.flush()


@app.command()
def worker(
    as_json: JsonFlag = False,
    supervised: Annotated[
        bool,
        typer.Option(
            "--supervised",
            hidden=True,
            help="As serve's child: say when ready on stdout, wake loops on the channel names "
            "read from stdin, stop at its end.",
        ),
    ] = False,
) -> None:
    """Run the background workers only (any number of these may run at once); with
    PRESSROOM_METRICS=true, /metrics on PRESSROOM_METRICS_HOST:PRESSROOM_METRICS_PORT."""

    settings = _settings()
    configure_logging(settings.log_level)
    listener = _listen(settings.metrics_host, settings.metrics_port) if settings.metrics else None

    async def run(runtime: Runtime) -> None:
        metrics = _serve_worker_metrics(runtime, listener) if listener else None
        try:
            await _run_workers(runtime, supervised)
        finally:
            if metrics is not None:
                await metrics.stop()

    with asyncio.Runner(loop_factory=_event_loop_factory()) as runner:
        runner.run(_with_runtime(settings, run))
    _emit(as_json, {"stopped": True}, "workers stopped")


def _event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop where it is installed, as uvicorn picks it for `serve`'s API, else asyncio's own
    loop. The delivery worker's time goes largely to sockets (TLS to receivers, the database),
    which uvloop handles in C."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - installed with uvicorn[standard]
        return None
    return uvloop.new_event_loop


class _MetricsServer:
    """A worker node's /metrics, served on the worker's event loop until the worker stops
    (the worker's own handlers take SIGTERM and SIGINT, not the server's)."""

    def __init__(self, runtime: Runtime, listener: socket.socket) -> None:
        import uvicorn

        from pressroom.scrape import worker_metrics_app

        class QuietServer(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

        config = uvicorn.Config(
            worker_metrics_app(runtime), log_config=None, access_log=False, lifespan="off"
        )
        self.server = QuietServer(config)
        self.task = asyncio.create_task(self.server.serve(sockets=[listener]))

    async def stop(self) -> None:
        self.server.should_exit = True
        await asyncio.gather(self.task, return_exceptions=True)


def _serve_worker_metrics(runtime: Runtime, listener: socket.socket) -> _MetricsServer:
    _progress(f"metrics at http://{_address(listener)}/metrics")
    return _MetricsServer(runtime, listener)


def _address(listener: socket.socket) -> str:
    host, port = listener.getsockname()[:2]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def _run_workers(runtime: Runtime, supervised: bool) -> None:
    """Every worker loop until a signal; as `serve`'s child, also until `serve` is gone."""
    from pressroom.workers.loops import default_loops
    from pressroom.workers.runner import WorkerRunner

    runner = WorkerRunner(runtime, default_loops())
    if not supervised:
        await runner.run_until_signalled()
        return
    reading = asyncio.create_task(_wakes_from_stdin(runtime))
    reading.add_done_callback(lambda _: runner.request_stop())
    try:
        await runner.run_until_signalled(on_started=_say_ready)
    finally:
        reading.cancel()


def _say_ready() -> None:
    """Tell `serve` (reading stdout) that the loops run."""
    sys.stdout.write(f"{READY_LINE}\n")
    sys.stdout.flush()


async def _wakes_from_stdin(runtime: Runtime) -> None:
    """Wake this process's loops on each channel name `serve` writes; return at end of input
    (`serve` is gone)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        runtime.notifier.wake(line.decode(errors="replace").strip())
