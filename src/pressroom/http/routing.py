"""The route layer: every API operation runs through `PressroomRoute`, which owns the
transaction, the access checks, idempotency and the audit entry of the request."""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
from collections.abc import Callable
from collections.abc import Coroutine
from datetime import timedelta
from typing import Annotated
from typing import Any

from fastapi import Depends
from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

from pressroom.audit import service as audit
from pressroom.audit.service import Actor
from pressroom.audit.service import AuditNote
from pressroom.auth.service import Principal
from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.http import idempotency
from pressroom.http import inputs
from pressroom.http.access import BodyRoleCheck
from pressroom.http.access import body_role_check_of
from pressroom.http.access import check_access
from pressroom.http.access import requirements_of
from pressroom.http.problems import as_problem
from pressroom.http.problems import error_responses
from pressroom.http.problems import problem_response
from pressroom.http.solver import compile_read
from pressroom.kit.errors import field_error
from pressroom.runtime import Runtime

log = logging.getLogger(__name__)
_MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# POST operations that change nothing (they take a body to check, not to keep): like reads they
# leave no audit entry, and their transaction is rolled back rather than committed.
READ_ONLY_OPERATIONS = frozenset({"preflightPost"})


def _find_requirements(dependant: Dependant) -> tuple[str | None, bool]:
    scope, manager_only = requirements_of(dependant.call)
    for sub in dependant.dependencies:
        sub_scope, sub_manager = _find_requirements(sub)
        scope = scope or sub_scope
        manager_only = manager_only or sub_manager
    return scope, manager_only


def _find_body_role_checks(dependant: Dependant) -> list[BodyRoleCheck]:
    found = [check for check in [body_role_check_of(dependant.call)] if check is not None]
    for sub in dependant.dependencies:
        found += _find_body_role_checks(sub)
    return found


def actor_of(principal: Principal) -> Actor:
    return Actor(
        member_id=principal.member_id,
        credential_id=principal.credential_id,
        credential_prefix=principal.credential_prefix,
    )


# The largest JSON body accepted: 20 targets of Facebook-length text fit with room to spare.
MAX_JSON_BODY = 8 * 1024 * 1024


async def _read_bounded_body(request: Request) -> None:
    """Read a JSON body at most MAX_JSON_BODY long, without buffering more than that.

    The contract keeps 413 for uploads, so an oversized JSON body is a 400 on `body`."""
    too_large = field_error(
        "body", "too_large", f"is larger than {MAX_JSON_BODY // (1024 * 1024)} MiB"
    )
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_JSON_BODY:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_JSON_BODY:
            raise too_large
        chunks.append(chunk)
    # Starlette caches the body here; FastAPI's body parsing then reads the cached bytes.
    request._body = b"".join(chunks)


async def _reject_unexpected_body(request: Request) -> None:
    """Operations without a body accept none or `{}` (contract section 3)."""
    body = await request.body()
    if not body.strip():
        return
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if parsed != {}:
        raise field_error("body", "unexpected_body", "this operation takes no body (or `{}`)")


def _query_names(dependant: Dependant) -> set[str]:
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


class DocumentedRoute(APIRoute):
    """An operation whose endpoint docstring (one line) is its OpenAPI summary, beside the
    description its decorator gives; without a description FastAPI's own defaults apply."""

    def __init__(
        self,
        path: str,
        endpoint: Callable[..., Any],
        *,
        summary: str | None = None,
        description: str | None = None,
        **options: Any,
    ) -> None:
        if summary is None and description is not None:
            summary = inspect.getdoc(endpoint)
        super().__init__(path, endpoint, summary=summary, description=description, **options)


