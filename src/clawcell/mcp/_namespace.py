"""The `MCP` namespace: every visible tool, resource and prompt operation with its guest name.

Built once from the servers' listings (spec §9.1). It answers what the guest and the catalog
need to know: the install tree of `MCP.*` functions, handle metadata, `$api` objects and the
search documents of MCP entries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .._lazy import value_class
from ..catalog import locale_key
from ._names import SERVER_SCOPE_NAMES, allocate_identifiers
from ._types import McpListing, McpTool, Operation

__all__ = ["McpMethod", "McpNamespace", "McpServerScope"]

MAX_HANDLE_DESCRIPTION: Final = 512
_CURSOR: Final = {
    "cursor": {"type": "string", "description": "A `nextCursor` from an earlier page."}
}
_OPERATIONS: Final[tuple[tuple[str, Operation, str, dict[str, Any]], ...]] = (
    (
        "prompts.get",
        "prompts/get",
        "Get one prompt of this server, rendered with its arguments.",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The prompt name."},
                "arguments": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "The prompt arguments.",
                },
            },
            "required": ["name"],
        },
    ),
    (
        "prompts.list",
        "prompts/list",
        "List the prompts of this server.",
        {"type": "object", "properties": _CURSOR},
    ),
    (
        "resources.list",
        "resources/list",
        "List the resources of this server.",
        {"type": "object", "properties": _CURSOR},
    ),
    (
        "resources.read",
        "resources/read",
        "Read one resource of this server by URI.",
        {
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "The resource URI."}},
            "required": ["uri"],
        },
    ),
)


def _clip_utf16(text: str, limit: int) -> str:
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return text[:index]
    return text


@value_class
class McpMethod:
    """One callable path under `MCP.<server>`.

    Attributes:
        server: The server scope it belongs to.
        method: `readFile`, or `resources.list` for a grouped operation.
        operation: The MCP request it sends.
        mcp_tool: The original tool name (the operation name for resources and prompts).
        description: The tool's description.
        input_schema: The original input schema (a fixed one for resources and prompts).
    """

    server: McpServerScope
    method: str
    operation: Operation
    mcp_tool: str
    description: str
    input_schema: Mapping[str, Any]
    ui_resource_uri: str | None = None
    """The MCP Apps view the tool declares (`ui://…`), else `None`."""

    @property
    def callable_name(self) -> str:
        """`MCP.<server>.<method>`."""
        return f"MCP.{self.server.identifier}.{self.method}"

    def handle_metadata(self) -> dict[str, Any]:
        """Handle metadata of spec §3.3, in protocol key order."""
        return {
            "source": "mcp",
            "callableName": self.callable_name,
            "toolName": self.mcp_tool,
            "description": _clip_utf16(self.description, MAX_HANDLE_DESCRIPTION),
            "apiPath": self.server.api_path,
        }

    def parameters(self) -> tuple[dict[str, Any], list[str]]:
        """Top-level `default`s and the `required` names of the input schema."""
        properties = self.input_schema.get("properties")
        defaults: dict[str, Any] = {}
        if isinstance(properties, Mapping):
            for name, prop in properties.items():  # pyright: ignore[reportUnknownVariableType]
                if isinstance(prop, Mapping) and "default" in prop:
                    defaults[str(name)] = prop["default"]  # pyright: ignore[reportUnknownArgumentType]
        required = self.input_schema.get("required")
        listed: list[object] = list(required) if isinstance(required, list) else []  # pyright: ignore[reportUnknownArgumentType]
        names = [r for r in listed if isinstance(r, str)]
        return defaults, names

    def install(self) -> dict[str, Any]:
        """The guest-side description of this function (install config)."""
        defaults, required = self.parameters()
        return {
            "path": self.method.split("."),
            "meta": self.handle_metadata(),
            "defaults": defaults,
            "required": required,
        }


@dataclass(kw_only=True)
class McpServerScope:
    """`MCP.<identifier>`: one server and its methods, sorted by method."""

    identifier: str
    server_name: str
    methods: list[McpMethod] = field(default_factory=list[McpMethod])
    unavailable: str | None = None
    """Why the server could not be listed (its scope then has no methods), else `None`."""

    @property
    def api_path(self) -> str:
        """`mcp/<identifier>.d.ts`; a server named `index` lives in `mcp/index.d.ts`."""
        return f"mcp/{self.identifier}.d.ts"

    @property
    def tool_count(self) -> int:
        """Tools proper (resource and prompt operations not counted)."""
        return sum(1 for m in self.methods if m.operation == "tools/call")


class McpNamespace:
    """Every visible MCP method, keyed by callable name.

    Args:
        listings: What each listed server offers.
        failed: Server name → why it could not be listed. Failed servers keep their
            `MCP.<server>` scope (without methods), so a cell that uses one gets an error
            naming the cause, and identifiers do not shift while a server is down.
    """

    def __init__(
        self, listings: Sequence[McpListing], failed: Mapping[str, str] | None = None
    ) -> None:
        failed = failed or {}
        names = [x.server_name for x in listings] + [n for n in failed]
        ids = allocate_identifiers(names, fallback="server")
        scopes: list[McpServerScope] = []
        for listing in listings:
            scope = McpServerScope(
                identifier=ids[listing.server_name], server_name=listing.server_name
            )
            scope.methods = _methods(scope, listing)
            scopes.append(scope)
        scopes += [
            McpServerScope(identifier=ids[name], server_name=name, unavailable=cause)
            for name, cause in failed.items()
        ]
        self.servers = sorted(scopes, key=lambda s: locale_key(s.identifier))
        self.methods: dict[str, McpMethod] = {
            m.callable_name: m for s in self.servers for m in s.methods
        }

    def server(self, identifier: str) -> McpServerScope | None:
        """The scope of `MCP.<identifier>`, or `None`."""
        return next((s for s in self.servers if s.identifier == identifier), None)

    @property
    def available(self) -> list[McpServerScope]:
        """The scopes of servers that were listed."""
        return [s for s in self.servers if s.unavailable is None]

    def install(self) -> dict[str, Any]:
        """The `mcp` part of the guest install config."""
        return {"servers": [_install_scope(s) for s in self.servers]}


def _install_scope(scope: McpServerScope) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "identifier": scope.identifier,
        "serverName": scope.server_name,
        "methods": [m.install() for m in scope.methods],
    }
    if scope.unavailable is not None:
        entry["unavailable"] = scope.unavailable
    return entry


def _methods(scope: McpServerScope, listing: McpListing) -> list[McpMethod]:
    by_name: dict[str, McpTool] = {t.name: t for t in listing.tools}
    names = allocate_identifiers(by_name, fallback="tool", used=SERVER_SCOPE_NAMES)
    methods = [
        McpMethod(
            server=scope,
            method=names[t.name],
            operation="tools/call",
            mcp_tool=t.name,
            description=t.description,
            input_schema=t.input_schema,
            ui_resource_uri=t.ui_resource_uri,
        )
        for t in by_name.values()
    ]
    for method, operation, description, schema in _OPERATIONS:
        group = method.split(".")[0]
        if (group == "resources" and listing.resources) or (group == "prompts" and listing.prompts):
            methods.append(
                McpMethod(
                    server=scope,
                    method=method,
                    operation=operation,
                    mcp_tool=operation,
                    description=description,
                    input_schema=schema,
                )
            )
    methods.sort(key=lambda m: locale_key(m.method))
    return methods
