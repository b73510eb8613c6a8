"""The MCP server over streamable HTTP at `/mcp` on the service, with the API's own bearer
keys. Each tool call is a request to the API in this process (through httpx's ASGI
transport) with the caller's key, so it is authenticated, authorized, rate limited and
audited exactly as the same request from outside would be."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import httpx
from fastapi import FastAPI
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

from pressroom.agents.api import Api
from pressroom.agents.server import PressroomAgent
from pressroom.agents.server import build_server
from pressroom.agents.server import options_from
from pressroom.http.middleware import bearer_credential
from pressroom.http.problems import problem_response
from pressroom.kit.errors import PressroomError
from pressroom.kit.ids import uuid7
from pressroom.runtime import Runtime

MCP_PATH = "/mcp"
# The API key of the request being served (set for the request's whole handling).
_CALLER: ContextVar[str] = ContextVar("pressroom_mcp_caller")


class McpEndpoint:
    """Refuses a request without a valid API key (401, as the API would), then hands it to
    the SDK's streamable HTTP transport with the key in context."""

    def __init__(self, runtime: Runtime, manager: StreamableHTTPSessionManager) -> None:
        self.runtime = runtime
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        given = [value for key, value in scope["headers"] if key == b"authorization"]
        credential = bearer_credential(given)
        principal = await self.runtime.authenticate(credential) if credential else None
        if credential is None or principal is None:
            request_id = scope.get("state", {}).get("request_id") or str(uuid7())
            detail = "Send an API key as `Authorization: Bearer <API key>`."
            error = PressroomError("unauthenticated", detail=detail)
            await problem_response(error, request_id)(scope, receive, send)
            return
        token = _CALLER.set(credential)
        try:
            await self.manager.handle_request(scope, receive, send)
        finally:
            _CALLER.reset(token)


def install_mcp(app: FastAPI, runtime: Runtime) -> None:
    """Mount the MCP server at /mcp; it runs with the application's lifespan."""
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://pressroom.internal"
    )

    async def document() -> dict[str, Any]:
        return app.openapi()

    agent = PressroomAgent(
        document, lambda: Api(client, _CALLER.get()), options_from(runtime.settings)
    )
    manager = StreamableHTTPSessionManager(
        app=build_server(agent), stateless=True, json_response=True
    )
    app.add_route(
        MCP_PATH,
        McpEndpoint(runtime, manager),  # type: ignore[arg-type]
        methods=["GET", "POST", "DELETE"],
        include_in_schema=False,
    )
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with inner(application) as state, manager.run():
            try:
                yield state
            finally:
                await client.aclose()

    app.router.lifespan_context = lifespan