class PressroomRoute(DocumentedRoute):
    def __init__(
        self,
        path: str,
        endpoint: Callable[..., Any],
        *,
        responses: dict[int | str, dict[str, Any]] | None = None,
        **options: Any,
    ) -> None:
        # Any operation may answer the problems this route raises (validation, access,
        # conflicts, rate limits, internal errors): declared after the operation's own answers.
        own = responses or {}
        problems = {status: r for status, r in error_responses().items() if status not in own}
        super().__init__(path, endpoint, responses={**own, **problems}, **options)

    # The handler of a read whose dependencies are planned (http/solver.py), run by `handle`
    # without FastAPI's per-request wrapping (exit stacks for generator dependencies, which a
    # planned read has none of, and exception handlers, which the handler makes unneeded: it
    # answers every known error itself).
    _planned_handler: Callable[[Request], Coroutine[Any, Any, Response]] | None = None

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler = self._planned_handler
        runtime: Runtime = scope["app"].state.runtime
        if handler is None or scope["method"] != "GET" or runtime.settings.telemetry:
            await super().handle(scope, receive, send)
            return
        response = await handler(Request(scope, receive, send))
        await response(scope, receive, send)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        original = super().get_route_handler()
        plan = compile_read(self)
        planned = plan or original
        scope, manager_only = _find_requirements(self.dependant)
        body_role_checks = _find_body_role_checks(self.dependant)
        operation_id = self.operation_id or self.name
        read_only = operation_id in READ_ONLY_OPERATIONS
        mutating = bool((self.methods or set()) & _MUTATING) and not read_only
        takes_body = self.body_field is not None
        extra = self.openapi_extra or {}
        idempotent = operation_id in idempotency.IDEMPOTENT_OPERATIONS or bool(
            extra.get("x-idempotent")
        )
        # Multipart uploads compute their own fingerprint once the files are read.
        manual = extra.get("x-idempotency-fingerprint") == "files"
        known_query = frozenset(_query_names(self.dependant))
        repeatable_query = inputs.repeatable_query(self.dependant, operation_id)
        json_body = takes_body and not manual and not inputs.takes_form(self.dependant)

        async def handler(request: Request) -> Response:
            runtime: Runtime = request.app.state.runtime
            state = request.state
            principal: Principal | None = getattr(state, "principal", None)
            state.audit = AuditNote()
            state.idempotency_claim = None
            try:
                check_access(principal, scope, manager_only)
                assert principal is not None
                if (mutating or takes_body) and not manual:
                    await _read_bounded_body(request)
                if json_body:
                    await inputs.require_json_body(request)
                for check_role in body_role_checks:
                    check_role(principal, await request.body())
                if mutating and not takes_body and not manual:
                    await _reject_unexpected_body(request)
                key = request.headers.get(idempotency.HEADER)
                if idempotent and key is not None and not manual:
                    body = await request.body()
                    outcome = await claim_idempotency(
                        request, idempotency.canonical_json(body), operation_id
                    )
                    if outcome is not None:
                        return outcome
                inputs.check_query(request, known_query, repeatable_query)
                if json_body:
                    inputs.check_body_characters(await request.body())
                # The transaction opens only if the operation touches the database.
                unit = LazyUnitOfWork(runtime, read_only=not mutating)
                state.unit = unit
                try:
                    # FastAPI's own handler records its spans when telemetry is on.
                    run = original if runtime.settings.telemetry else planned
                    response = await run(request)
                    if getattr(state, "idempotent_replay", False):
                        return response
                    await _settle(unit, request, operation_id, response, mutating)
                finally:
                    await unit.close()
                return response
            except Exception as exc:
                problem = as_problem(exc)
                claimed = state.idempotency_claim
                if problem is None:
                    await _record_failure(request, operation_id, 500, claimed, None, mutating)
                    raise
                response = problem_response(problem, state.request_id)
                await _record_failure(
                    request, operation_id, problem.status, claimed, response, mutating
                )
                return response

        if plan is not None:
            self._planned_handler = handler
        return handler


async def _settle(
    unit: LazyUnitOfWork, request: Request, operation_id: str, response: Response, mutating: bool
) -> None:
    """Store the idempotent response, append the audit entry, commit."""
    state = request.state
    claimed = state.idempotency_claim
    if claimed is not None:
        await idempotency.store(
            await unit.session(),
            request.app.state.runtime.box,
            claimed,
            response,
            secret=bool(getattr(state, "secret_response", False)),
        )
    if mutating:
        # Last before the commit: the entry locks the organization's audit chain (on
        # PostgreSQL), which every write of the organization waits for; the shorter it is
        # held, the more writes go through.
        await _append_audit(await unit.session(), request, operation_id, response.status_code)
    await unit.commit()


async def claim_idempotency(
    request: Request, canonical_body: bytes, operation_id: str
) -> Response | None:
    """Claim the request's Idempotency-Key; a stored response to replay, or None."""
    runtime: Runtime = request.app.state.runtime
    principal: Principal = request.state.principal
    key = idempotency.check_key(request.headers[idempotency.HEADER])
    outcome = await idempotency.claim(
        runtime.sessions,
        runtime.box,
        organization_id=principal.organization_id,
        key=key,
        operation_id=operation_id,
        fingerprint_value=idempotency.fingerprint(
            operation_id, request.method, request.url.path, canonical_body
        ),
        retention=timedelta(seconds=runtime.settings.idempotency_retention_seconds),
        autocommit=runtime.autocommit_writer,
    )
    if isinstance(outcome, idempotency.Stored):
        request.state.idempotent_replay = True
        return outcome.response()
    request.state.idempotency_claim = outcome
    return None


# The audit column's length: a path id of a refused request may be anything the client sent.
_RESOURCE_ID_LENGTH = 64


