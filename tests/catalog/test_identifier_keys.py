"""D12: identifiers are checked with a full match, so a key ending in a newline is quoted."""

from __future__ import annotations

from typing import Any

import pytest

from clawcell import Tool
from clawcell.catalog import Catalog


async def _echo(params: dict[str, Any]) -> Any:
    return params


@pytest.mark.parametrize(
    ("key", "written"),
    [
        pytest.param("nl\n", '"nl\\n"', id="trailing_newline"),
        pytest.param("a\u2028", '"a\u2028"', id="line_separator"),
        pytest.param("$ok_1", "$ok_1", id="identifier"),
    ],
)
def test_a_property_key_is_bare_only_when_it_is_an_identifier(key: str, written: str) -> None:
    schema = {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]}
    catalog = Catalog([Tool(name="odd", parameters=schema, execute=_echo)])
    declaration = catalog.api_read("tools/odd.d.ts")["content"]
    assert f"input: {{ {written}: string }}" in declaration
    assert f"- odd {{ {written}: string }} -> ?" in catalog.quick_index()
