"""A test MCP server written with the SDK: results with `_meta`, `isError`, resources, prompts,
awkward tool names, a large schema, and tools that crash or hang.

Run over stdio: `python -m tests.mcp.servers.kitchen`; over streamable HTTP on loopback:
`python -m tests.mcp.servers.kitchen --http PORT`.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

ECHO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"value": {"type": "string", "description": "Anything."}},
}
INVOICES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"currency": {"type": "string", "default": "EUR", "description": "ISO code."}},
    "required": ["currency"],
}
REQUIRED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "number"}, "c": {"type": "boolean"}},
    "required": ["a", "b"],
}


def _nested(depth: int) -> dict[str, Any]:
    if depth == 0:
        return {"type": "string"}
    return {"type": "object", "properties": {"k": _nested(depth - 1)}, "required": ["k"]}


DEEP = _nested(10)
LARGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "mode": {"type": "string", "enum": ["fast", "slow", 3]},
        "level": {"type": "integer", "enum": [1, 2, 2.5, "x"]},
        "nothing": {"type": "integer", "enum": ["a"]},
        "values": {"type": "array", "items": {"type": ["string", "number"]}},
        "flags": {"type": "array", "items": {"type": ["boolean", "null"]}},
        "names": {"type": "array", "items": {"type": "string", "nullable": True}},
        "colors": {"type": "array", "items": {"type": "array", "items": {"enum": ["red", "blue"]}}},
        "rows": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "required": ["id"],
            },
        },
        "closed": {
            "type": "object",
            "properties": {"x": {"type": "number"}},
            "additionalProperties": False,
        },
        "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        "never": {"type": "object", "additionalProperties": False},
        "patterned": {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        "either": {"oneOf": [{"type": "string"}, {"type": "number"}]},
        "odd-key": {"type": "string", "description": "Needs */ quotes."},
        "limit": {"type": "integer", "default": 10, "description": "Page size."},
        "deep": DEEP,
    },
    "required": ["mode", "limit"],
}

TOOLS: list[types.Tool] = [
    types.Tool(
        name="structured_result",
        description="Returns blocks with annotations and _meta.\nSecond line.",
        input_schema={"type": "object"},
    ),
    types.Tool(
        name="resolved_failure", description="Fails softly.", input_schema={"type": "object"}
    ),
    types.Tool(name="echo", description="Echo the input back.", input_schema=ECHO_SCHEMA),
    types.Tool(name="delete", description="Echo.", input_schema=ECHO_SCHEMA),
    types.Tool(name="enum", description="Echo.", input_schema=ECHO_SCHEMA),
    types.Tool(name="prototype", description="Echo.", input_schema=ECHO_SCHEMA),
    types.Tool(name="9patch", description="Echo.", input_schema=ECHO_SCHEMA),
    types.Tool(name="read-file", description="Echo.", input_schema=ECHO_SCHEMA),
    types.Tool(
        name="list_invoices", description="List overdue invoices.", input_schema=INVOICES_SCHEMA
    ),
    types.Tool(
        name="listInvoices", description="List overdue invoices too.", input_schema=INVOICES_SCHEMA
    ),
    types.Tool(name="delete_invoices", description="Delete invoices.", input_schema=ECHO_SCHEMA),
    types.Tool(
        name="needs_args", description="Echo with required a, b.", input_schema=REQUIRED_SCHEMA
    ),
    types.Tool(name="large_schema", description="A large schema.", input_schema=LARGE_SCHEMA),
    types.Tool(
        name="crash", description="Exits the process mid-call.", input_schema={"type": "object"}
    ),
    types.Tool(name="hang", description="Never answers.", input_schema={"type": "object"}),
]


async def list_tools(
    _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    name, arguments = params.name, params.arguments or {}
    if name == "structured_result":
        block = types.TextContent(
            type="text",
            text="ok",
            annotations=types.Annotations(audience=["user"], priority=0.5),
            _meta={"blockOnly": "kept"},
        )
        return types.CallToolResult(
            content=[block], structured_content={"answer": 42}, _meta={"topLevel": "hidden"}
        )
    if name == "resolved_failure":
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="recoverable failure")],
            structured_content={"retryable": True},
            is_error=True,
        )
    if name == "crash":
        os._exit(3)
    if name == "hang":
        await anyio.sleep_forever()
    return types.CallToolResult(
        content=[], structured_content={"toolName": name, "input": arguments}
    )


async def list_resources(
    _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    memo = types.Resource(
        uri="memo://one",
        name="memo",
        annotations=types.Annotations(audience=["assistant"]),
        _meta={"resourceOnly": "preserved"},
    )
    return types.ListResourcesResult(resources=[memo], next_cursor="resources-next", _meta={"x": 1})


async def read_resource(
    _ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    contents = types.TextResourceContents(uri=params.uri, text="hello memo", mime_type="text/plain")
    return types.ReadResourceResult(contents=[contents], _meta={"x": 1})


async def list_prompts(
    _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    brief = types.Prompt(name="brief", description="A short briefing")
    return types.ListPromptsResult(prompts=[brief], next_cursor="prompts-next")


async def get_prompt(
    _ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    topic = (params.arguments or {}).get("topic", "everything")
    message = types.PromptMessage(
        role="user", content=types.TextContent(type="text", text=f"Brief me on {topic}")
    )
    return types.GetPromptResult(
        description="A short briefing", messages=[message], _meta={"hidden": True}
    )


server: Server[Any] = Server(
    "kitchen",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_read_resource=read_resource,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
)


async def serve_stdio() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http() -> None:
    """Bind an ephemeral loopback port, print it, then serve streamable HTTP on it."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    if sys.argv[1:] == ["--http"]:
        serve_http()
    else:
        anyio.run(serve_stdio)
