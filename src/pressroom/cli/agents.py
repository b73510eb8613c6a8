"""`pressroom mcp`: the MCP server over stdio."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

import httpx
import typer

from pressroom.cli import _fail
from pressroom.cli import _settings
from pressroom.cli import app
from pressroom.kit.logs import configure_logging


@app.command()
def mcp(
    url: Annotated[
        str,
        typer.Option("--url", metavar="URL", help="The Pressroom API, e.g. http://127.0.0.1:8000"),
    ],
) -> None:
    """Serve MCP over stdio as a client of the API at URL, with the key in PRESSROOM_API_KEY."""
    from pressroom.agents.server import options_from
    from pressroom.agents.stdio import serve_stdio

    key = os.environ.get("PRESSROOM_API_KEY", "").strip()
    if not key:
        _fail("set PRESSROOM_API_KEY to the API key the MCP server acts with")
    if not url.startswith(("http://", "https://")):
        _fail("--url must be an http(s) URL")
    settings = _settings()
    configure_logging(settings.log_level)
    try:
        asyncio.run(serve_stdio(url, key, options_from(settings)))
    except httpx.HTTPError as exc:
        _fail(f"cannot read {url}/openapi.json: {type(exc).__name__}")
