"""MCP fixtures: a live `pressroom serve` on the test database (tests/servers.py), and SDK
clients connected to it over streamable HTTP (`/mcp`) or over stdio (`pressroom mcp --url`)."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from collections.abc import Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests import servers
from tests.factories import SERVER_KEY

TRANSPORTS = ("http", "stdio")


@dataclass
class Live:
    base_url: str
    env: dict[str, str]
    media_dir: Path
    process: servers.PressroomProcess


def start_live(database_url: str, directory: Path, **settings: str) -> Live:
    media_dir = directory / "allowed-media"
    media_dir.mkdir(parents=True, exist_ok=True)
    port = servers.free_port()
    env = {
        **os.environ,
        "PRESSROOM_DATABASE_URL": database_url,
        "PRESSROOM_DATA_DIR": str(directory / "data"),
        "PRESSROOM_SECRET_KEY": SERVER_KEY,
        "PRESSROOM_MCP_MEDIA_DIRS": str(media_dir),
        **{f"PRESSROOM_{name.upper()}": value for name, value in settings.items()},
    }
    args = ["serve", "--port", str(port), "--no-workers"]
    process = servers.start(directory.name, args, env, directory)
    base_url = f"http://127.0.0.1:{port}"
    servers.wait_until("the API", servers.healthy(base_url), [process])
    return Live(base_url, env, media_dir, process)


@pytest.fixture(scope="module")
def live(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    server = start_live(database_url, tmp_path_factory.mktemp("mcp-serve"))
    yield server
    server.process.stop()


@asynccontextmanager
async def connect(live: Live, transport: str, key: str, **settings: str) -> AsyncIterator[Client]:
    """An MCP client of the SDK acting with `key`, over `transport`."""
    if transport == "http":
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            stream = streamable_http_client(f"{live.base_url}/mcp", http_client=http)
            async with Client(stream, cache=None) as client:
                yield client
        return
    env = {
        **live.env,
        "PRESSROOM_API_KEY": key,
        **{f"PRESSROOM_{name.upper()}": value for name, value in settings.items()},
    }
    command = StdioServerParameters(
        command=sys.executable, args=["-m", "pressroom", "mcp", "--url", live.base_url], env=env
    )
    async with Client(command, cache=None) as client:
        yield client
