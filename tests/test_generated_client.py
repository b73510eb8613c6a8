"""An integrator's first step: generate a client from `/openapi.json` with
openapi-python-client's default configuration, then call the service through it.

The server runs as its own process (`pressroom serve`) on a loopback port; the client is
generated into a temporary folder and imported from there."""

from __future__ import annotations

import asyncio
import datetime
import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pressroom.config import Settings
from pressroom.runtime import Runtime
from tests.factories import SERVER_KEY
from tests.factories import Tenant
from tests.factories import make_tenant

pytestmark = pytest.mark.slow

SECRET = SERVER_KEY
PACKAGE = "pressroom_api_client"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _tenant(database_url: str, data_dir: Path) -> Tenant:
    runtime = Runtime.build(
        Settings(database_url=database_url, data_dir=data_dir, secret_key=SECRET)
    )
    try:
        return await make_tenant(runtime, name="Generated Client Co")
    finally:
        await runtime.close()


@pytest.fixture(scope="module")
def live_server(
    database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Tenant]]:
    data_dir = tmp_path_factory.mktemp("client-server")
    tenant = asyncio.run(_tenant(database_url, data_dir))
    port = _free_port()
    env = {
        **os.environ,
        "PRESSROOM_DATABASE_URL": database_url,
        "PRESSROOM_DATA_DIR": str(data_dir),
        "PRESSROOM_SECRET_KEY": SECRET,
        "PRESSROOM_LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "pressroom", "serve", "--no-workers", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{base}/healthz", timeout=1).raise_for_status()
            break
        except httpx.HTTPError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise
            time.sleep(0.1)
    try:
        yield base, tenant
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def client_package(
    live_server: tuple[str, Tenant], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """The generated package, from the document the running server serves."""
    base, _ = live_server
    folder = tmp_path_factory.mktemp("generated")
    document = folder / "openapi.json"
    document.write_text(json.dumps(httpx.get(f"{base}/openapi.json", timeout=10).json()))
    output = folder / "client"
    # `./dev test` installs the generator in a tool environment of its own (it needs an older
    # typer than Pressroom's) and names it here; a generator on PATH also does.
    generator = os.environ.get("PRESSROOM_OPENAPI_CLIENT_GENERATOR") or shutil.which(
        "openapi-python-client"
    )
    if not generator or not Path(generator).exists():
        pytest.skip("openapi-python-client is not installed: run the tests with ./dev test")
    # The generator formats its output with ruff, found on PATH.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        [generator, "generate", "--path", str(document), "--output-path", str(output)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    sys.path.insert(0, str(output))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(output))
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]


@pytest.fixture
def api(client_package: Any, live_server: tuple[str, Tenant]) -> Iterator[Any]:
    base, tenant = live_server
    with client_package.AuthenticatedClient(base_url=base, token=tenant.key) as client:
        yield client


def test_a_generated_client_reads_the_tenant(api: Any, live_server: tuple[str, Tenant]) -> None:
    from pressroom_api_client.api.tenant import get_tenant  # type: ignore[import-not-found]

    tenant = get_tenant.sync(client=api)
    assert tenant.id == live_server[1].organization_id
    assert tenant.name == "Generated Client Co"
    assert tenant.member.id == live_server[1].member_id
    # Times are declared `date-time`, so the client parses them.
    assert isinstance(tenant.created_at, datetime.datetime)


def test_a_generated_client_lists_channels(api: Any) -> None:
    from pressroom_api_client.api.channels import list_channels  # type: ignore[import-not-found]

    page = list_channels.sync(client=api, page_size=10)
    assert page.items == []
    assert page.next_cursor is None


def test_a_generated_client_passes_a_timezone_name_to_get_analytics(api: Any) -> None:
    from pressroom_api_client.api.analytics import get_analytics  # type: ignore[import-not-found]

    start = datetime.datetime(2026, 3, 1, tzinfo=datetime.UTC)
    report = get_analytics.sync(
        client=api,
        start=start,
        end=start + datetime.timedelta(days=6),
        timezone="Etc/GMT+0",
    )
    assert report.range_.timezone == "Etc/GMT+0"
    assert report.range_.group_by == "day"


def test_a_generated_client_reports_an_unknown_timezone_as_a_field_error(api: Any) -> None:
    from pressroom_api_client.api.analytics import get_analytics  # type: ignore[import-not-found]

    start = datetime.datetime(2026, 3, 1, tzinfo=datetime.UTC)
    problem = get_analytics.sync(client=api, start=start, end=start, timezone="Mars/Olympus")
    assert problem.status == 400
    assert [error.field for error in problem.errors] == ["timezone"]
