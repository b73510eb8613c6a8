"""Test fixtures: a real database (SQLite, or PostgreSQL when PRESSROOM_TEST_DATABASE_URL
is set), one per pytest process, built by running the migrations (tests/databases.py), and the
application over that database."""

from __future__ import annotations

import os
import secrets
import uuid
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from pressroom.app import create_app
from pressroom.config import Settings
from pressroom.runtime import Runtime
from tests import databases
from tests.factories import Tenant
from tests.factories import make_tenant

POSTGRES_SERVER_URL = os.environ.get("PRESSROOM_TEST_DATABASE_URL")
RUN = pytest.StashKey[str]()

# A developer's proxy never carries test traffic (provider calls honour HTTPS_PROXY and vet a
# proxied destination by resolving it): tests that want a proxy set one on loopback.
for _variable in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"):
    os.environ.pop(_variable, None)
    os.environ.pop(_variable.lower(), None)


def pytest_configure(config: pytest.Config) -> None:
    # The process that runs the session (xdist's controller, or the only one) names the run;
    # its workers are told the name, so they share one template database.
    if not hasattr(config, "workerinput"):
        config.stash[RUN] = secrets.token_hex(4)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    node.workerinput["pressroom_run"] = node.config.stash[RUN]


def pytest_sessionfinish(session: pytest.Session) -> None:
    # After every worker has dropped its copy: the template goes too.
    if POSTGRES_SERVER_URL and not hasattr(session.config, "workerinput"):
        databases.postgres_drop_template(POSTGRES_SERVER_URL, session.config.stash[RUN])


def pytest_runtest_setup(item: pytest.Item) -> None:
    # The slow tier's tests start processes of their own and hold them to deadlines: two at once
    # on two cores would fail them by chance, so a run on several workers refuses them.
    workerinput = getattr(item.config, "workerinput", None)
    if workerinput and workerinput["workercount"] > 1 and item.get_closest_marker("slow"):
        pytest.fail("the slow tier runs one test at a time: `-m slow -n 0`", pytrace=False)


def _run_location(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, str, Path]:
    """(the run's name, this process's worker name, the run's shared temporary directory)."""
    workerinput = getattr(request.config, "workerinput", None)
    base = tmp_path_factory.getbasetemp()
    if workerinput is None:
        return request.config.stash[RUN], "main", base
    # A worker's temporary directory is inside the run's.
    return workerinput["pressroom_run"], workerinput["workerid"], base.parent


@pytest.fixture(scope="session")
def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """This process's own database for the session, a copy of the run's migrated template."""
    run, worker, shared = _run_location(request, tmp_path_factory)
    if POSTGRES_SERVER_URL:
        url = databases.postgres_copy(POSTGRES_SERVER_URL, shared, run, worker)
        yield url
        databases.postgres_drop(POSTGRES_SERVER_URL, url)
    else:
        yield databases.sqlite_copy(shared, tmp_path_factory.mktemp("db") / "pressroom.db")


@pytest.fixture(scope="session")
def fresh_databases(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str], str]]:
    """Makes more migrated databases of this process's own (a test module that starts a server
    on a database nothing else touches): `fresh_databases(name)` is the URL of a new one."""
    run, worker, shared = _run_location(request, tmp_path_factory)
    made: list[str] = []

    def make(name: str) -> str:
        if POSTGRES_SERVER_URL:
            url = databases.postgres_copy(POSTGRES_SERVER_URL, shared, run, f"{worker}_{name}")
            made.append(url)
            return url
        return databases.sqlite_copy(shared, tmp_path_factory.mktemp(name) / "pressroom.db")

    yield make
    for url in made:
        databases.postgres_drop(POSTGRES_SERVER_URL or "", url)


@pytest.fixture
def is_postgres(database_url: str) -> bool:
    return database_url.startswith("postgresql")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def settings(database_url: str, data_dir: Path) -> Settings:
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        secret_key="BavhibUOnsFgB3EjUUux2oLhBctTeRpr9Av6xaRSzTE",  # tests.factories.SERVER_KEY
        redis_url=None,
    )


@pytest.fixture
async def runtime(settings: Settings) -> AsyncIterator[Runtime]:
    runtime = Runtime.build(settings)
    yield runtime
    await runtime.close()


@pytest.fixture
def app(runtime: Runtime) -> FastAPI:
    return create_app(runtime=runtime)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


@pytest.fixture
async def tenant(runtime: Runtime) -> Tenant:
    """A fresh organization with an owner holding an all-scope key."""
    return await make_tenant(runtime)


@pytest.fixture
async def other_tenant(runtime: Runtime) -> Tenant:
    return await make_tenant(runtime, name=f"Other {uuid.uuid4().hex[:6]}")


@pytest.fixture
def test_app(runtime: Runtime) -> FastAPI:
    """The application plus the test-only routes of tests/support_routes.py."""
    from tests.support_routes import router

    application = create_app(runtime=runtime)
    application.include_router(router)
    return application


@pytest.fixture
async def test_client(test_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=test_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client
