"""The read operations' planned dependency solving (http/solver.py) answers as FastAPI's own
solver does: for every GET operation of the API and generated path and query parameters
(valid, invalid, missing, repeated, unknown), the same values and the same errors in the
same order."""

from __future__ import annotations

import uuid
from contextlib import AsyncExitStack
from typing import Any
from urllib.parse import urlencode

import httpx
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import solve_dependencies
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Router

from pressroom.app import create_app
from pressroom.audit.service import AuditNote
from pressroom.config import Settings
from pressroom.http.routing import LazyUnitOfWork
from pressroom.http.routing import PressroomRoute
from pressroom.http.routing import api_routes
from pressroom.http.routing import direct_reads
from pressroom.http.solver import PlannedRead
from pressroom.http.solver import compile_read
from pressroom.kit.errors import PressroomError
from pressroom.runtime import Runtime
from tests.factories import Tenant

# The operations that must take the planned path: the everyday reads.
PLANNED = {
    "getTenant",
    "listPosts",
    "getPost",
    "listMedia",
    "getMedia",
    "listChannels",
    "getChannel",
    "listWebhookEndpoints",
    "getWebhookEndpoint",
    "listWebhookDeliveries",
    "getWebhookDelivery",
    "getAnalytics",
    "listProviders",
    "getProvider",
}

values = st.sampled_from(
    [
        "",
        "0",
        "1",
        "25",
        "101",
        "-3",
        "abc",
        "true",
        "draft",
        "scheduled",
        "x",
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:00",
        str(uuid.UUID(int=7)),
        "A" * 600,
        "day",
        "impressions",
        "\u00e9",
    ]
)


def _get_routes(app: FastAPI) -> list[PressroomRoute]:
    return [route for route in api_routes(app.routes) if route.methods == {"GET"}]


def _query_names(dependant: Dependant) -> set[str]:
    names = {field.alias for field in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def _names(route: PressroomRoute) -> list[str]:
    return [*sorted(_query_names(route.dependant)), "unknown"]


def test_the_everyday_reads_are_planned(app: FastAPI) -> None:
    planned = {route.operation_id for route in _get_routes(app) if compile_read(route)}
    assert planned >= PLANNED


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
async def test_the_plan_solves_as_fastapi_does(
    app: FastAPI, runtime: Runtime, tenant: Tenant, data: Any
) -> None:
    routes = [route for route in _get_routes(app) if compile_read(route)]
    route = data.draw(st.sampled_from(routes), label="operation")
    names = _names(route)
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(names), values), max_size=6))
    path_params = {
        name: data.draw(values, label=name)
        for name in route.param_convertors  # the path's
    }
    principal = await runtime.authenticate(tenant.key)
    answers = []
    for solver in ("fastapi", "plan"):
        unit = LazyUnitOfWork(runtime, read_only=True)
        scope = {
            "type": "http",
            "method": "GET",
            "path": route.path,
            "query_string": urlencode(pairs).encode(),
            "headers": [],
            "path_params": path_params,
            "app": app,
            "state": {"principal": principal, "unit": unit, "audit": AuditNote()},
        }
        request = Request(scope)
        try:
            async with AsyncExitStack() as stack:
                scope["fastapi_inner_astack"] = stack
                scope["fastapi_function_astack"] = stack
                if solver == "fastapi":
                    solved = await solve_dependencies(
                        request=request,
                        dependant=route.dependant,
                        async_exit_stack=stack,
                        embed_body_fields=False,
                    )
                    found, errors = solved.values, solved.errors
                else:
                    plan = compile_read(route)
                    assert plan is not None
                    found, errors = await plan.solve(request)
                answers.append((_comparable(found), _comparable(errors)))
        except PressroomError as refused:  # a dependency's own check (analytics' ranges)
            answers.append(("refused", _comparable(vars(refused))))
        finally:
            await unit.close()
    assert answers[1] == answers[0], (route.operation_id, pairs, path_params)


def _comparable(value: Any) -> Any:
    """Values with the request's transaction (a new one each run) named by its type."""
    if isinstance(value, dict):
        return {key: _comparable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_comparable(item) for item in value]
    if type(value).__name__ in {"AsyncSession", "LazyUnitOfWork"}:
        return type(value).__name__
    if isinstance(value, Exception):
        return (type(value).__name__, str(value))
    return value


async def test_reads_take_the_plan_unless_telemetry_is_on_and_answer_the_same(
    settings: Settings, runtime: Runtime, client: httpx.AsyncClient, tenant: Tenant, monkeypatch
) -> None:
    """With telemetry on, FastAPI's own handler runs (it records the spans of dependencies and
    serialization); the answers are the same either way."""
    planned: list[str] = []
    call = PlannedRead.__call__

    async def counted(self: PlannedRead, request: Request) -> Response:
        planned.append(request.url.path)
        return await call(self, request)

    monkeypatch.setattr(PlannedRead, "__call__", counted)
    paths = ["/api/v1/tenant", "/api/v1/posts?pageSize=3", "/api/v1/posts?pageSize=0"]
    plain = [await client.get(path, headers=tenant.headers) for path in paths]
    assert planned == ["/api/v1/tenant", "/api/v1/posts", "/api/v1/posts"]
    traced_runtime = Runtime.build(settings.model_copy(update={"telemetry": True}))
    try:
        traced_app = create_app(runtime=traced_runtime)
        transport = httpx.ASGITransport(app=traced_app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as traced:
            answers = [await traced.get(path, headers=tenant.headers) for path in paths]
    finally:
        await traced_runtime.close()
    assert len(planned) == 3
    assert [_answer(a) for a in answers] == [_answer(p) for p in plain]
    assert [a.status_code for a in answers] == [200, 200, 400]


def _answer(response: httpx.Response) -> tuple[int, Any]:
    body = response.json()
    body.pop("requestId", None)  # each request's own
    return response.status_code, body


async def test_static_planned_reads_go_straight_to_their_route(
    app: FastAPI, client: httpx.AsyncClient, tenant: Tenant, monkeypatch
) -> None:
    """`GET /api/v1/tenant` and the other planned reads without path parameters skip the
    router; everything else (a path parameter, another method, an unknown path) still goes
    through it, with its 404 and 405."""
    direct = direct_reads(list(app.router.routes), app.state.runtime.settings)
    assert {"/api/v1/tenant", "/api/v1/posts", "/api/v1/channels"} <= set(direct)
    assert all(route.methods == {"GET"} and not route.param_convertors for route in direct.values())
    routed: list[str] = []
    route_call = Router.__call__

    async def counted(self: Router, scope: Any, receive: Any, send: Any) -> None:
        routed.append(f"{scope['method']} {scope['path']}")
        await route_call(self, scope, receive, send)

    monkeypatch.setattr(Router, "__call__", counted)
    assert (await client.get("/api/v1/tenant", headers=tenant.headers)).status_code == 200
    assert (await client.get("/api/v1/posts", headers=tenant.headers)).status_code == 200
    assert routed == []
    missing = await client.get(f"/api/v1/posts/{uuid.uuid4()}", headers=tenant.headers)
    refused = await client.delete("/api/v1/tenant", headers=tenant.headers)
    unknown = await client.get("/api/v1/tenant/", headers=tenant.headers)
    assert [missing.status_code, refused.status_code, unknown.status_code] == [404, 405, 404]
    assert len(routed) == 3
