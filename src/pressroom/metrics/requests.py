"""Counting requests by operation and status, and timing them: a pure ASGI middleware.

The operation is the matched route's OpenAPI operationId, or for routes outside the API
(`/docs`, `/problems/{code}`, `/media-links/{token}`) their path template; never the raw path,
so ids in paths never become label values. A request no route matches is `unmatched`."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp
from starlette.types import Message
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

from pressroom.metrics.instruments import REQUEST_DURATION
from pressroom.metrics.instruments import REQUESTS

UNMATCHED = "unmatched"


def operation_of(route: Any) -> str:
    """The label of a matched route: its operationId, else its path template."""
    operation = getattr(route, "operation_id", None)
    if operation:
        return str(operation)
    path = getattr(route, "path", None)
    return str(path) if path else UNMATCHED


class RequestMetrics:
    """Outermost middleware: sees every answer, those of the authentication and rate-limit
    gate included. Those answer before routing, so their operation is looked up in the
    OpenAPI document (method and path template) instead."""

    def __init__(self, app: ASGIApp, openapi: Callable[[], dict[str, Any]]) -> None:
        self.app = app
        self.openapi = openapi
        self._table: list[tuple[re.Pattern[str], dict[str, str]]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_recording(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_recording)
        finally:
            route = scope.get("route")
            operation = operation_of(route) if route is not None else self._unrouted(scope)
            REQUESTS.labels(operation, str(status)).inc()
            REQUEST_DURATION.labels(operation).observe(time.perf_counter() - started)

    def _unrouted(self, scope: Scope) -> str:
        if self._table is None:
            self._table = operation_table(self.openapi())
        path, method = scope.get("path", ""), str(scope.get("method", "")).lower()
        for pattern, operations in self._table:
            if pattern.fullmatch(path):
                return operations.get(method, UNMATCHED)
        return UNMATCHED


def operation_table(document: dict[str, Any]) -> list[tuple[re.Pattern[str], dict[str, str]]]:
    """(path template as a pattern, {method: operationId}) for every path of the document."""
    table = []
    for template, item in document.get("paths", {}).items():
        pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template))
        operations = {
            method: str(operation["operationId"])
            for method, operation in item.items()
            if isinstance(operation, dict) and "operationId" in operation
        }
        table.append((re.compile(pattern), operations))
    return table