def _path_resource_id(value: str) -> str:
    """The id a refused request named in its path, storable on both databases: NUL
    characters (which PostgreSQL cannot store) replaced, cut to the column's length."""
    return value.replace("\x00", "\ufffd")[:_RESOURCE_ID_LENGTH]


async def _append_audit(
    session: AsyncSession, request: Request, operation_id: str, status: int
) -> None:
    principal: Principal = request.state.principal
    note: AuditNote = request.state.audit
    resource_id = note.resource_id
    if resource_id is None and request.path_params:
        resource_id = _path_resource_id(str(list(request.path_params.values())[-1]))
    await audit.append(
        session,
        organization_id=principal.organization_id,
        actor=actor_of(principal),
        operation_id=operation_id,
        outcome_status=status,
        resource_type=note.resource_type,
        resource_id=resource_id,
        request_id=request.state.request_id,
        changes=note.changes,
    )


async def _record_failure(
    request: Request,
    operation_id: str,
    status: int,
    claimed: idempotency.Claim | None,
    response: Response | None,
    mutating: bool,
) -> None:
    """After a rolled-back request: audit the attempt and settle the idempotency claim.

    Outcomes below 500 are stored for replay; a 5xx releases the key for a retry."""
    runtime: Runtime = request.app.state.runtime
    principal: Principal | None = getattr(request.state, "principal", None)
    try:
        if claimed is not None and (response is None or status >= 500):
            await idempotency.release(runtime.sessions, claimed)
            claimed = None
        if not (mutating and principal is not None) and claimed is None:
            return
        async with unit_of_work(runtime.sessions) as session:
            if mutating and principal is not None:
                await _append_audit(session, request, operation_id, status)
            if claimed is not None and response is not None:
                await idempotency.store(session, runtime.box, claimed, response, secret=False)
    except Exception:
        # The request's own outcome stands; this bookkeeping failure is logged, not raised.
        log.exception("could not record a failed request", extra={"operationId": operation_id})
        with contextlib.suppress(Exception):
            if claimed is not None:
                await idempotency.release(runtime.sessions, claimed)


def direct_reads(routes: list[Any], settings: Settings) -> dict[str, PressroomRoute]:
    """The planned read operations without path parameters, by path (ServiceMiddleware);
    none with telemetry on, when every request goes through FastAPI's handler."""
    if settings.telemetry:
        return {}
    return {
        route.path: route
        for route in api_routes(routes)
        if route._planned_handler is not None and not route.param_convertors
    }


def api_routes(routes: list[Any]) -> list[PressroomRoute]:
    """Every API operation of an application or router, through included routers."""
    found: list[PressroomRoute] = []
    for route in routes:
        if isinstance(route, PressroomRoute):
            found.append(route)
        inner = getattr(route, "original_router", None)
        if inner is not None:
            found.extend(api_routes(list(inner.routes)))
    return found


class LazyUnitOfWork:
    """The request's transaction, begun on first use and committed by the route layer. A
    request without a write method reads through `Runtime.read_sessions` (on SQLite: beside
    the writer, never waiting for it)."""

    def __init__(self, runtime: Runtime, *, read_only: bool = False) -> None:
        self._runtime = runtime
        self._read_only = read_only
        self._session: AsyncSession | None = None

    async def session(self) -> AsyncSession:
        if self._session is None:
            sessions = self._runtime.read_sessions if self._read_only else self._runtime.sessions
            self._session = sessions()
            await self._session.begin()
        return self._session

    async def commit(self) -> None:
        if self._session is None:
            return
        if self._read_only and self._runtime.reads_in_autocommit:
            # Nothing is left to commit, and the session's bookkeeping of a commit cost 5 % of
            # a listed page.
            return
        await self._session.commit()

    async def close(self) -> None:
        # Closing without a commit rolls back: an exception leaves nothing half-written.
        if self._session is not None:
            await self._session.close()
            self._session = None


async def _session(request: Request) -> AsyncSession:
    unit: LazyUnitOfWork = request.state.unit
    return await unit.session()


# Dependencies are coroutines: FastAPI would run a plain function in the thread pool.
async def _unit(request: Request) -> LazyUnitOfWork:
    return request.state.unit  # type: ignore[no-any-return]


async def _audit_note(request: Request) -> AuditNote:
    return request.state.audit  # type: ignore[no-any-return]


async def _runtime(request: Request) -> Runtime:
    return request.app.state.runtime  # type: ignore[no-any-return]


Session = Annotated[AsyncSession, Depends(_session)]
# The request's transaction, not yet begun: for an operation that must call the network before
# it writes (nothing is sent to the network inside a transaction), `await unit.session()` after.
UnitOfWork = Annotated[LazyUnitOfWork, Depends(_unit)]
Audit = Annotated[AuditNote, Depends(_audit_note)]
RuntimeDep = Annotated[Runtime, Depends(_runtime)]
