"""The `x-openclaw-input-discriminator` annotation (spec §7.4)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawcell import Tool
from clawcell.catalog import (
    Catalog,
    HookDecision,
    ToolCallEvent,
    define_output_schema,
)
from clawcell.catalog._discriminator import (
    INPUT_DISCRIMINATOR,
    DiscriminatorError,
    can_narrow,
    read_output_variants,
)
from clawcell.errors import ConfigurationError, ContractError

ROWS = {
    "type": "object",
    "properties": {"rows": {"type": "array", "items": {"type": "string"}}},
    "required": ["rows"],
    "additionalProperties": False,
}
TOTAL = {
    "type": "object",
    "properties": {"total": {"type": "number"}},
    "required": ["total"],
    "additionalProperties": False,
}


def test_helper_builds_the_union_and_shares_equal_branches() -> None:
    schema = define_output_schema(
        input_property="kind", variants={"list": ROWS, "all": ROWS, "status": TOTAL}
    )
    assert schema == {
        "anyOf": [ROWS, TOTAL],
        INPUT_DISCRIMINATOR: {
            "version": 1,
            "inputProperty": "kind",
            "mapping": {"list": 0, "all": 0, "status": 1},
        },
    }


def test_helper_needs_a_property_and_a_variant() -> None:
    with pytest.raises(ConfigurationError):
        define_output_schema(input_property="", variants={"a": ROWS})
    with pytest.raises(ConfigurationError):
        define_output_schema(input_property="kind", variants={})


def _annotated(annotation: Any, any_of: Any = (ROWS, TOTAL)) -> dict[str, Any]:
    return {"anyOf": list(any_of), INPUT_DISCRIMINATOR: annotation}


GOOD = {"version": 1, "inputProperty": "kind", "mapping": {"list": 0}}
MALFORMED: list[tuple[str, dict[str, Any], str]] = [
    ("version 2", _annotated({**GOOD, "version": 2}), "annotation"),
    ("version true", _annotated({**GOOD, "version": True}), "annotation"),
    ("empty property", _annotated({**GOOD, "inputProperty": ""}), "annotation"),
    ("property not a string", _annotated({**GOOD, "inputProperty": 3}), "annotation"),
    ("mapping not an object", _annotated({**GOOD, "mapping": [0]}), "annotation"),
    ("annotation not an object", _annotated("kind"), "annotation"),
    ("no anyOf", {INPUT_DISCRIMINATOR: GOOD, "type": "object"}, "annotation"),
    ("empty anyOf", _annotated(GOOD, []), "annotation"),
    ("index out of range", _annotated({**GOOD, "mapping": {"list": 2}}), "branch"),
    ("negative index", _annotated({**GOOD, "mapping": {"list": -1}}), "branch"),
    ("fractional index", _annotated({**GOOD, "mapping": {"list": 0.5}}), "branch"),
    ("string index", _annotated({**GOOD, "mapping": {"list": "0"}}), "branch"),
    ("empty mapping", _annotated({**GOOD, "mapping": {}}), "must not be empty"),
]


@pytest.mark.parametrize(
    ("schema", "word"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED]
)
def test_malformed_annotations_are_rejected(schema: dict[str, Any], word: str) -> None:
    with pytest.raises(DiscriminatorError, match=word):
        read_output_variants(schema)


def test_references_anywhere_in_schema_positions_forbid_narrowing() -> None:
    assert can_narrow({"anyOf": [ROWS, TOTAL]})
    assert not can_narrow({"anyOf": [ROWS, {"$ref": "#/$defs/x"}]})
    assert not can_narrow({"anyOf": [{"type": "object", "properties": {"a": {"$ref": "#"}}}]})


def test_reference_words_in_names_and_annotations_do_not_count() -> None:
    schema = {
        "anyOf": [{"type": "object", "properties": {"$ref": {"type": "string"}}}],
        "default": {"$ref": "not a schema"},
        "examples": [{"$ref": "x"}],
    }
    assert can_narrow(schema)


def test_scan_is_bounded_in_size_depth_and_cycles() -> None:
    wide = {"anyOf": [{"type": "string"} for _ in range(5000)]}
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(70):
        deep = {"anyOf": [deep]}
    cyclic: dict[str, Any] = {"anyOf": []}
    cyclic["anyOf"].append(cyclic)
    assert not can_narrow(wide)
    assert not can_narrow(deep)
    assert not can_narrow(cyclic)


def _records(output: dict[str, Any], returned: dict[str, Any], ran: list[Any]) -> Tool:
    async def execute(params: dict[str, Any]) -> dict[str, Any]:
        ran.append(params)
        return returned

    return Tool(name="records", execute=execute, output_schema=output)


def test_a_ref_bearing_schema_falls_back_to_the_umbrella_contract() -> None:
    output = {
        "anyOf": [ROWS, {"$ref": "#/$defs/total"}],
        "$defs": {"total": TOTAL},
        INPUT_DISCRIMINATOR: {"version": 1, "inputProperty": "kind", "mapping": {"list": 0}},
    }
    catalog = Catalog([_records(output, {"total": 2}, [])])
    assert asyncio.run(catalog.call("records", {"kind": "list"})) == {"total": 2}


def test_hook_rewrite_to_an_incompatible_branch_fails_after_running_once() -> None:
    output = define_output_schema(
        input_property="operation",
        variants={
            "list": {**ROWS, "properties": {"records": {"type": "array"}}, "required": ["records"]},
            "remove": {
                "type": "object",
                "properties": {"removed": {"type": "boolean"}},
                "required": ["removed"],
                "additionalProperties": False,
            },
        },
    )
    ran: list[Any] = []

    def rewrite(event: ToolCallEvent) -> HookDecision:
        return HookDecision(params={"operation": "remove"})

    catalog = Catalog([_records(output, {"removed": True}, ran)], before_tool_call=[rewrite])
    with pytest.raises(ContractError) as caught:
        asyncio.run(catalog.call("records", {"operation": "list"}))
    assert caught.value.code == "output_contract"
    assert ran == [{"operation": "remove"}]


def test_hook_rewrite_to_a_compatible_branch_is_accepted() -> None:
    output = define_output_schema(input_property="kind", variants={"a": TOTAL, "b": TOTAL})

    def rewrite(event: ToolCallEvent) -> HookDecision:
        return HookDecision(params={"kind": "b"})

    catalog = Catalog([_records(output, {"total": 1}, [])], before_tool_call=[rewrite])
    assert asyncio.run(catalog.call("records", {"kind": "a"})) == {"total": 1}


@pytest.mark.parametrize("kind", [None, 3, "unmapped"])
def test_missing_non_string_or_unmapped_selectors_keep_the_whole_union(kind: object) -> None:
    output = define_output_schema(input_property="kind", variants={"list": ROWS, "status": TOTAL})
    catalog = Catalog([_records(output, {"total": 2}, [])])
    params = {} if kind is None else {"kind": kind}
    assert asyncio.run(catalog.call("records", params)) == {"total": 2}
