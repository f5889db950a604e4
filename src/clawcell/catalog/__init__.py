"""The host-side tool catalog: typed tools, contracts, declarations, search and scheduling."""

from __future__ import annotations

from ._bindings import Binding
from ._catalog import Catalog
from ._declarations import schema_declaration
from ._define import ToolPlugin, define_tool_plugin, json_schema_for, tool
from ._discriminator import define_output_schema
from ._hints import compact_input_hint, compact_output_hint
from ._hooks import AfterToolCall, BeforeToolCall, HookDecision, ToolCallEvent
from ._model_tools import to_anthropic, to_openai
from ._tool import ExecutionMode, JsonValue, Tool, ToolResult, ToolSource

__all__ = [
    "AfterToolCall",
    "BeforeToolCall",
    "Binding",
    "Catalog",
    "ExecutionMode",
    "HookDecision",
    "JsonValue",
    "Tool",
    "ToolCallEvent",
    "ToolPlugin",
    "ToolResult",
    "ToolSource",
    "compact_input_hint",
    "compact_output_hint",
    "define_output_schema",
    "define_tool_plugin",
    "json_schema_for",
    "schema_declaration",
    "to_anthropic",
    "to_openai",
    "tool",
]
