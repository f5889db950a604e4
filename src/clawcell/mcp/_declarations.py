"""Generated TypeScript-style declarations of MCP servers (spec §8.3, §9.3, §9.4).

`mcp/index.d.ts` references one `mcp/<server>.d.ts` per server; each server file declares
`namespace MCP.<server>` with one function per method, a doc comment from the tool's
description and parameters, and the input type mapped from its schema by `_schema_types`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ._namespace import McpMethod, McpNamespace, McpServerScope
from ._schema_types import object_type

__all__ = [
    "INDEX_DESCRIPTION",
    "ROOT_NOTE",
    "SERVER_NOTE",
    "index_declaration",
    "server_declaration",
    "server_description",
]

INDEX_DESCRIPTION: Final = "Root MCP namespace declaration and server list."
ROOT_NOTE: Final = (
    "Call MCP.<server>.$api() for a TypeScript-style header, then call tools with one object "
    "argument matching the shown input type."
)
SERVER_NOTE: Final = (
    "Call MCP tools with one object argument, for example "
    "MCP.server.tool({ requiredField: value })."
)
MAX_DOC_LINES: Final = 12

_PRELUDE: Final = (
    "interface McpApiHeader { header: string; tools?: unknown[]; "
    "schemas?: Record<string, unknown> }",
    "interface McpToolResult {",
    "  content: unknown[];",
    "  structuredContent?: unknown;",
    "  isError?: boolean;",
    "}",
    "interface McpResourcesListResult { resources: unknown[]; nextCursor?: string }",
    "interface McpResourcesReadResult { contents: unknown[] }",
    "interface McpPromptsListResult { prompts: unknown[]; nextCursor?: string }",
    "interface McpPromptsGetResult { messages: unknown[]; description?: string }",
)
_RESULTS: Final = {
    "tools/call": "McpToolResult",
    "resources/list": "McpResourcesListResult",
    "resources/read": "McpResourcesReadResult",
    "prompts/list": "McpPromptsListResult",
    "prompts/get": "McpPromptsGetResult",
}
_ROOT: Final = (
    "interface McpRootApiHeader { header: string; servers?: unknown[] }",
    "declare namespace MCP {",
    "  function $api(): Promise<McpRootApiHeader>;",
    "}",
)


def server_description(scope: McpServerScope) -> str:
    """The `API.list` description of `mcp/<server>.d.ts`."""
    return f"MCP server declaration for {scope.server_name}."


def _escape(text: str) -> str:
    return text.replace("*/", "* /")


def _param_name(name: str) -> str:
    """The name as §9.4 writes it, JSON-quoted only when it would break the comment line."""
    if any(not char.isprintable() for char in name):
        return json.dumps(name, ensure_ascii=False)
    return name


def _doc(method: McpMethod, properties: Mapping[str, Any], required: set[str]) -> list[str]:
    lines = [line.strip() for line in method.description.splitlines() if line.strip()]
    lines = lines[:MAX_DOC_LINES]
    params: list[str] = []
    for name, prop in properties.items():
        schema: Mapping[str, Any] = prop if isinstance(prop, Mapping) else {}  # pyright: ignore[reportUnknownVariableType]
        parts = [f"@param {_param_name(name)}{'' if name in required else '?'}"]
        described = schema.get("description")
        if isinstance(described, str) and described.strip():
            parts.append(" ".join(described.split()))
        if "default" in schema:
            parts.append(f"Default: {json.dumps(schema['default'], ensure_ascii=False)}.")
        params.append(" ".join(parts))
    body = lines + ([""] if lines and params else []) + params
    if not body:
        return []
    return ["/**", *[f" * {_escape(b)}" if b else " *" for b in body], " */"]


def _function(method: McpMethod, name: str) -> list[str]:
    schema = method.input_schema
    raw = schema.get("properties")
    properties: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}  # pyright: ignore[reportUnknownVariableType]
    defaults, listed = method.parameters()
    required = {r for r in listed if r in properties and r not in defaults}
    input_type = object_type(schema, required=sorted(required))
    optional = "" if required else "?"
    return [
        *_doc(method, properties, required),
        f"function {name}(",
        f"  input{optional}: {input_type}",
        f"): Promise<{_RESULTS[method.operation]}>;",
    ]


def _indent(lines: Sequence[str], depth: int) -> list[str]:
    pad = "  " * depth
    return [pad + line if line else line for line in lines]


def server_body(scope: McpServerScope, methods: Sequence[McpMethod]) -> list[str]:
    """`declare namespace MCP.<server> { … }` for the given methods."""
    out = [
        f"declare namespace MCP.{scope.identifier} {{",
        "  function $api(toolName?: string, options?: { schema?: boolean }): "
        "Promise<McpApiHeader>;",
    ]
    groups: dict[str, list[McpMethod]] = {}
    for method in methods:
        group, _, name = method.method.rpartition(".")
        if group:
            groups.setdefault(group, []).append(method)
        else:
            out.extend(_indent(_function(method, name), 1))
    for group in sorted(groups):
        out.append(f"  namespace {group} {{")
        for method in groups[group]:
            out.extend(_indent(_function(method, method.method.rpartition(".")[2]), 2))
        out.append("  }")
    out.append("}")
    return out


def server_declaration(scope: McpServerScope, methods: Sequence[McpMethod] | None = None) -> str:
    """The content of `mcp/<server>.d.ts` (and of `$api().header`)."""
    chosen = scope.methods if methods is None else methods
    return "\n".join([*_PRELUDE, *server_body(scope, chosen)])


def index_declaration(namespace: McpNamespace) -> str:
    """The content of `mcp/index.d.ts`; a server named `index` is inlined after the root."""
    refs = [
        f'/// <reference path="./{s.identifier}.d.ts" />'
        for s in namespace.available
        if s.identifier != "index"
    ]
    lines = [*refs, "", *_ROOT] if refs else list(_ROOT)
    inlined = namespace.server("index")
    if inlined is not None and inlined.unavailable is None:
        lines += ["", server_declaration(inlined)]
    return "\n".join(lines)
