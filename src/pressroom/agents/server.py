"""The MCP server's tools, resources and prompt, over whichever transport runs it.

Reads call the API at once. Writes take two calls: the first answers a preview (the preflight
of a new post, the object as it is now and what would change) and a confirmation token; the
second, with the same arguments and the token, acts under an Idempotency-Key derived from it.
With `PRESSROOM_MCP_READ_ONLY=true` write tools are neither listed nor run."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import mcp_types as types
from mcp.server import Server

from pressroom.agents import confirmation
from pressroom.agents.api import Answer
from pressroom.agents.api import Api
from pressroom.agents.api import MissingArgument
from pressroom.agents.media import MediaPolicy
from pressroom.agents.media import MediaRefused
from pressroom.agents.media import filename_of
from pressroom.agents.media import opened
from pressroom.agents.prompts import CAMPAIGN
from pressroom.agents.prompts import campaign_messages
from pressroom.agents.tools import CONFIRMATION
from pressroom.agents.tools import CURRENT_STATE
from pressroom.agents.tools import PREFLIGHT
from pressroom.agents.tools import Operation
from pressroom.agents.tools import describe
from pressroom.agents.tools import operations
from pressroom.agents.tools import with_definitions
from pressroom.config import Settings

UPLOAD = "uploadMedia"
PROVIDERS_URI = "pressroom://providers"
EVENTS_URI = "pressroom://events"
INSTRUCTIONS = (
    "Pressroom publishes posts to social networks. Read the tenant, channels and provider "
    "limits first; preflight a draft before creating it. Every write answers a preview and a "
    "confirmationToken first: show the preview, and call again with the token only when the "
    "person agrees."
)


@dataclass(frozen=True)
class AgentOptions:
    read_only: bool = False
    confirmation_seconds: int = 600
    media: MediaPolicy = field(default_factory=lambda: MediaPolicy((), False))


class ToolError(Exception):
    """Answered to the agent as a tool error (never a secret in it)."""


class PressroomAgent:
    """Tools over the API, for the caller `api()` returns."""

    def __init__(
        self,
        document: Callable[[], Awaitable[dict[str, Any]]],
        api: Callable[[], Api],
        options: AgentOptions,
    ) -> None:
        self._load_document = document
        self._document: dict[str, Any] | None = None
        self._operations: dict[str, Operation] | None = None
        self.api = api
        self.options = options

    async def document(self) -> dict[str, Any]:
        if self._document is None:
            self._document = await self._load_document()
        return self._document

    async def known(self) -> dict[str, Operation]:
        """Every operation the document offers as a tool (computed once)."""
        if self._operations is None:
            self._operations = operations(await self.document())
        return self._operations

    async def operations(self) -> dict[str, Operation]:
        offered = await self.known()
        if self.options.read_only:
            offered = {name: op for name, op in offered.items() if not op.write}
        return offered

    async def tools(self) -> list[types.Tool]:
        tools = [
            types.Tool(name=op.name, description=op.description, input_schema=op.input_schema)
            for op in (await self.operations()).values()
        ]
        if not self.options.read_only:
            tools.append(await self._upload_tool())
        return tools

    async def _upload_tool(self) -> types.Tool:
        spec = (await self.document())["paths"]["/api/v1/media"]["post"]
        sources = "Give `path` (a file under a directory the operator allows) or `url` (when "
        sources += "the operator allows fetching public URLs)."
        return types.Tool(
            name=UPLOAD,
            description=describe(spec, write=True) + "\n\n" + sources,
            input_schema={
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "A file on the server's host."},
                    "url": {"type": "string", "description": "An http(s) URL to fetch."},
                    "filename": {"type": "string", "description": "The name to upload as."},
                    CONFIRMATION: {"type": "string", "description": "From the preview."},
                },
            },
        )

    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        try:
            return await self._call(name, dict(arguments))
        except ToolError as error:
            return _result({"error": str(error)}, is_error=True)
        except MissingArgument as error:
            return _result({"error": f"`{error}` is required"}, is_error=True)
        except MediaRefused as error:
            return _result({"error": str(error)}, is_error=True)

    async def _call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        offered = await self.operations()
        known = await self.known()
        write = name == UPLOAD or (name in known and known[name].write)
        if write and self.options.read_only:
            raise ToolError("this MCP server is read-only (PRESSROOM_MCP_READ_ONLY)")
        if name != UPLOAD and name not in offered:
            raise ToolError(f"no tool named {name!r}")
        api = self.api()
        if not write:
            return _answered(await api.call(offered[name], arguments))
        token = arguments.pop(CONFIRMATION, None)
        if not token:
            return await self._preview(api, name, arguments, offered)
        reason = confirmation.refusal(api.key, name, arguments, str(token))
        if reason is not None:
            raise ToolError(f"the confirmation token {reason}")
        key = confirmation.idempotency_key(str(token))
        if name == UPLOAD:
            path, url = arguments.get("path"), arguments.get("url")
            async with opened(self.options.media, path, url) as content:
                filename = filename_of(path, url, arguments.get("filename"))
                return _answered(await api.upload(filename, content, key))
        return _answered(await api.call(offered[name], arguments, idempotency_key=key))

    async def _preview(
        self, api: Api, name: str, arguments: dict[str, Any], offered: dict[str, Operation]
    ) -> types.CallToolResult:
        preview: dict[str, Any] = {"tool": name, "arguments": arguments}
        if name == UPLOAD:
            if arguments.get("path") is not None:
                async with opened(self.options.media, arguments["path"], None) as content:
                    preview["bytes"] = content.seek(0, 2)
            elif arguments.get("url") is None:
                raise MediaRefused("give `path` or `url`")
            elif not self.options.media.urls:
                raise MediaRefused("uploads from URLs are off on this server")
        else:
            await self._describe_change(api, name, arguments, offered, preview)
        token, expires = confirmation.issue(
            api.key, name, arguments, seconds=self.options.confirmation_seconds
        )
        return _result(
            {
                "confirmationRequired": True,
                "preview": preview,
                CONFIRMATION: token,
                "expiresAt": expires,
                "next": f"Nothing was changed. To act, call {name} again with the same "
                f"arguments and `{CONFIRMATION}`.",
            }
        )

    async def _describe_change(
        self,
        api: Api,
        name: str,
        arguments: dict[str, Any],
        offered: dict[str, Operation],
        preview: dict[str, Any],
    ) -> None:
        operation = offered[name]
        preview["request"] = f"{operation.method} {operation.path}"
        preflight = self._preflight(offered)
        if name == "createPost":
            preview["effect"] = _creation(arguments.get("body"))
            if preflight is not None:
                preview["preflight"] = (await api.call(preflight, arguments)).body
        reader = offered.get(CURRENT_STATE.get(name, ""))
        if reader is None:
            return
        current = await api.call(reader, arguments)
        preview["current"] = current.body
        body = arguments.get("body")
        if current.ok and isinstance(current.body, dict) and isinstance(body, dict):
            preview["changes"] = {
                key: {"from": current.body.get(key), "to": value}
                for key, value in body.items()
                if current.body.get(key) != value
            }

    @staticmethod
    def _preflight(offered: dict[str, Operation]) -> Operation | None:
        for operation in offered.values():
            if (operation.method.lower(), operation.path) == PREFLIGHT:
                return operation
        return None

    async def resources(self) -> list[types.Resource]:
        return [
            types.Resource(
                name="providers",
                uri=PROVIDERS_URI,
                description="What each network accepts: text rules, media, options, limits.",
                mime_type="application/json",
            ),
            types.Resource(
                name="events",
                uri=EVENTS_URI,
                description="Every webhook event type with its body schema (the OpenAPI "
                "document's `webhooks`).",
                mime_type="application/json",
            ),
        ]

    async def read(self, uri: str) -> types.ReadResourceResult:
        if uri == PROVIDERS_URI:
            content: Any = await self._all_providers()
        elif uri == EVENTS_URI:
            document = await self.document()
            content = with_definitions(document, {"events": document.get("webhooks", {})})
        else:
            raise ToolError(f"no resource {uri!r}")
        text = json.dumps(content, ensure_ascii=False)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )

    async def _all_providers(self) -> list[Any]:
        api, items, params = self.api(), [], dict[str, str]()
        while True:
            answer = await api.get("/api/v1/providers", params=params)
            if not answer.ok:
                raise ToolError(f"listProviders answered {answer.status}: {answer.body}")
            items.extend(answer.body.get("items", []))
            cursor = answer.body.get("nextCursor")
            if not cursor:
                return items
            params = {"cursor": cursor}


def _creation(body: Any) -> str:
    """What creating this post would do, in one sentence."""
    if not isinstance(body, dict):
        return "Nothing: `body` is missing."
    targets = body.get("targets") or []
    count = f"{len(targets)} target{'s' if len(targets) != 1 else ''}"
    if body.get("publishNow"):
        return f"Creates a post with {count} and publishes it now."
    if body.get("scheduledAt"):
        return f"Creates a post with {count}, scheduled for {body['scheduledAt']}."
    return f"Creates a draft post with {count} (nothing is published)."


def _answered(answer: Answer) -> types.CallToolResult:
    return _result(answer.body, is_error=not answer.ok)


def _result(body: Any, *, is_error: bool = False) -> types.CallToolResult:
    text = json.dumps(body, ensure_ascii=False) if not isinstance(body, str) else body
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=body if isinstance(body, dict) else None,
        is_error=is_error,
    )


def build_server(agent: PressroomAgent) -> Server[Any]:
    """The MCP server of `agent`, for any transport."""

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await agent.tools())

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await agent.call(params.name, dict(params.arguments or {}))

    async def list_resources(_ctx: Any, _params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=await agent.resources())

    async def read_resource(
        _ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await agent.read(str(params.uri))

    async def list_prompts(_ctx: Any, _params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[CAMPAIGN])

    async def get_prompt(_ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        return campaign_messages(params.name, dict(params.arguments or {}))

    return Server(
        "pressroom",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def options_from(settings: Settings) -> AgentOptions:
    return AgentOptions(
        read_only=settings.mcp_read_only,
        confirmation_seconds=settings.mcp_confirmation_seconds,
        media=MediaPolicy.parse(settings.mcp_media_dirs, settings.mcp_media_urls),
    )
