"""Test fixtures: a real database (SQLite, or PostgreSQL when PRESSROOM_TEST_DATABASE_URL
is set), built by running the migrations, and the application over that database."""

from __future__ import annotations

import asyncio
import os
import secrets
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from pressroom.app import create_app
from pressroom.config import Settings
from pressroom.db import migrate
from pressroom.runtime import Runtime
from tests.factories import Tenant, make_tenant

POSTGRES_SERVER_URL = os.environ.get("PRESSROOM_TEST_DATABASE_URL")

# A developer's proxy never carries test traffic (provider calls honour HTTPS_PROXY and vet a
# proxied destination by resolving it): tests that want a proxy set one on loopback.
for _variable in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"):
    os.environ.pop(_variable, None)
    os.environ.pop(_variable.lower(), None)


def _pg_admin(url: str) -> tuple[str, str]:
    """(server URL without database, database name of the given URL)."""
    base, _, name = url.rpartition("/")
    return base, name


async def _pg_execute(server_url: str, database: str, statement: str) -> None:
    import asyncpg

    dsn = server_url.replace("postgresql+asyncpg://", "postgresql://") + "/" + database
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh database for this test session, schema built by the migrations."""
    if POSTGRES_SERVER_URL:
        server, admin_db = _pg_admin(POSTGRES_SERVER_URL)
        name = f"pressroom_test_{secrets.token_hex(4)}"
        asyncio.run(_pg_execute(server, admin_db, f'CREATE DATABASE "{name}"'))
        url = f"{server}/{name}"
        migrate(url)
        yield url
        asyncio.run(_pg_execute(server, admin_db, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    else:
        path = tmp_path_factory.mktemp("db") / "pressroom.db"
        url = f"sqlite:///{path}"
        migrate(url)
        yield url


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
