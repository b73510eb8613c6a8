"""Contract fuzzing: every operation of the live /openapi.json, driven by schemathesis
against a real server process, must answer without a 5xx and exactly as documented
(status codes, content types, bodies, headers)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
from schemathesis.specs.openapi.checks import positive_data_acceptance

from pressroom.config import Settings
from pressroom.runtime import Runtime
from tests import servers
from tests.factories import SERVER_KEY
from tests.factories import Tenant
from tests.factories import make_tenant
from tests.media import factories as media

EXAMPLES = int(os.environ.get("PRESSROOM_FUZZ_EXAMPLES", "25"))

# uploadMedia accepts only real media, which no schema can describe: its document names the part
# types (`encoding.contentType`), and each is generated as a real, decodable file of that type.
for _media_type, _make in {
    "image/jpeg": media.jpeg_bytes,
    "image/png": media.png_bytes,
    "image/webp": media.webp_bytes,
    "image/gif": media.gif_bytes,
    "video/mp4": media.mp4_bytes,
    "video/quicktime": media.mov_bytes,
    "video/webm": media.webm_bytes,
}.items():
    schemathesis.openapi.media_type(_media_type, st.just(_make()))


async def _tenants(database_url: str, data_dir: Path) -> tuple[Tenant, Tenant]:
    runtime = Runtime.build(
        Settings(database_url=database_url, data_dir=data_dir, secret_key=SERVER_KEY)
    )
    try:
        return await make_tenant(runtime, name="Fuzz A"), await make_tenant(runtime, name="Fuzz B")
    finally:
        await runtime.close()


@pytest.fixture(scope="module")
def live_server(
    database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Tenant, Tenant]]:
    data_dir = tmp_path_factory.mktemp("fuzz")
    tenant, other = asyncio.run(_tenants(database_url, data_dir))
    port = servers.free_port()
    env = {
        **os.environ,
        "PRESSROOM_DATABASE_URL": database_url,
        "PRESSROOM_DATA_DIR": str(data_dir),
        "PRESSROOM_SECRET_KEY": SERVER_KEY,
        "PRESSROOM_RATE_LIMIT": "1000000/60",
        "PRESSROOM_AUTH_FAILURE_LIMIT": "1000000/60",
        "PRESSROOM_LOG_LEVEL": "WARNING",
        # An X app, so startChannelConnection for x answers its 201 (no request is sent).
        "PRESSROOM_X_CLIENT_ID": "fuzz-x-client",
    }
    logs = tmp_path_factory.mktemp("fuzz-logs")
    process = servers.start("api", ["serve", "--no-workers", "--port", str(port)], env, logs)
    base = f"http://127.0.0.1:{port}"
    try:
        servers.wait_until("the API", servers.healthy(base), [process])
        yield base, tenant, other
    finally:
        process.stop()
    stderr = process.output()
    # No request may have crashed the server or been logged as an error (an unhandled one, or
    # a failed request whose audit entry could not be written).
    assert "unhandled error" not in stderr, stderr[-3000:]
    errors = [line for line in stderr.splitlines() if '"level": "ERROR"' in line]
    assert not errors, errors[0][:3000]


def _document() -> dict[str, object]:
    """The application's OpenAPI document (static: no database is touched)."""
    import tempfile

    from pressroom.app import create_app

    app = create_app(Settings(data_dir=Path(tempfile.mkdtemp()), secret_key=SERVER_KEY))
    return app.openapi()


DOCUMENT = _document()
schema = schemathesis.openapi.from_dict(DOCUMENT)


def test_the_server_serves_the_document_being_fuzzed(live_server: tuple[str, Tenant, Tenant]):
    base, _, _ = live_server
    assert httpx.get(f"{base}/openapi.json", timeout=10).json() == DOCUMENT


