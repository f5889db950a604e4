"""Hypothesis properties: any JSON value used as a schema renders, hints stay within bounds."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from clawcell import Tool
from clawcell.catalog import Catalog, compact_input_hint, compact_output_hint, schema_declaration
from clawcell.catalog._json import as_mapping

KEYWORDS = [
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "anyOf", "oneOf", "allOf", "nullable", "minimum", "maximum", "$ref", "patternProperties",
    "x-openclaw-input-discriminator", "mapping", "version", "inputProperty",
]  # fmt: skip
TYPES = ["object", "array", "string", "number", "integer", "boolean", "null", "weird"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(TYPES),
    st.text(max_size=8),
)
schemas: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.one_of(st.sampled_from(KEYWORDS), st.text(max_size=6)), children, max_size=5
        ),
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(schemas)
def test_any_schema_renders_hints_and_declarations(schema: Any) -> None:
    input_hint = compact_input_hint(schema)
    output_hint = compact_output_hint(schema)
    assert len(input_hint) <= 300
    assert output_hint is None or len(output_hint) <= 800
    assert isinstance(schema_declaration(schema, comments=True), str)


@settings(max_examples=150, deadline=None)
@given(schemas, schemas)
def test_any_tool_contract_builds_a_catalog_and_its_declaration_file(
    parameters: Any, output: Any
) -> None:
    params = as_mapping(parameters) or {"type": "object"}
    out = as_mapping(output)
    catalog = Catalog([Tool(name="t", execute=print, parameters=params, output_schema=out)])
    read = catalog.api_read("tools/t.d.ts")
    assert read["bytes"] == len(str(read["content"]).encode("utf-8"))
    assert catalog.quick_index().startswith("Enabled async tool globals")
    json.dumps(catalog.describe("t"))
