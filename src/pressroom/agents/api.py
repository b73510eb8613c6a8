"""Calling the public API with the caller's key: the MCP server has no other way in."""

from __future__ import annotations

from typing import IO
from typing import Any
from typing import NamedTuple
from urllib.parse import quote

import httpx

from pressroom.agents.tools import Operation


class Answer(NamedTuple):
    status: int
    body: Any

    @property
    def ok(self) -> bool:
        return self.status < 400


class MissingArgument(ValueError):
    pass


class Api:
    """The API as one caller (an API key) sees it."""

    def __init__(self, client: httpx.AsyncClient, key: str) -> None:
        self.client = client
        self.key = key

    def _headers(self, idempotency_key: str | None) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.key}"}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        return headers

    async def call(
        self, operation: Operation, arguments: dict[str, Any], idempotency_key: str | None = None
    ) -> Answer:
        path = operation.path
        for name in operation.path_params:
            if arguments.get(name) in (None, ""):
                raise MissingArgument(name)
            path = path.replace("{" + name + "}", quote(str(arguments[name]), safe=""))
        params = {
            name: _query_value(arguments[name])
            for name in operation.query_params
            if arguments.get(name) is not None
        }
        body = arguments.get("body") if operation.has_body else None
        response = await self.client.request(
            operation.method,
            path,
            params=params,
            json=body if operation.has_body else None,
            headers=self._headers(idempotency_key),
        )
        return _answer(response)

    async def get(self, path: str, params: dict[str, Any] | None = None) -> Answer:
        response = await self.client.get(path, params=params, headers=self._headers(None))
        return _answer(response)

    async def upload(self, filename: str, content: IO[bytes], idempotency_key: str) -> Answer:
        response = await self.client.post(
            "/api/v1/media",
            files=[("files", (filename, content, "application/octet-stream"))],
            headers=self._headers(idempotency_key),
        )
        return _answer(response)


def _query_value(value: Any) -> Any:
    # The API's list filters are comma-separated (getAnalytics); booleans are lowercase.
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _answer(response: httpx.Response) -> Answer:
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    return Answer(response.status_code, body)
