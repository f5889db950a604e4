"""The public surface of `clawcell.catalog` is deliberate."""

from __future__ import annotations

from clawcell import catalog

CATALOG = [
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


def test_the_catalog_exports_exactly_its_public_names() -> None:
    assert catalog.__all__ == CATALOG
    assert all(hasattr(catalog, name) for name in catalog.__all__)
