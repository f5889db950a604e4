"""Snapshot tests: quick-index lines and `tools/<name>.d.ts` files for representative schemas.

Snapshots live in `snapshots/`. Regenerate after a deliberate change with
`CLAWCELL_UPDATE_SNAPSHOTS=1 pytest tests/catalog/test_snapshots.py` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from clawcell import Tool
from clawcell.catalog import Catalog, define_output_schema

SNAPSHOTS = Path(__file__).parent / "snapshots"
STRING = {"type": "string"}
NUMBER = {"type": "number"}


def closed(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = NUMBER
    for level in range(levels):
        node = closed({f"level{level}": node})
    return node


_SHARED = closed({"id": STRING, "total": NUMBER})
SCHEMAS: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
    "closed_object": (
        closed({"id": STRING, "limit": {"type": "integer", "minimum": 1}}),
        closed({"ok": {"type": "boolean"}}),
    ),
    "open_object": (
        {"type": "object", "properties": {"value": STRING}},
        {"type": "object", "properties": {"id": STRING}},
    ),
    "record": (
        {"type": "object", "additionalProperties": NUMBER},
        {"type": "object", "additionalProperties": closed({"n": NUMBER})},
    ),
    "unions": (
        closed(
            {"mode": {"enum": ["fast", "slow"]}, "value": {"anyOf": [STRING, NUMBER]}}, ["mode"]
        ),
        {
            "oneOf": [
                closed({"kind": {"const": "a"}}),
                closed({"kind": {"const": "b"}, "n": NUMBER}),
            ]
        },
    ),
    "nullable": (
        closed({"note": {"type": "string", "nullable": True}}),
        {**closed({"id": STRING}), "nullable": True},
    ),
    "arrays": (
        closed({"tags": {"type": "array", "items": STRING}}),
        {
            "type": "array",
            "items": closed({"id": STRING, "scores": {"type": "array", "items": NUMBER}}),
        },
    ),
    "refs": (
        {
            "type": "object",
            "properties": {"item": {"$ref": "#/$defs/item"}},
            "$defs": {"item": STRING},
        },
        {"$ref": "#/$defs/result", "$defs": {"result": closed({"ok": {"type": "boolean"}})}},
    ),
    "huge": (
        closed({f"field_{i:02}": STRING for i in range(40)}),
        closed({f"field_{i:02}": {"enum": ["a", "b", "c"]} for i in range(24)}),
    ),
    "deep": (_deep(8), _deep(8)),
    "discriminated": (
        closed({"kind": {"enum": ["list", "status", "detail"]}}, []),
        define_output_schema(
            input_property="kind",
            variants={
                "list": closed({"rows": {"type": "array", "items": STRING}}),
                "status": _SHARED,
                "detail": closed(
                    {"id": STRING, "total": NUMBER, "lines": {"type": "array", "items": STRING}}
                ),
            },
        ),
    ),
    "discriminated_with_ref": (
        closed({"kind": STRING}),
        {
            **define_output_schema(
                input_property="kind",
                variants={"a": closed({"x": NUMBER}), "b": {"$ref": "#/$defs/b"}},
            ),
            "$defs": {"b": closed({"y": NUMBER})},
        },
    ),
}


def _catalog() -> Catalog:
    return Catalog(
        [
            Tool(name=name, execute=print, parameters=params, output_schema=output)
            for name, (params, output) in SCHEMAS.items()
        ]
    )


def _check(path: Path, actual: str) -> None:
    if os.environ.get("CLAWCELL_UPDATE_SNAPSHOTS") == "1":
        path.write_text(actual + "\n", encoding="utf-8")
    assert path.read_text(encoding="utf-8") == actual + "\n", f"snapshot {path.name} differs"


def test_quick_index_matches_its_snapshot() -> None:
    _check(SNAPSHOTS / "quick_index.txt", _catalog().quick_index())


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_tool_declaration_file_matches_its_snapshot(name: str) -> None:
    content = _catalog().api_read(f"tools/{name}.d.ts")["content"]
    assert isinstance(content, str)
    _check(SNAPSHOTS / f"{name}.d.ts", content)


def test_over_budget_discriminated_declarations_fall_back_to_the_union() -> None:
    wide = closed({f"field_{i:03}_{'x' * 40}": STRING for i in range(700)})
    output = define_output_schema(
        input_property="kind", variants={"a": wide, "b": closed({"n": NUMBER})}
    )
    catalog = Catalog([Tool(name="big", execute=print, output_schema=output)])
    content = catalog.api_read("tools/big.d.ts")["content"]
    assert isinstance(content, str)
    assert (
        "// Action declarations exceed the shared output allowance; using the complete union."
        in content
    )
    assert "__OpenClaw_big_" not in content
