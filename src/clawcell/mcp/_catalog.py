"""The bridge's view of a catalog with MCP servers: native tools plus `MCP.*` methods.

`McpCatalog` extends the native `Catalog` through its public seam (`CatalogExtension`: MCP
tools as search entries, `mcp/*.d.ts` as API files), so native and MCP entries share one
search, and answers the MCP side of `call`, `describe` and `$api` itself. MCP entries never
appear in `catalog.all()` or the quick index because those stay with the native tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..approvals import ApprovalRule, gate_context
from ..catalog import ApiFile, Catalog, CatalogExtension, SearchEntry
from ..errors import ApprovalDeniedError, InputError, McpError
from ._apps import open_app_view
from ._connection import Connection
from ._declarations import (
    INDEX_DESCRIPTION,
    ROOT_NOTE,
    SERVER_NOTE,
    index_declaration,
    server_declaration,
    server_description,
)
from ._namespace import McpMethod, McpNamespace, McpServerScope
from ._projection import guest_projection

__all__ = ["McpCatalog"]

_INDEX_PATH: Final = "mcp/index.d.ts"


class McpCatalog:
    """Native tools and MCP methods behind one `HostCatalog` face.

    Args:
        catalog: The native catalog; this one shares its tools, counters and scheduling.
        namespace: The visible MCP methods.
        connections: The connection of each server, by server name.
    """

    def __init__(
        self, catalog: Catalog, namespace: McpNamespace, connections: Mapping[str, Connection]
    ) -> None:
        self.namespace = namespace
        self._connections = connections
        self._describes = 0
        self._calls = 0
        extension = CatalogExtension(entries=_entries(namespace), files=_files(namespace))
        self.catalog = catalog.with_extension(extension)

    # -- calls ----------------------------------------------------------------------------

    async def call(self, callable_name: str, input: Any = None) -> Any:
        """Run a native tool, or send an MCP request and return its guest projection."""
        method = self.namespace.methods.get(callable_name)
        if method is None:
            return await self.catalog.call(callable_name, input)
        self._calls += 1
        arguments: dict[str, Any] = dict(input) if isinstance(input, dict) else {}  # pyright: ignore[reportUnknownArgumentType]
        connection = self._connections[method.server.server_name]
        # Every operation of a server passes the gate (a policy on `MCP.bank.*` covers
        # `resources.read` and `prompts.get` as well as its tools); the server's own `ask`
        # patterns name its tools only.
        is_tool = method.operation == "tools/call"
        await _approve(method, arguments, is_tool and connection.config.asks(method.mcp_tool))
        if not is_tool:
            return guest_projection(await connection.request(method.operation, arguments))
        request = {"name": method.mcp_tool, "arguments": arguments}
        projection = guest_projection(await connection.request(method.operation, request))
        if method.ui_resource_uri is not None:
            await open_app_view(
                connection, method, namespace=self.namespace, catalog=self.catalog,
                arguments=arguments, result=projection,
            )  # fmt: skip
        return projection

    # -- search and describe --------------------------------------------------------------

    def search(self, query: object, limit: object = None) -> list[str]:
        """Exact names first (native, then MCP), else one BM25 ranking over both."""
        return self.catalog.search(query, limit)

    def describe(self, callable_name: str) -> dict[str, Any]:
        """`describe()`; for MCP handles, `$api(<method>, { schema: true })`."""
        method = self.namespace.methods.get(callable_name)
        if method is None:
            return self.catalog.describe(callable_name)
        self._describes += 1
        return self._server_api(method.server, [method], schema=True)

    # -- $api -----------------------------------------------------------------------------

    def namespace_api(self, args: list[Any]) -> dict[str, Any]:
        """`MCP.$api()` (`args == []`) or `MCP.<server>.$api(toolName?, options?)`."""
        if not args:
            return self._root_api()
        scope = self.namespace.server(str(args[0]))
        if scope is None:
            raise InputError(f"Unknown MCP server: {args[0]}")
        if scope.unavailable is not None:
            raise McpError(scope.unavailable)
        name = args[1] if len(args) > 1 else None
        options: object = args[2] if len(args) > 2 else None
        schema = isinstance(options, dict) and options.get("schema") is True  # pyright: ignore[reportUnknownMemberType]
        return self._server_api(scope, _select(scope, name), schema=schema)

    def _root_api(self) -> dict[str, Any]:
        return {
            "kind": "mcp_api",
            "scope": "root",
            "header": index_declaration(self.namespace),
            "servers": [_root_entry(s) for s in self.namespace.servers],
            "note": ROOT_NOTE,
        }

    def _server_api(
        self, scope: McpServerScope, methods: list[McpMethod], *, schema: bool
    ) -> dict[str, Any]:
        api: dict[str, Any] = {
            "kind": "mcp_api",
            "scope": "tool" if len(methods) == 1 else "server",
            "server": {"identifier": scope.identifier, "serverName": scope.server_name},
            "header": server_declaration(scope, methods),
            "tools": [
                {
                    "method": m.method,
                    "path": m.callable_name,
                    "mcpTool": m.mcp_tool,
                    "operation": m.operation,
                    "description": m.description,
                }
                for m in methods
            ],
        }
        if schema:
            api["schemas"] = {m.method: dict(m.input_schema) for m in methods}
        api["note"] = SERVER_NOTE
        return api

    # -- API files ------------------------------------------------------------------------

    def api_list(self, prefix: object = None) -> dict[str, Any]:
        """The native listing, with the MCP files after `results.d.ts`."""
        return self.catalog.api_list(prefix)

    def api_read(self, path: object) -> dict[str, Any]:
        """An MCP file, or a native one."""
        return self.catalog.api_read(path)

    # -- provenance and telemetry ---------------------------------------------------------

    def touches_network(self, method: str, args: list[Any], value: Any = None) -> bool:
        """Whether serving this bridge request exposes MCP content or metadata (spec §11.7)."""
        first = args[0] if args else None
        if method == "namespace":
            return True
        if method in ("callValue", "describe"):
            return isinstance(first, str) and first in self.namespace.methods
        if method == "apiList":
            prefix = first.strip().strip("/") if isinstance(first, str) else ""
            return not prefix or prefix == _INDEX_PATH or _INDEX_PATH.startswith(prefix + "/")
        if method == "apiRead":
            return isinstance(first, str) and first.strip().lstrip("/").startswith("mcp/")
        if method == "search" and isinstance(value, list):
            return any(isinstance(v, str) and v.startswith("MCP.") for v in value)  # pyright: ignore[reportUnknownVariableType]
        return False

    def telemetry(self) -> dict[str, Any]:
        """The native counters with MCP entries, describes and calls added."""
        data = self.catalog.telemetry()
        tools = sum(s.tool_count for s in self.namespace.servers)
        data["catalogSize"] += tools
        data["sources"] = {**data["sources"], "mcp": data["sources"]["mcp"] + tools}
        data["describeCount"] += self._describes
        data["callCount"] += self._calls
        return data


async def _approve(method: McpMethod, arguments: dict[str, Any], asks: bool) -> None:
    """The run's approval gate for an MCP operation, by its callable name (`MCP.x.y`,
    `MCP.x.resources.read`): the session policy applies, and the server's `ask` patterns
    ask (tools only)."""
    reason = (
        f"the configuration of MCP server `{method.server.server_name}` asks before "
        f"`{method.mcp_tool}`"
    )
    context = gate_context.get()
    if context is None:
        if asks:
            raise ApprovalDeniedError(
                f'Tool "{method.callable_name}" needs approval, and this call is not part of '
                "a Code Mode run that can wait for one."
            )
        return
    gate, request_id = context
    rule: ApprovalRule = (lambda _input: reason) if asks else "never"
    await gate.check(request_id, method.callable_name, arguments, rule, None)


def _entries(namespace: McpNamespace) -> tuple[SearchEntry, ...]:
    return tuple(
        SearchEntry(
            callable_name=m.callable_name,
            catalog_id=f"mcp:{m.server.server_name}:{m.mcp_tool}",
            name=m.mcp_tool,
            description=m.description,
        )
        for m in namespace.methods.values()
        if m.operation == "tools/call"
    )


def _files(namespace: McpNamespace) -> tuple[ApiFile, ...]:
    index = ApiFile(
        path=_INDEX_PATH, description=INDEX_DESCRIPTION, content=index_declaration(namespace)
    )
    servers = (
        ApiFile(
            path=scope.api_path,
            description=server_description(scope),
            content=server_declaration(scope),
        )
        for scope in namespace.available
        if scope.identifier != "index"
    )
    return (index, *servers)


def _root_entry(scope: McpServerScope) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "identifier": scope.identifier,
        "serverName": scope.server_name,
        "toolCount": scope.tool_count,
    }
    if scope.unavailable is not None:
        entry["unavailable"] = scope.unavailable
    return entry


def _select(scope: McpServerScope, name: object) -> list[McpMethod]:
    if name is None:
        return list(scope.methods)
    for attribute in ("method", "mcp_tool"):
        chosen = [m for m in scope.methods if getattr(m, attribute) == name]
        if chosen:
            return chosen
    raise InputError(
        f"Unknown MCP tool on MCP.{scope.identifier}: {name}. "
        f"Call MCP.{scope.identifier}.$api() to list its tools."
    )
