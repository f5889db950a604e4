"""MCP Apps, the bridge's half: a tool that declares a `ui://` view opens it when called.

The MCP Apps extension lets a server tool name an HTML view (`_meta.ui.resourceUri`). When a
cell calls such a tool and a host that can show views is listening (`mcp_app_sink`, set by
the Control UI for the turns it runs), the bridge reads the resource from the same server
after the call, hands the host an `McpAppView` (the HTML, the call's input and result, and
the callable names of the server's other tools, for the view's own `tools/call`), and shows
the call to the catalog's after hooks with `details.mcpAppPreview`, so the turn's reply
carries a canvas block with the view's `mcpApp` descriptor.

Without a listener nothing is read and nothing changes. A view that cannot be read (no
resource, not HTML, larger than `MAX_VIEW_BYTES`, the read failed) is logged and skipped:
the tool call itself has already succeeded and keeps its result.

Threat model: the view's HTML is the server's and hostile to the host; the bridge only
carries it. Where and how it is shown (a sandboxed frame on another origin) is the host's
business (`clawcell.ui`).
"""

from __future__ import annotations

import inspect
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import field
from typing import TYPE_CHECKING, Any, Final, cast

from .._lazy import value_class
from ..catalog import ToolCallEvent, ToolResult
from ..errors import ClawcellError

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ._connection import Connection
    from ._namespace import McpMethod, McpNamespace

__all__ = ["MAX_VIEW_BYTES", "McpAppView", "mcp_app_sink", "open_app_view"]

MAX_VIEW_BYTES: Final = 2 * 1024 * 1024
_log = logging.getLogger("clawcell.mcp")


@value_class
class McpAppView:
    """One opened MCP App view.

    Attributes:
        view_id: `ma_<hex>`, unique per call.
        tool_call_id: The call's id as the view sees it (`toolInfo.id`).
        server_name: The server, as configured.
        tool_name: The tool, as the server names it.
        resource_uri: The `ui://` resource the HTML came from.
        html: The view's HTML.
        arguments: The tool's input.
        result: The tool's result as the guest saw it (`{content, structuredContent?, isError}`).
        tools: The server's tools the view may call: MCP tool name → guest callable name.
    """

    view_id: str
    tool_call_id: str
    server_name: str
    tool_name: str
    resource_uri: str
    html: str
    arguments: Mapping[str, Any] = field(default_factory=dict[str, Any])
    result: Mapping[str, Any] = field(default_factory=dict[str, Any])
    tools: Mapping[str, str] = field(default_factory=dict[str, str])

    def preview(self) -> dict[str, Any]:
        """The canvas record (`details.mcpAppPreview`) that puts the view in the reply."""
        descriptor = {
            "viewId": self.view_id,
            "serverName": self.server_name,
            "toolName": self.tool_name,
            "uiResourceUri": self.resource_uri,
            "toolCallId": self.tool_call_id,
        }
        return {
            "kind": "canvas",
            "view": {"id": self.view_id},
            "presentation": {"target": "assistant_message", "title": self.tool_name},
            "mcpApp": descriptor,
        }


McpAppSink = Callable[[McpAppView], Awaitable[None]]
mcp_app_sink: ContextVar[McpAppSink | None] = ContextVar("clawcell_mcp_app_sink", default=None)
"""Where opened views go (a host that shows them); `None`: views are not opened."""


async def open_app_view(
    connection: Connection,
    method: McpMethod,
    *,
    namespace: McpNamespace,
    catalog: Catalog,
    arguments: Mapping[str, Any],
    result: Mapping[str, Any],
) -> None:
    """Read the view `method` declares and hand it to the listening host (if any)."""
    sink = mcp_app_sink.get()
    uri = method.ui_resource_uri
    if sink is None or uri is None:
        return
    html = await _read_html(connection, uri)
    if html is None:
        return
    tools = {
        m.mcp_tool: m.callable_name
        for m in namespace.methods.values()
        if m.server is method.server and m.operation == "tools/call"
    }
    view = McpAppView(
        view_id="ma_" + secrets.token_hex(12),
        tool_call_id="call_" + secrets.token_hex(8),
        server_name=method.server.server_name,
        tool_name=method.mcp_tool,
        resource_uri=uri,
        html=html,
        arguments=dict(arguments),
        result=dict(result),
        tools=tools,
    )
    await sink(view)
    event = ToolCallEvent(
        callable_name=method.callable_name,
        tool_name=method.mcp_tool,
        params=dict(arguments),
        result=ToolResult(details={"mcpAppPreview": view.preview()}),
    )
    for hook in catalog.after_hooks:  # observers only: a replacement result is ignored
        value = hook(event)
        if inspect.isawaitable(value):
            await value


async def _read_html(connection: Connection, uri: str) -> str | None:
    try:
        answer = await connection.request("resources/read", {"uri": uri})
    except ClawcellError as exc:
        _log.warning("MCP App view %s of server %r not read: %s", uri, connection.name, exc)
        return None
    contents = answer.data.get("contents")
    for item in cast(list[object], contents) if isinstance(contents, list) else []:
        if not isinstance(item, Mapping):
            continue
        content = cast(Mapping[str, Any], item)
        mime = str(content.get("mimeType") or "text/html").lower()
        text = content.get("text")
        if mime.startswith("text/html") and isinstance(text, str):
            if len(text.encode("utf-8", "replace")) > MAX_VIEW_BYTES:
                _log.warning("MCP App view %s is larger than %d bytes", uri, MAX_VIEW_BYTES)
                return None
            return text
    _log.warning("MCP App view %s of server %r has no HTML text", uri, connection.name)
    return None
