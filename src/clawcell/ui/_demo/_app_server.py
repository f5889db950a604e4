"""The MCP server of `clawcell serve --demo`: one tool with an MCP App view (needs `[mcp]`).

`show_counter` declares `ui://demo/counter.html`, a small MCP App written against the
extension's postMessage protocol by hand (no SDK in the page): it initialises with the host,
shows the tool's input and result, calls `increment` (which the demo's configuration makes
ask for approval) and sends a message to the chat. Run over stdio:
`python -m clawcell.ui._demo._app_server`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

__all__ = ["VIEW_URI", "server"]

VIEW_URI: Final = "ui://demo/counter.html"
_MIME: Final = "text/html;profile=mcp-app"
_ASSETS: Final = Path(__file__).parents[1] / "widget_assets"
_VIEW: Final = (_ASSETS / "demo-counter-app.html").read_text("utf-8")
_TOOLS: Final = [
    types.Tool(
        name="show_counter",
        description="Show the counter app.",
        input_schema={"type": "object", "properties": {"start": {"type": "integer"}}},
        _meta={"ui": {"resourceUri": VIEW_URI}},
    ),
    types.Tool(
        name="increment",
        description="Add `by` to the counter.",
        input_schema={"type": "object", "properties": {"by": {"type": "integer"}}},
    ),
]
_count = [0]


async def _list_tools(
    _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_TOOLS)


async def _call_tool(
    _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "increment":
        _count[0] += int(arguments.get("by", 1))
    else:
        _count[0] = int(arguments.get("start", 0))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"count {_count[0]}")],
        structured_content={"count": _count[0]},
    )


async def _list_resources(
    _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    view = types.Resource(uri=VIEW_URI, name="counter", mime_type=_MIME)
    return types.ListResourcesResult(resources=[view])


async def _read_resource(
    _ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    if params.uri != VIEW_URI:
        raise ValueError(f"no resource {params.uri!r}; the demo server has {VIEW_URI!r}")
    contents = types.TextResourceContents(uri=VIEW_URI, text=_VIEW, mime_type=_MIME)
    return types.ReadResourceResult(contents=[contents])


server: Server[Any] = Server(
    "clawcell-demo",
    on_list_tools=_list_tools,
    on_call_tool=_call_tool,
    on_list_resources=_list_resources,
    on_read_resource=_read_resource,
)


async def _serve() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve)
