"""`pressroom mcp --url URL`: the MCP server over stdio, a client of the API at URL with the
key in PRESSROOM_API_KEY (stdout carries the protocol; logs go to stderr)."""

from __future__ import annotations

from typing import Any

import httpx
from mcp.server.stdio import stdio_server

from pressroom.agents.api import Api
from pressroom.agents.server import AgentOptions
from pressroom.agents.server import PressroomAgent
from pressroom.agents.server import build_server

# Uploads and analytics reports can take a while; the API bounds its own work.
TIMEOUT = httpx.Timeout(120.0, connect=10.0)


async def serve_stdio(url: str, key: str, options: AgentOptions) -> None:
    async with httpx.AsyncClient(base_url=url.rstrip("/"), timeout=TIMEOUT) as client:

        async def document() -> dict[str, Any]:
            response = await client.get("/openapi.json")
            response.raise_for_status()
            body: dict[str, Any] = response.json()
            return body

        agent = PressroomAgent(document, lambda: Api(client, key), options)
        await agent.document()  # an unreachable URL fails the command at once
        server = build_server(agent)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
