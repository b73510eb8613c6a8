"""The console's API client: the application's own `/api/v1` routes, called in process as the
signed-in person (the principal travels in the ASGI scope, never as a key)."""

from __future__ import annotations

from collections.abc import AsyncIterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import httpx
from starlette.types import ASGIApp
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

from pressroom.auth.scopes import MANAGER_ROLES
from pressroom.auth.service import Principal
from pressroom.http.middleware import IN_PROCESS_PRINCIPAL

# Never resolved: the transport hands every request straight to the application.
_BASE = "http://console.internal"


@dataclass
class Answer:
    """An API answer: its status and parsed JSON body (a problem's too)."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)
    content: bytes = b""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def detail(self) -> str:
        if isinstance(self.body, dict):
            return str(self.body.get("detail") or self.body.get("title") or "")
        return ""

    @property
    def field_errors(self) -> dict[str, str]:
        """`{field: message}` of a 400's field errors (the first message per field)."""
        found: dict[str, str] = {}
        errors = self.body.get("errors") if isinstance(self.body, dict) else None
        for error in errors or []:
            found.setdefault(str(error.get("field")), str(error.get("message")))
        return found


class _ActingAs:
    """The application, with every request it is handed made by `principal`."""

    def __init__(self, app: ASGIApp, principal: Principal) -> None:
        self.app = app
        self.principal = principal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope = {**scope, "state": {IN_PROCESS_PRINCIPAL: self.principal}}
        await self.app(scope, receive, send)


class ConsoleApi:
    def __init__(self, app: ASGIApp, principal: Principal) -> None:
        self.principal = principal
        self._transport = httpx.ASGITransport(app=_ActingAs(app, principal))

    async def call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        content: AsyncIterable[bytes] | bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        async with httpx.AsyncClient(transport=self._transport, base_url=_BASE) as client:
            response = await client.request(
                method,
                "/api/v1" + path,
                params={k: v for k, v in (params or {}).items() if v not in (None, "")},
                json=json,
                content=content,
                headers=headers,
            )
        body = None
        if "json" in response.headers.get("content-type", ""):
            try:
                body = response.json()
            except ValueError:
                body = None
        return Answer(response.status_code, body, dict(response.headers), response.content)

    async def get(self, path: str, **params: Any) -> Answer:
        return await self.call("GET", path, params=params)

    async def listing(self, path: str, limit: int = 100, **params: Any) -> Answer:
        """Up to `limit` items of a collection, following its cursor, as one answer (`items`);
        the first page's refusal as it came (a later page's ends the list)."""
        found: list[dict[str, Any]] = []
        cursor = None
        while len(found) < limit:
            size = min(100, limit - len(found))
            answer = await self.get(path, pageSize=size, cursor=cursor, **params)
            if not answer.ok:
                if cursor is None:
                    return answer
                break
            found.extend(answer.body["items"])
            cursor = answer.body.get("nextCursor")
            if not cursor:
                break
        return Answer(200, {"items": found})

    async def items(self, path: str, limit: int = 100, **params: Any) -> list[dict[str, Any]]:
        """Up to `limit` items of a collection, following its cursor; [] when refused."""
        answer = await self.listing(path, limit, **params)
        items: list[dict[str, Any]] = answer.body["items"] if answer.ok else []
        return items

    def can(self, scope: str, manager: bool = False) -> bool:
        """Whether the API would let this person do an operation needing `scope` (and, for
        webhook management and approval decisions, an owner's or admin's role): the console
        offers only what the API would allow, and the API still decides."""
        if scope not in self.principal.scopes:
            return False
        return not manager or self.principal.member_role in MANAGER_ROLES
