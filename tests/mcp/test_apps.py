"""MCP Apps in the bridge: a tool with a `ui://` view opens it for a listening host."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from clawcell import CodeMode, Limits
from clawcell.catalog import ToolCallEvent
from clawcell.mcp import McpAppView, StdioServer, mcp_app_sink
from tests.mcp._helpers import ROOT, value


def apps(**policy: Any) -> StdioServer:
    """The MCP Apps test server over stdio."""
    return StdioServer(
        command=sys.executable, args=["-m", "tests.mcp.servers.apps"], cwd=str(ROOT), **policy
    )


def _run(code: str, *, listen: bool) -> tuple[dict[str, Any], list[McpAppView], list[Any]]:
    views: list[McpAppView] = []
    events: list[ToolCallEvent] = []

    async def sink(view: McpAppView) -> None:
        views.append(view)

    async def main() -> dict[str, Any]:
        if listen:
            mcp_app_sink.set(sink)
        async with CodeMode(
            mcp_servers={"apps": apps()},
            limits=Limits(timeout_ms=20_000),
            after_tool_call=events.append,
        ) as mode:
            return await mode.exec(code)

    envelope = asyncio.run(main())
    return envelope, views, events


def test_a_tool_with_a_ui_resource_opens_its_view_for_a_listening_host() -> None:
    envelope, views, events = _run("return await MCP.apps.showCounter({ start: 5 });", listen=True)
    assert value(envelope)["structuredContent"] == {"count": 5}
    [view] = views
    assert view.server_name == "apps" and view.tool_name == "show_counter"
    assert view.resource_uri == "ui://counter/app.html" and "Counter app" in view.html
    assert view.arguments == {"start": 5} and view.result["structuredContent"] == {"count": 5}
    assert view.tools == {
        "increment": "MCP.apps.increment",
        "show_counter": "MCP.apps.showCounter",
    }
    [event] = events
    preview = event.result.details["mcpAppPreview"]
    assert preview["mcpApp"] == {
        "viewId": view.view_id,
        "serverName": "apps",
        "toolName": "show_counter",
        "uiResourceUri": "ui://counter/app.html",
        "toolCallId": view.tool_call_id,
    }


def test_without_a_listening_host_no_view_is_read_and_the_result_is_unchanged() -> None:
    envelope, views, events = _run("return await MCP.apps.showCounter({ start: 2 });", listen=False)
    assert value(envelope)["structuredContent"] == {"count": 2}
    assert views == [] and events == []


def test_a_tool_without_a_view_opens_nothing() -> None:
    envelope, views, _ = _run("return await MCP.apps.increment({ by: 3 });", listen=True)
    assert value(envelope)["structuredContent"] == {"count": 3}
    assert views == []
