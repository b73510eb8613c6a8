"""The MCP server against a live `pressroom serve`, through the SDK's own client, over both
transports: streamable HTTP at /mcp and stdio (`pressroom mcp --url`)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
from sqlalchemy import func
from sqlalchemy import select

from pressroom.db import unit_of_work
from pressroom.posts.models import Post
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import make_tenant
from tests.media.factories import png_bytes

from .conftest import TRANSPORTS
from .conftest import Live
from .conftest import connect
from .conftest import start_live

pytestmark = pytest.mark.slow


def answer(result: types.CallToolResult) -> Any:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return json.loads(content.text)


async def posts_of(runtime: Runtime, organization_id: uuid.UUID) -> int:
    async with unit_of_work(runtime.sessions) as session:
        count = await session.scalar(
            select(func.count()).select_from(Post).where(Post.organization_id == organization_id)
        )
    return int(count or 0)


async def openapi(live: Live) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        document: dict[str, Any] = (await http.get(f"{live.base_url}/openapi.json")).json()
    return document


def draft(channel: uuid.UUID) -> dict[str, Any]:
    return {"body": {"text": "Launch day", "targets": [{"channelId": str(channel)}]}}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_tools_come_from_the_openapi_document(live: Live, runtime: Runtime, transport: str):
    tenant = await make_tenant(runtime)
    document = await openapi(live)
    create = document["paths"]["/api/v1/posts"]["post"]
    async with connect(live, transport, tenant.key) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert {"getTenant", "listChannels", "getPost", "createPost", "uploadMedia"} <= set(tools)
    assert {"getAnalytics", "listWebhookDeliveries", "replayWebhookDelivery"} <= set(tools)
    assert tools["createPost"].description.startswith(create["summary"])
    schema = tools["createPost"].input_schema
    assert schema["properties"]["body"]["$ref"] == "#/$defs/PostCreate"
    assert schema["$defs"]["PostCreate"]["properties"].keys() == (
        document["components"]["schemas"]["PostCreate"]["properties"].keys()
    )
    assert "confirmationToken" in schema["properties"]
    assert tools["getPost"].input_schema["required"] == ["postId"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_reads_the_tenant(live: Live, runtime: Runtime, transport: str):
    tenant = await make_tenant(runtime, name="Agents Inc")
    async with connect(live, transport, tenant.key) as client:
        result = await client.call_tool("getTenant", {})
    assert not result.is_error
    assert answer(result)["id"] == str(tenant.organization_id)
    assert answer(result)["name"] == "Agents Inc"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_post_is_created_only_once_after_confirmation(
    live: Live, runtime: Runtime, transport: str
):
    tenant = await make_tenant(runtime)
    channel = await connect_channel(runtime, tenant.organization_id)
    async with connect(live, transport, tenant.key) as client:
        preview = await client.call_tool("createPost", draft(channel))
        assert not preview.is_error
        previewed = answer(preview)
        assert previewed["confirmationRequired"] is True
        effect = "Creates a draft post with 1 target (nothing is published)."
        assert previewed["preview"]["effect"] == effect
        assert await posts_of(runtime, tenant.organization_id) == 0
        token = previewed["confirmationToken"]
        first = await client.call_tool("createPost", {**draft(channel), "confirmationToken": token})
        # An agent that did not see the answer retries the confirmation: nothing new is made.
        again = await client.call_tool("createPost", {**draft(channel), "confirmationToken": token})
    assert not first.is_error and not again.is_error
    assert answer(first)["id"] == answer(again)["id"]
    assert answer(first)["text"] == "Launch day"
    assert await posts_of(runtime, tenant.organization_id) == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_token_confirms_only_the_call_it_was_issued_for(
    live: Live, runtime: Runtime, transport: str
):
    tenant = await make_tenant(runtime)
    other = await make_tenant(runtime)
    channel = await connect_channel(runtime, tenant.organization_id)
    async with connect(live, transport, tenant.key) as client:
        token = answer(await client.call_tool("createPost", draft(channel)))["confirmationToken"]
        changed = draft(channel)
        changed["body"]["text"] = "Something else entirely"
        refused = await client.call_tool("createPost", {**changed, "confirmationToken": token})
    assert refused.is_error
    assert "does not match this call" in answer(refused)["error"]
    async with connect(live, transport, other.key) as client:
        stolen = await client.call_tool(
            "createPost", {**draft(channel), "confirmationToken": token}
        )
    assert stolen.is_error
    assert await posts_of(runtime, tenant.organization_id) == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_preflight_creates_nothing(live: Live, runtime: Runtime, transport: str):
    tenant = await make_tenant(runtime)
    channel = await connect_channel(runtime, tenant.organization_id)
    async with connect(live, transport, tenant.key) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        document = await openapi(live)
        preflight = document["paths"].get("/api/v1/posts/preflight", {}).get("post")
        if preflight is None:
            pytest.skip("the API has no preflight operation yet (POST /api/v1/posts/preflight)")
        assert preflight["operationId"] in tools
        result = await client.call_tool(preflight["operationId"], draft(channel))
        preview = answer(await client.call_tool("createPost", draft(channel)))
    assert not result.is_error, answer(result)
    assert preview["preview"]["preflight"] == answer(result)
    assert await posts_of(runtime, tenant.organization_id) == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_read_only_key_is_refused_a_write(live: Live, runtime: Runtime, transport: str):
    owner = await make_tenant(runtime)
    reader = await make_tenant(runtime, scopes=["workspace:read", "posts:read", "channels:read"])
    channel = await connect_channel(runtime, reader.organization_id)
    async with connect(live, transport, reader.key) as client:
        token = answer(await client.call_tool("createPost", draft(channel)))["confirmationToken"]
        result = await client.call_tool(
            "createPost", {**draft(channel), "confirmationToken": token}
        )
    assert result.is_error
    problem = answer(result)
    assert problem["status"] == 403
    assert "posts:write" in json.dumps(problem)
    assert await posts_of(runtime, reader.organization_id) == 0
    assert await posts_of(runtime, owner.organization_id) == 0


@pytest.fixture(scope="module")
def read_only_live(database_url: str, tmp_path_factory: pytest.TempPathFactory):
    server = start_live(
        database_url, tmp_path_factory.mktemp("mcp-read-only"), mcp_read_only="true"
    )
    yield server
    server.process.stop()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_read_only_mode_offers_and_runs_no_write(
    live: Live, read_only_live: Live, runtime: Runtime, transport: str
):
    tenant = await make_tenant(runtime)
    channel = await connect_channel(runtime, tenant.organization_id)
    # Over stdio the setting is the `pressroom mcp` process's own; over HTTP, the service's.
    server = read_only_live if transport == "http" else live
    async with connect(server, transport, tenant.key, mcp_read_only="true") as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        refused = await client.call_tool("createPost", draft(channel))
        tenant_read = await client.call_tool("getTenant", {})
    assert "getTenant" in tools
    assert tools.isdisjoint({"createPost", "updatePost", "deletePost", "uploadMedia"})
    assert refused.is_error
    assert "read-only" in answer(refused)["error"]
    assert not tenant_read.is_error
    assert await posts_of(runtime, tenant.organization_id) == 0


async def test_media_comes_only_from_allowed_directories(
    live: Live, runtime: Runtime, tmp_path: Path
):
    tenant = await make_tenant(runtime)
    allowed = live.media_dir / f"{uuid.uuid4().hex}.png"
    allowed.write_bytes(png_bytes())
    outside = tmp_path / "secret.png"
    outside.write_bytes(png_bytes())
    async with connect(live, "http", tenant.key) as client:
        refused = await client.call_tool("uploadMedia", {"path": str(outside)})
        escaped = await client.call_tool(
            "uploadMedia", {"path": str(live.media_dir / ".." / outside.name)}
        )
        no_urls = await client.call_tool("uploadMedia", {"url": "https://example.com/a.png"})
        preview = answer(await client.call_tool("uploadMedia", {"path": str(allowed)}))
        arguments = {"path": str(allowed), "confirmationToken": preview["confirmationToken"]}
        uploaded = await client.call_tool("uploadMedia", arguments)
    assert refused.is_error and "outside the directories" in answer(refused)["error"]
    assert escaped.is_error
    assert no_urls.is_error and "URLs are off" in answer(no_urls)["error"]
    assert preview["preview"]["bytes"] == len(png_bytes())
    assert not uploaded.is_error, answer(uploaded)
    (item,) = answer(uploaded)["items"]
    assert item["filename"] == allowed.name


async def test_the_http_transport_needs_an_api_key(live: Live):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx.AsyncClient(base_url=live.base_url) as http:
        missing = await http.post("/mcp", json=ping)
        wrong = await http.post(
            "/mcp", json=ping, headers={"Authorization": "Bearer prk_not_a_key"}
        )
    assert missing.status_code == 401
    assert missing.headers["content-type"] == "application/problem+json"
    assert wrong.status_code == 401
