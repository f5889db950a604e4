"""clawcell's own views of MCP values, converted from SDK types at the edge (`from_mcp`).

The SDK's pydantic models never travel past `_connection.py`: listings become `McpTool` /
`McpListing`, results become `McpResult` (the wire JSON of the result, as a plain dict).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any, Literal, cast

from .._jsonvalue import is_model, model_json
from .._lazy import value_class

__all__ = ["McpListing", "McpResult", "McpTool", "Operation", "result_from_mcp", "tool_from_mcp"]

Operation = Literal["tools/call", "resources/list", "resources/read", "prompts/list", "prompts/get"]


@value_class
class McpTool:
    """One tool as listed by its server.

    Attributes:
        name: The MCP tool name, exactly as the server spells it.
        description: Its description (`""` when absent).
        input_schema: Its JSON Schema for arguments.
        ui_resource_uri: The MCP Apps view it declares.
    """

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=dict[str, Any])
    ui_resource_uri: str | None = None
    """The `ui://` view the tool declares (`_meta.ui.resourceUri`, MCP Apps), else `None`."""


@value_class
class McpListing:
    """What one server offers: its tools and whether it has resources and prompts."""

    server_name: str
    tools: tuple[McpTool, ...] = ()
    resources: bool = False
    prompts: bool = False


@value_class
class McpResult:
    """The JSON of one MCP result (`CallToolResult`, `ListResourcesResult`, …) as sent."""

    operation: Operation
    data: Mapping[str, Any]


def _wire(model: object) -> dict[str, Any]:
    if not is_model(model):
        raise TypeError(f"not an MCP SDK model: {type(model).__name__!r}")
    return cast("dict[str, Any]", model_json(model, by_alias=True, exclude_none=True))


def tool_from_mcp(tool: object) -> McpTool:
    """An SDK `Tool` as an `McpTool`."""
    data = _wire(tool)
    schema = data.get("inputSchema")
    return McpTool(
        name=str(data["name"]),
        description=str(data.get("description") or ""),
        input_schema=cast("dict[str, Any]", schema) if isinstance(schema, dict) else {},
        ui_resource_uri=_ui_resource_uri(data.get("_meta")),
    )


def _ui_resource_uri(meta: object) -> str | None:
    """`_meta.ui.resourceUri` (or the older flat `_meta["ui/resourceUri"]`) when it is a
    `ui://` URI of at most 2,048 characters."""
    if not isinstance(meta, dict):
        return None
    fields = cast("dict[str, Any]", meta)
    ui = fields.get("ui")
    uri = cast("dict[str, Any]", ui).get("resourceUri") if isinstance(ui, dict) else None
    uri = uri if uri is not None else fields.get("ui/resourceUri")
    if isinstance(uri, str) and uri.startswith("ui://") and len(uri) <= 2048:
        return uri
    return None


def result_from_mcp(operation: Operation, result: object) -> McpResult:
    """An SDK result model as an `McpResult`."""
    return McpResult(operation=operation, data=_wire(result))
