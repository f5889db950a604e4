"""The host-side tool catalog: typed tools, contracts, declarations, search and scheduling."""

from __future__ import annotations

import typing

from .. import _lazy
from ._bindings import Binding
from ._call_session import call_session
from ._catalog import Catalog
from ._closing import close_tools
from ._extension import CatalogExtension, SearchEntry
from ._names import RESERVED_WORDS, locale_key
from ._tool import ExecutionMode, JsonValue, Tool, ToolResult, ToolSource

if typing.TYPE_CHECKING:
    from ._define import ToolPlugin, define_tool_plugin, json_schema_for, tool
    from ._discriminator import define_output_schema
    from ._hooks import AfterToolCall, BeforeToolCall, HookDecision, ToolCallEvent
    from ._model_tools import (
        ModelToolStyle,
        to_anthropic,
        to_openai,
        to_openai_chat,
        to_openai_responses,
    )
    from ._typescript._api_files import ApiFile
    from ._typescript._declarations import schema_declaration
    from ._typescript._hints import compact_input_hint, compact_output_hint

__getattr__ = _lazy.lazy_exports(
    __name__,
    {
        "_typescript._api_files": ["ApiFile"],
        "_typescript._declarations": ["schema_declaration"],
        # (a catalog without tools derives no hint and no output variants)
        "_typescript._hints": ["compact_input_hint", "compact_output_hint"],
        "_discriminator": ["define_output_schema"],
        "_define": ["ToolPlugin", "define_tool_plugin", "json_schema_for", "tool"],
        "_hooks": ["AfterToolCall", "BeforeToolCall", "HookDecision", "ToolCallEvent"],
        "_model_tools": [
            "ModelToolStyle",
            "to_anthropic",
            "to_openai",
            "to_openai_chat",
            "to_openai_responses",
        ],
    },
)

__all__ = [
    "RESERVED_WORDS",
    "AfterToolCall",
    "ApiFile",
    "BeforeToolCall",
    "Binding",
    "Catalog",
    "CatalogExtension",
    "ExecutionMode",
    "HookDecision",
    "JsonValue",
    "ModelToolStyle",
    "SearchEntry",
    "Tool",
    "ToolCallEvent",
    "ToolPlugin",
    "ToolResult",
    "ToolSource",
    "call_session",
    "close_tools",
    "compact_input_hint",
    "compact_output_hint",
    "define_output_schema",
    "define_tool_plugin",
    "json_schema_for",
    "locale_key",
    "schema_declaration",
    "to_anthropic",
    "to_openai",
    "to_openai_chat",
    "to_openai_responses",
    "tool",
]
