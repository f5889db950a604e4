"""`CodeModeServer`: one `CodeMode` offered to any MCP client as the tools `exec` and `wait`.

This sits above `CodeMode` (it is a client of it, like a model API loop): MCP clients such
as Claude Desktop or Cursor list two tools whose descriptions are the generated `exec`
description (with the quick index and the state of the configured MCP servers) and the
`wait` description, and every call is answered with the envelope rendered as the model reads
it (`clawcell.render`: compact JSON, wrapped as untrusted content when MCP content is in it).
A failed cell or a rejected call is a tool result with `isError: true`, never a protocol
error, so the model sees the message.

All clients of one server process share its `CodeMode`: one session of the store, one set of
saved results, one set of parked cells.

Approvals: tools that need an approval will ask through MCP elicitation when the client
declares that capability; `approvals` holds the policy for clients that do not. Until
clawcell's approvals land, no tool asks, and the setting is only validated and kept.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, Literal

from ..errors import ClawcellError, ConfigurationError
from ._sdk import require_sdk

if TYPE_CHECKING:
    from .. import CodeMode

__all__ = ["ApprovalPolicy", "CodeModeServer"]

ApprovalPolicy = Literal["elicit", "allow", "deny"]
"""`elicit`: ask the user through the client when it can, refuse otherwise; `allow` / `deny`:
decide without asking."""

_POLICIES: Final = ("elicit", "allow", "deny")
INSTRUCTIONS: Final = (
    "clawcell runs JavaScript cells (code mode): call `exec` with a program that calls the "
    "listed tools and returns only what matters; continue a `waiting` result with `wait`."
)


class CodeModeServer:
    """An MCP server whose tools are the `exec` and `wait` of `mode`.

    Args:
        mode: The code mode runtime; the caller owns it (close it after serving).
        name: The server name announced to clients.
        approvals: What happens when a tool needs an approval (see the module docstring).

    Raises:
        McpError: The `mcp` SDK is not installed (`pip install 'clawcell[mcp]'`).
        ConfigurationError: `approvals` is not one of `elicit`, `allow`, `deny`.
    """

    def __init__(
        self, mode: CodeMode, *, name: str = "clawcell", approvals: ApprovalPolicy = "elicit"
    ) -> None:
        require_sdk()
        if approvals not in _POLICIES:
            raise ConfigurationError(
                f"`approvals` must be one of {', '.join(_POLICIES)}, got {approvals!r}."
            )
        self.mode = mode
        self.approvals: ApprovalPolicy = approvals
        self.sdk_server = _sdk_server(name, self._list_tools, self._call_tool)
        """The SDK's low-level `mcp.server.Server` (for transports clawcell does not wrap)."""

    async def tool_definitions(self) -> list[dict[str, Any]]:
        """`exec` and `wait` as MCP tool definitions (`name`, `description`, `inputSchema`).

        The configured MCP servers are connected first, so the `exec` description can name
        the ones that are unavailable.
        """
        await self.mode.mcp_status()
        return [
            {"name": d["name"], "description": d["description"], "inputSchema": d["input_schema"]}
            for d in self.mode.model_tools("anthropic")
        ]

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Answer one tool call: the text the model reads, and whether it is an error."""
        try:
            envelope = await self.mode.call_tool(name, arguments)
        except ClawcellError as exc:
            return exc.message, True
        return self.mode.render(envelope), envelope.get("status") == "failed"

    async def _list_tools(self, _ctx: Any, _params: Any) -> Any:
        import mcp_types as types

        tools = [
            types.Tool(name=d["name"], description=d["description"], input_schema=d["inputSchema"])
            for d in await self.tool_definitions()
        ]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(self, _ctx: Any, params: Any) -> Any:
        import mcp_types as types

        text, failed = await self.call(params.name, dict(params.arguments or {}))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=failed
        )

    async def serve_stdio(self) -> None:
        """Serve one client over this process's stdin and stdout until it disconnects."""
        from mcp.server.stdio import stdio_server

        server = self.sdk_server
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


Handler = Callable[[Any, Any], Awaitable[Any]]


def _sdk_server(name: str, list_tools: Handler, call_tool: Handler) -> Any:
    from importlib.metadata import version

    from mcp.server import Server

    return Server(
        name,
        version=version("clawcell"),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
