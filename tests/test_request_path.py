"""The request path's shape (issue 17): no dependency runs in the thread pool, and a request
that only reads never waits for a write (on SQLite: read-only connections beside the one
writer), while writers still queue one at a time."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from pressroom.db import unit_of_work
from pressroom.http.routing import api_routes
from pressroom.runtime import Runtime
from pressroom.tenant import service as tenant_service
from tests.factories import Tenant


def _plain_functions(dependant: Dependant) -> list[str]:
    found = []
    for sub in dependant.dependencies:
        call: Any = sub.call
        is_coroutine = inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(
            getattr(call, "__call__", None)  # noqa: B004
        )
        if call is not None and not is_coroutine:
            found.append(getattr(call, "__qualname__", repr(call)))
        found += _plain_functions(sub)
    return found


def test_no_dependency_of_an_operation_runs_in_the_thread_pool(app: FastAPI) -> None:
    """FastAPI runs a plain-function dependency in the thread pool: a hop that cost more CPU
    than the rest of a request's parameters (the profile of listPosts, bench/README.md)."""
    plain = {
        f"{route.operation_id}: {name}"
        for route in api_routes(app.routes)
        for name in _plain_functions(route.dependant)
    }
    assert plain == set()


async def test_a_read_is_answered_while_a_write_holds_the_database(
    runtime: Runtime, client: httpx.AsyncClient, tenant: Tenant
) -> None:
    async with unit_of_work(runtime.sessions) as session:
        # The write transaction is open (on SQLite: the file's write lock is held) ...
        await tenant_service.create_organization(session, "Written meanwhile")
        await session.flush()
        # ... and reads are answered all the same, without waiting for it.
        reads = [
            client.get(path, headers=tenant.headers)
            for path in ("/api/v1/tenant", "/api/v1/posts", "/api/v1/channels")
        ]
        answers = await asyncio.wait_for(asyncio.gather(*reads), timeout=10)
    assert [answer.status_code for answer in answers] == [200, 200, 200]


async def test_writers_queue_instead_of_failing(runtime: Runtime) -> None:
    async def write(n: int) -> None:
        async with unit_of_work(runtime.sessions) as session:
            await tenant_service.create_organization(session, f"Queued {n}")
            await asyncio.sleep(0.01)  # hold the transaction a little, as a request does

    await asyncio.wait_for(asyncio.gather(*(write(n) for n in range(40))), timeout=60)
    async with runtime.read_sessions() as session:
        count = await session.scalar(
            text("SELECT count(*) FROM organizations WHERE name LIKE 'Queued %'")
        )
    assert count == 40


async def test_a_read_only_unit_of_work_cannot_write_on_sqlite(
    runtime: Runtime, is_postgres: bool
) -> None:
    if is_postgres:
        pytest.skip("PostgreSQL reads through autocommit on the same engine")
    async with runtime.read_sessions() as session, session.begin():
        with pytest.raises(OperationalError, match="readonly"):
            await session.execute(text("INSERT INTO organizations (id, name) VALUES ('x', 'y')"))
