"""The MCP server's parts in one process: tools generated from the document, confirmation
tokens, the media policy, and the SDK's client against the server calling the application
through httpx's ASGI transport (the path the mounted /mcp takes)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
from fastapi import FastAPI
from mcp import Client

from pressroom.agents import confirmation
from pressroom.agents.api import Api
from pressroom.agents.media import MediaPolicy
from pressroom.agents.media import MediaRefused
from pressroom.agents.media import allowed_file
from pressroom.agents.server import AgentOptions
from pressroom.agents.server import PressroomAgent
from pressroom.agents.server import build_server
from pressroom.agents.tools import READS
from pressroom.agents.tools import WRITES
from pressroom.agents.tools import operations
from pressroom.runtime import Runtime
from tests.channels.factories import connect_channel
from tests.factories import Tenant


def answer(result: types.CallToolResult) -> Any:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return json.loads(content.text)


@pytest.fixture
async def http(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


def agent_for(app: FastAPI, http: httpx.AsyncClient, key: str, **options: Any) -> PressroomAgent:
    async def document() -> dict[str, Any]:
        return app.openapi()

    return PressroomAgent(document, lambda: Api(http, key), AgentOptions(**options))


def test_every_offered_operation_is_a_tool_described_by_the_document(app: FastAPI):
    document = app.openapi()
    found = operations(document)
    assert set(READS) | set(WRITES) <= set(found)
    for name, operation in found.items():
        spec = document["paths"][operation.path][operation.method.lower()]
        assert operation.description.startswith(spec["summary"]), name
        if spec.get("description"):
            assert spec["description"] in operation.description
        text = json.dumps(operation.input_schema)
        for ref in re.findall(r'"#/\$defs/([^"]+)"', text):
            assert ref in operation.input_schema["$defs"], (name, ref)
        assert "#/components/" not in text
        assert ("confirmationToken" in operation.input_schema["properties"]) == operation.write


def test_a_confirmation_token_is_bound_to_key_tool_arguments_and_time():
    arguments = {"body": {"text": "hi"}}
    token, expires = confirmation.issue("prk_a", "createPost", arguments, seconds=60, now=1000)
    assert expires == 1060
    assert confirmation.refusal("prk_a", "createPost", arguments, token, now=1059) is None
    assert "does not match" in str(
        confirmation.refusal("prk_b", "createPost", arguments, token, now=1000)
    )
    assert "does not match" in str(
        confirmation.refusal("prk_a", "updatePost", arguments, token, now=1000)
    )
    assert "does not match" in str(
        confirmation.refusal("prk_a", "createPost", {"body": {"text": "ho"}}, token, now=1000)
    )
    assert "expired" in str(confirmation.refusal("prk_a", "createPost", arguments, token, 1061))
    assert "not a confirmation token" in str(
        confirmation.refusal("prk_a", "createPost", arguments, "garbage", now=1000)
    )
    forged = token.rsplit(".", 1)[0] + ".AAAA"
    assert confirmation.refusal("prk_a", "createPost", arguments, forged, now=1000) is not None
    key = confirmation.idempotency_key(token)
    assert key == confirmation.idempotency_key(token)
    assert re.fullmatch(r"mcp-[0-9a-f]{48}", key)


def test_media_paths_are_resolved_before_they_are_checked(tmp_path: Path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (tmp_path / "private.png").write_bytes(b"x")
    (allowed / "link.png").symlink_to(tmp_path / "private.png")
    (allowed / "ok.png").write_bytes(b"x")
    policy = MediaPolicy.parse(f" {allowed} ,", urls=False)
    assert allowed_file(policy, str(allowed / "ok.png")) == (allowed / "ok.png").resolve()
    for escape in (allowed / "link.png", allowed / ".." / "private.png", allowed / "none.png"):
        with pytest.raises(MediaRefused):
            allowed_file(policy, str(escape))
    with pytest.raises(MediaRefused, match="lists no directory"):
        allowed_file(MediaPolicy.parse(None, urls=False), str(allowed / "ok.png"))


async def test_the_update_preview_shows_what_would_change(
    app: FastAPI, http: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
):
    channel = await connect_channel(runtime, tenant.organization_id)
    body = {"text": "Before", "targets": [{"channelId": str(channel)}]}
    created = await http.post("/api/v1/posts", json=body, headers=tenant.headers)
    post_id = created.json()["id"]
    arguments = {"postId": post_id, "body": {"text": "After"}}
    async with Client(build_server(agent_for(app, http, tenant.key)), cache=None) as client:
        preview = answer(await client.call_tool("updatePost", arguments))
        token = preview["confirmationToken"]
        unchanged = await http.get(f"/api/v1/posts/{post_id}", headers=tenant.headers)
        done = await client.call_tool("updatePost", {**arguments, "confirmationToken": token})
    assert preview["preview"]["changes"] == {"text": {"from": "Before", "to": "After"}}
    assert preview["preview"]["current"]["id"] == post_id
    assert unchanged.json()["text"] == "Before"
    assert answer(done)["text"] == "After"


async def test_resources_and_the_campaign_prompt(
    app: FastAPI, http: httpx.AsyncClient, tenant: Tenant
):
    async with Client(build_server(agent_for(app, http, tenant.key)), cache=None) as client:
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        providers = await client.read_resource("pressroom://providers")
        events = await client.read_resource("pressroom://events")
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        prompt = await client.get_prompt("schedule-campaign", {"goal": "Spring launch"})
    assert uris == {"pressroom://providers", "pressroom://events"}
    declared = json.loads(providers.contents[0].text)  # type: ignore[union-attr]
    assert {"sandbox", "bluesky", "x"} <= {p["id"] for p in declared}
    catalog = json.loads(events.contents[0].text)  # type: ignore[union-attr]
    assert "post.published.v1" in catalog["events"]
    assert "PostPublishedV1Event" in catalog["$defs"]
    assert prompts == {"schedule-campaign"}
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert "Spring launch" in text and "confirmationToken" in text


async def test_urls_are_fetched_only_from_public_destinations(
    app: FastAPI, http: httpx.AsyncClient, tenant: Tenant
):
    media = MediaPolicy((), urls=True)
    agent = agent_for(app, http, tenant.key, media=media)
    url = "http://127.0.0.1:9/launch.png"
    async with Client(build_server(agent), cache=None) as client:
        preview = answer(await client.call_tool("uploadMedia", {"url": url}))
        confirmed = {"url": url, "confirmationToken": preview["confirmationToken"]}
        refused = await client.call_tool("uploadMedia", confirmed)
    assert refused.is_error
    assert "not be a public destination" in answer(refused)["error"]
