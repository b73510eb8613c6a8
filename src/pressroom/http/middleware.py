"""The outermost layer: request ids, the version header, authentication, rate limits,
the access log and the last-resort 500. A pure ASGI middleware, for speed."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any

from starlette.types import ASGIApp
from starlette.types import Message
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

from pressroom.http.problems import problem_response
from pressroom.kit.errors import PressroomError
from pressroom.kit.ids import uuid7
from pressroom.kit.ratelimit import Decision

if TYPE_CHECKING:
    from pressroom.http.routing import PressroomRoute
    from pressroom.runtime import Runtime

log = logging.getLogger("pressroom.http")


_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
# RFC 6750's b64token: one credential, no spaces or commas.
_CREDENTIAL = re.compile(r"^[A-Za-z0-9\-._~+/]+=*$")
API_PREFIX = "/api/v1"
# An in-process caller (the console, acting for a signed-in person) puts the principal in the
# ASGI scope's state under this name instead of sending a key. Only code in this process builds
# scopes: a network request cannot set it, since the server makes its scope from the wire.
IN_PROCESS_PRINCIPAL = "in_process_principal"


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


class ServiceMiddleware:
    """`direct`: the read operations without path parameters whose dependencies are planned
    (http/solver.py), by path (none with telemetry on: http/routing.direct_reads): such a GET
    goes straight to its route, without the router trying the routes before it (a sixth of a
    getTenant's CPU) and the middleware beneath this one, whose exception handlers it does not
    need (its route answers every known error itself)."""

    def __init__(
        self, app: ASGIApp, runtime: Runtime, direct: Mapping[str, PressroomRoute] | None = None
    ) -> None:
        self.app = app
        self.runtime = runtime
        self.direct = dict(direct or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        given = _header(scope, b"x-request-id")
        request_id = given if given and _REQUEST_ID.match(given) else str(uuid7())
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = request_id
        status_holder = [500]
        extra_headers: list[tuple[bytes, bytes]] = [
            (b"x-request-id", request_id.encode()),
            (b"x-service-api-version", b"1"),
        ]
        response_started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal response_started
            if message["type"] == "http.response.start":
                response_started = True
                status_holder[0] = message["status"]
                decision: Decision | None = state.get("rate_limit")
                names = {name for name, _ in extra_headers}
                headers = [h for h in message.get("headers", []) if h[0].lower() not in names]
                headers.extend(extra_headers)
                if decision is not None:
                    headers.extend(decision.headers())
                message = {**message, "headers": headers}
            await send(message)

        try:
            early = await self._gate(scope, state)
            if early is not None:
                await early(scope, receive, send_with_headers)
            elif route := self._direct_route(scope):
                scope["route"] = route
                scope["endpoint"] = route.endpoint
                scope["path_params"] = {}
                await route.handle(scope, receive, send_with_headers)
            else:
                await self.app(scope, receive, send_with_headers)
        except Exception:
            log.exception("unhandled error", extra={"requestId": request_id})
            if not response_started:
                response = problem_response(PressroomError("internal_error"), request_id)
                await response(scope, receive, send_with_headers)
        finally:
            principal = state.get("principal")
            log.info(
                "request",
                extra={
                    "requestId": request_id,
                    "method": scope.get("method"),
                    "path": scope.get("path"),
                    "status": status_holder[0],
                    "durationMs": round((time.perf_counter() - started) * 1000, 2),
                    "organizationId": str(principal.organization_id) if principal else None,
                    "credential": principal.credential_prefix if principal else None,
                },
            )

    def _direct_route(self, scope: Scope) -> PressroomRoute | None:
        if scope["method"] != "GET" or scope.get("root_path"):
            return None
        return self.direct.get(scope["path"])

    async def _gate(self, scope: Scope, state: dict[str, Any]) -> Any:
        """Authenticate and count the request; a response to send instead, or None."""
        runtime = self.runtime
        path: str = scope["path"]
        address = _client_address(scope)
        if not (path == API_PREFIX or path.startswith(API_PREFIX + "/")):
            limit, window = runtime.settings.rate
            state["rate_limit"] = await runtime.limiter.hit("anon", address, limit, window)
            if not state["rate_limit"].allowed:
                return _limited(state)
            return None

        principal = state.get(IN_PROCESS_PRINCIPAL)
        if principal is not None:
            return await self._count(state, principal)
        given = [value for key, value in scope["headers"] if key == b"authorization"]
        authorization = given[0].decode("latin-1") if given else None
        credential = bearer_credential(given)
        if credential is not None:
            principal = await runtime.authenticate(credential)
        if principal is None:
            # Only failed attempts count here, so a valid key is never blocked by them.
            limit, window = runtime.settings.auth_failure_rate
            decision = await runtime.limiter.hit("authfail", address, limit, window)
            state["rate_limit"] = decision
            if not decision.allowed:
                return _limited(state)
            if not authorization:
                detail = "Missing Authorization header; send `Authorization: Bearer <API key>`."
            elif len(given) > 1 or "," in authorization:
                detail = (
                    "More than one credential (two Authorization headers, or two values in "
                    "one); send exactly one."
                )
            else:
                detail = "The API key is malformed, unknown, revoked or expired."
            return problem_response(
                PressroomError("unauthenticated", detail=detail), state["request_id"]
            )
        return await self._count(state, principal)

    async def _count(self, state: dict[str, Any], principal: Any) -> Any:
        """Count an authenticated request against its credential's rate limit."""
        state["principal"] = principal
        limit, window = self.runtime.settings.rate
        decision = await self.runtime.limiter.hit(
            "key", str(principal.credential_id), limit, window
        )
        state["rate_limit"] = decision
        if not decision.allowed:
            return _limited(state)
        return None


def bearer_credential(given: list[bytes]) -> str | None:
    """The one bearer credential of the request, or None when there is not exactly one.

    Two Authorization headers, or one naming two credentials (`Bearer a, Bearer b`, which a
    proxy may produce by joining headers), are ambiguous: which one a component in front of
    the server checked is unknown, so neither is used."""
    if len(given) != 1:
        return None
    scheme, _, credential = given[0].decode("latin-1").strip().partition(" ")
    credential = credential.strip()
    if scheme.lower() != "bearer" or not _CREDENTIAL.match(credential):
        return None
    return credential


def _limited(state: dict[str, Any]) -> Any:
    decision: Decision = state["rate_limit"]
    error = PressroomError(
        "rate_limited",
        detail=f"Rate limit of {decision.limit} requests per {decision.window} s exceeded; "
        f"retry in {decision.reset_seconds} s.",
        headers={"Retry-After": str(decision.reset_seconds)},
    )
    return problem_response(error, state["request_id"])
