"""Reading operations whose dependencies are solved by a plan made once per operation.

FastAPI's request handler is generic: on every request it asks again of each dependency and
parameter what kind it is (a generator? a security scheme? which aliases? a sequence?), and
that questioning was a quarter of the CPU of a `GET /tenant`. The API's read operations use
one small kind of dependency: coroutines over the request (the caller, the transaction, the
runtime) and coroutines over query parameters (pagination). For those `compile_read` asks
once, when the route is built, and the plan it returns only calls and validates.

The plan keeps FastAPI's semantics, which `tests/test_solver.py` compares against FastAPI's
own solver: sub-dependencies first, in declaration order, each called once a request (and
not at all when its own parameters are invalid); then path, then query parameters, each
validated by its field with the same location, so the errors are the same and in the same
order. An operation outside that kind (a body, headers, cookies, generators, security
scopes, a `Response` parameter) keeps FastAPI's handler: `compile_read` answers None."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import params
from fastapi._compat import ModelField
from fastapi._compat import field_annotation_is_sequence
from fastapi.datastructures import DefaultPlaceholder
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import _get_param_aliases
from fastapi.dependencies.utils import _get_param_model
from fastapi.dependencies.utils import _validate_value_with_model_field
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from fastapi.routing import serialize_response
from fastapi.utils import is_body_allowed_for_status_code
from pydantic_core import PydanticUndefined
from starlette.requests import Request
from starlette.responses import Response


@dataclass(frozen=True, slots=True)
class _Param:
    field: ModelField
    location: str  # "path" or "query"
    keys: tuple[str, ...]  # the names it may be sent under, preferred first


@dataclass(frozen=True, slots=True)
class _Call:
    call: Callable[..., Awaitable[Any]]
    name: str | None
    use_cache: bool
    dependencies: tuple[_Call, ...]
    path_params: tuple[_Param, ...]
    query_params: tuple[_Param, ...]
    request_name: str | None


_UNSUPPORTED_NAMES = (
    "websocket_param_name",
    "http_connection_param_name",
    "response_param_name",
    "background_tasks_param_name",
    "security_scopes_param_name",
)


def _param(field: ModelField, location: str) -> _Param | None:
    if _get_param_model(field) is not None or not isinstance(field.field_info, params.Param):
        return None
    # A repeatable parameter (read as a list) is left to FastAPI: no operation has one.
    if field_annotation_is_sequence(field.field_info.annotation):
        return None
    keys = tuple(key for _alias, key in _get_param_aliases(field))
    return _Param(field, location, keys)


def _compile(dependant: Dependant) -> _Call | None:
    call = dependant.call
    if (
        call is None
        or not inspect.iscoroutinefunction(call)
        or dependant.header_params
        or dependant.cookie_params
        or dependant.body_params
        or dependant.own_oauth_scopes
        or dependant.parent_oauth_scopes
        or dependant.concurrency is not None
        or any(getattr(dependant, name) is not None for name in _UNSUPPORTED_NAMES)
    ):
        return None
    dependencies = [_compile(sub) for sub in dependant.dependencies]
    path = [_param(field, "path") for field in dependant.path_params]
    query = [_param(field, "query") for field in dependant.query_params]
    if None in dependencies or None in path or None in query:
        return None
    return _Call(
        call=call,
        name=dependant.name,
        use_cache=dependant.use_cache,
        dependencies=tuple(d for d in dependencies if d is not None),
        path_params=tuple(p for p in path if p is not None),
        query_params=tuple(p for p in query if p is not None),
        request_name=dependant.request_param_name,
    )


def _read(
    found: tuple[_Param, ...], received: Mapping[str, Any], errors: list[Any]
) -> dict[str, Any]:
    """The values of one location's parameters, as FastAPI's `request_params_to_args`."""
    values: dict[str, Any] = {}
    for param in found:
        key = next((k for k in param.keys if k in received), param.keys[0])
        value = received.get(key)
        if value is None:
            value = PydanticUndefined
        solved, failed = _validate_value_with_model_field(
            field=param.field, value=value, values=values, loc=(param.location, key)
        )
        if failed:
            errors.extend(failed)
        else:
            values[param.field.name] = solved
    return values


async def _solve(
    plan: _Call, request: Request, cache: dict[Any, Any], errors: list[Any]
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for sub in plan.dependencies:
        before = len(errors)
        arguments = await _solve(sub, request, cache, errors)
        if len(errors) > before:
            continue
        if sub.use_cache and sub.call in cache:
            solved = cache[sub.call]
        else:
            solved = await sub.call(**arguments)
        if sub.name is not None:
            values[sub.name] = solved
        cache.setdefault(sub.call, solved)
    found_errors: list[Any] = []
    if plan.path_params:
        values.update(_read(plan.path_params, request.path_params, found_errors))
    if plan.query_params:
        values.update(_read(plan.query_params, request.query_params, found_errors))
    errors.extend(found_errors)
    if plan.request_name is not None:
        values[plan.request_name] = request
    return values


# What `serialize_response` takes from the route's `response_model_<name>`.
_OPTIONS = ("include", "exclude", "by_alias", "exclude_unset", "exclude_defaults", "exclude_none")


class PlannedRead:
    """A GET operation's handler, with its dependencies solved by the plan."""

    def __init__(self, route: APIRoute, plan: _Call) -> None:
        self._route = route
        self._plan = plan
        # As FastAPI answers: pydantic-core writes the JSON of a response model unless the
        # operation names its own response class.
        response_class = route.response_class
        default_class = isinstance(response_class, DefaultPlaceholder)
        self._class: type[Response] = (
            response_class.value
            if isinstance(response_class, DefaultPlaceholder)
            else response_class
        )
        self._dump_json = default_class and route.response_field is not None
        self._options: dict[str, Any] = {
            name: getattr(route, f"response_model_{name}") for name in _OPTIONS
        }
        self._extra: dict[str, Any] = {}
        if route.status_code is not None:
            self._extra["status_code"] = route.status_code

    async def solve(self, request: Request) -> tuple[dict[str, Any], list[Any]]:
        """The endpoint's arguments and the validation errors, as FastAPI's solver finds them."""
        errors: list[Any] = []
        values = await _solve(self._plan, request, {}, errors)
        return values, errors

    async def __call__(self, request: Request) -> Response:
        values, errors = await self.solve(request)
        if errors:
            raise RequestValidationError(errors)
        answer = await self._plan.call(**values)
        if isinstance(answer, Response):
            return answer
        content = await serialize_response(
            field=self._route.response_field,
            response_content=answer,
            is_coroutine=True,
            dump_json=self._dump_json,
            **self._options,
        )
        if self._dump_json:
            response = Response(content=content, media_type="application/json", **self._extra)
        else:
            response = self._class(content, **self._extra)
        if not is_body_allowed_for_status_code(response.status_code):
            response.body = b""
        return response


def compile_read(route: APIRoute) -> PlannedRead | None:
    """The handler of a GET operation whose dependencies fit the plan, else None."""
    if route.methods != {"GET"} or route.body_field is not None:
        return None
    plan = _compile(route.dependant)
    return None if plan is None else PlannedRead(route, plan)