def _prepare(case: schemathesis.Case) -> None:
    # A cursor is an opaque token the server signs; no schema can describe a valid one, and
    # a random string is rightly a 400 (tests/kit/test_pagination.py covers tampering).
    if case.query:
        case.query.pop("cursor", None)
    # Starting a Mastodon connection registers Pressroom on the named instance: a generated
    # instance could be a real host. Point it at a name the server refuses to contact, so no
    # test sends traffic beyond loopback (the rest of the body is still generated).
    if (
        case.operation.definition.raw.get("operationId") == "startChannelConnection"
        and isinstance(case.body, dict)
        and case.body.get("instance") is not None
    ):
        case.body["instance"] = "https://mastodon.localhost"


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_conforms_to_the_document(
    case: schemathesis.Case, live_server: tuple[str, Tenant, Tenant]
) -> None:
    base, tenant, _ = live_server
    _prepare(case)
    # Valid-by-schema bodies may still break rules no schema can state (an unknown or foreign
    # channelId, a past scheduledAt), which the contract requires to be 400: so the check that
    # every schema-valid request succeeds does not apply. Every other check does.
    case.call_and_validate(
        base_url=base, headers=tenant.headers, excluded_checks=[positive_data_acceptance]
    )


# Hostile variants of generated requests: fewer examples, each sent four ways.
HOSTILE_EXAMPLES = max(1, EXAMPLES // 5)


def _with_nul(value: Any) -> Any:
    """Every string of a JSON value with a NUL character inside it."""
    if isinstance(value, str):
        return value[:1] + "\x00" + value[1:]
    if isinstance(value, dict):
        return {key: _with_nul(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_nul(item) for item in value]
    return value


@pytest.fixture(scope="module")
def raw_client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


def _send(client: httpx.Client, request: dict[str, Any], **changes: Any) -> httpx.Response:
    """The generated request (`as_transport_kwargs`), with `changes`, sent as it is: httpx
    keeps repeated headers and parameters that a mapping would merge."""
    options = {**request, **changes}
    body: dict[str, Any] = {}
    if "json" in options:
        body["json"] = options["json"]
    elif isinstance(options.get("data"), (str, bytes)):
        body["content"] = options["data"]
    return client.request(
        options["method"],
        options["url"],
        params=options.get("params"),
        headers=options["headers"],
        **body,
    )


@schema.parametrize()
@settings(
    max_examples=HOSTILE_EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_hostile_variants_of_every_operation_are_refused_without_a_5xx(
    case: schemathesis.Case, live_server: tuple[str, Tenant, Tenant], raw_client: httpx.Client
) -> None:
    """Two Authorization headers, two credentials in one, every query parameter repeated,
    and a NUL character in every string of the path, query and JSON body."""
    base, tenant, _ = live_server
    _prepare(case)
    if (
        case.operation.definition.raw.get("requestBody", {})
        .get("content", {})
        .get("multipart/form-data")
    ):
        case.body = None  # the files are not the point here; auth and query come first
    request = case.as_transport_kwargs(base_url=base, headers=tenant.headers)
    # Latin-1 bytes, as requests would send the generated values.
    plain = [
        (name, value.encode("latin-1", "replace") if isinstance(value, str) else value)
        for name, value in request["headers"].items()
    ]
    others = [(name, value) for name, value in plain if name.lower() != "authorization"]
    key = tenant.headers["Authorization"]
    protected = case.path.startswith("/api/v1")
    sent: dict[str, httpx.Response] = {
        "two Authorization headers": _send(
            raw_client,
            request,
            headers=[*others, ("Authorization", key), ("Authorization", "Bearer prk_x")],
        ),
        "two credentials in one header": _send(
            raw_client, request, headers=[*others, ("Authorization", f"{key}, Bearer prk_x")]
        ),
        "every query parameter repeated": _send(
            raw_client,
            request,
            headers=plain,
            params=[pair for pair in (request.get("params") or {}).items() for _ in range(2)]
            or [("pageSize", "1"), ("pageSize", "2")],
        ),
    }
    case.path_parameters = _with_nul(case.path_parameters)
    case.query = _with_nul(case.query)
    case.body = _with_nul(case.body)
    with_nul = case.as_transport_kwargs(base_url=base, headers=tenant.headers)
    sent["NUL characters everywhere"] = _send(
        raw_client, with_nul, headers=plain, url=with_nul["url"].replace("\x00", "%00")
    )
    for label, response in sent.items():
        assert response.status_code < 500, (label, response.status_code, response.text[:500])
        if protected and "Authorization" in label:
            assert response.status_code == 401, (label, response.text[:500])
