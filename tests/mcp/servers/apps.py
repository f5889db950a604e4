"""A test MCP server with an MCP App, written with the SDK.

`show_counter` declares the view `ui://counter/app.html` (`_meta.ui.resourceUri`); the view
is a small hand-written MCP App: it initialises over `postMessage` (JSON-RPC), shows the
tool's input and result, calls `increment` on its server through the host, sends a message
to the chat and asks the host to open a link (`CLAWCELL_TEST_APP_VIEW`, when set, is served
instead: the hostile views of the Chromium tests). Run over stdio: `python -m
tests.mcp.servers.apps`.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

VIEW_URI = "ui://counter/app.html"
MIME = "text/html;profile=mcp-app"
VIEW = """<!doctype html><meta charset="utf-8">
<style>body{font:15px system-ui;margin:8px;color:#1d2430}button{margin-right:.4rem}</style>
<h3>Counter app</h3>
<p>state: <b id="state">not initialised</b> · theme: <span id="theme">?</span></p>
<p>input: <code id="input">?</code> · result: <code id="result">?</code></p>
<p><button id="inc">Increment</button><button id="say">Say hi</button>
<button id="link">Open docs</button></p><p>count: <b id="count">0</b></p>
<script>
let next = 1;
const waiting = new Map();
const request = (method, params) => new Promise((resolve, reject) => {
  const id = next++;
  waiting.set(id, { resolve, reject });
  parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
});
const notify = (method, params) => parent.postMessage({ jsonrpc: "2.0", method, params }, "*");
const show = (id, value) => { document.getElementById(id).textContent = value; };
window.addEventListener("message", (event) => {
  const m = event.data;
  if (!m || m.jsonrpc !== "2.0") return;
  if (m.id !== undefined && waiting.has(m.id)) {
    const w = waiting.get(m.id); waiting.delete(m.id);
    if (m.error) w.reject(new Error(m.error.message)); else w.resolve(m.result);
  } else if (m.method === "ui/notifications/tool-input") {
    show("input", JSON.stringify(m.params.arguments));
  } else if (m.method === "ui/notifications/tool-result") {
    show("result", JSON.stringify(m.params.structuredContent));
  }
});
(async () => {
  const init = await request("ui/initialize", {
    protocolVersion: "2026-01-26", appInfo: { name: "counter", version: "1" }, appCapabilities: {},
  });
  show("state", "initialised by " + init.hostInfo.name);
  show("theme", init.hostContext.theme);
  notify("ui/notifications/initialized", {});
  notify("ui/notifications/size-changed", { height: document.body.scrollHeight + 16 });
})();
document.getElementById("inc").onclick = async () => {
  try {
    const result = await request("tools/call", { name: "increment", arguments: { by: 1 } });
    show("count", String(result.structuredContent.count));
  } catch (error) { show("count", "error: " + error.message); }
};
document.getElementById("say").onclick = () =>
  request("ui/message", { role: "user", content: [{ type: "text", text: "hi from the app" }] });
document.getElementById("link").onclick = () =>
  request("ui/open-link", { url: "https://example.com/docs" });
</script>"""

TOOLS = [
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


async def list_tools(
    _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "increment":
        _count[0] += int(arguments.get("by", 1))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"count {_count[0]}")],
            structured_content={"count": _count[0]},
        )
    _count[0] = int(arguments.get("start", 0))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="the counter is shown")],
        structured_content={"count": _count[0]},
    )


async def list_resources(
    _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    view = types.Resource(uri=VIEW_URI, name="counter view", mime_type=MIME)
    return types.ListResourcesResult(resources=[view])


async def read_resource(
    _ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    if params.uri != VIEW_URI:
        raise ValueError(f"no resource {params.uri!r}")
    text = os.environ.get("CLAWCELL_TEST_APP_VIEW") or VIEW
    contents = types.TextResourceContents(uri=VIEW_URI, text=text, mime_type=MIME)
    return types.ReadResourceResult(contents=[contents])


server: Server[Any] = Server(
    "apps",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_read_resource=read_resource,
)


async def serve_stdio() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve_stdio)
