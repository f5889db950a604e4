"""Contracts: malformed schemas never run the tool; messages never print the value."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from clawcell import Tool
from clawcell.catalog import Catalog
from clawcell.catalog._contracts import ToolContract
from clawcell.catalog._discriminator import INPUT_DISCRIMINATOR
from clawcell.errors import ContractError

MALFORMED_OUTPUT_SCHEMAS: list[tuple[str, dict[str, Any]]] = [
    ("unknown type name", {"type": "sting"}),
    ("type not a string", {"type": 3}),
    ("required not a list", {"type": "object", "required": "id"}),
    ("minimum not a number", {"type": "number", "minimum": "1"}),
    ("bad pattern", {"type": "string", "pattern": "("}),
    ("dangling reference", {"$ref": "#/$defs/missing"}),
    ("anyOf not a list", {"anyOf": {"type": "string"}}),
    ("broken branch", {"anyOf": [{"type": "boolean"}, {"type": "sting"}]}),
    (
        "unsupported annotation version",
        {
            "anyOf": [{"type": "string"}, {"type": "boolean"}],
            INPUT_DISCRIMINATOR: {
                "version": 2,
                "inputProperty": "operation",
                "mapping": {"list": 0},
            },
        },
    ),
    (
        "annotation index out of range",
        {
            "anyOf": [{"type": "string"}, {"type": "boolean"}],
            INPUT_DISCRIMINATOR: {
                "version": 1,
                "inputProperty": "operation",
                "mapping": {"list": 2},
            },
        },
    ),
]


@pytest.mark.parametrize(
    "schema", [c[1] for c in MALFORMED_OUTPUT_SCHEMAS], ids=[c[0] for c in MALFORMED_OUTPUT_SCHEMAS]
)
def test_a_malformed_output_schema_fails_before_the_tool_runs(schema: dict[str, Any]) -> None:
    ran: list[object] = []

    async def execute(params: dict[str, Any]) -> str:
        ran.append(params)
        return "effect"

    catalog = Catalog([Tool(name="records", execute=execute, output_schema=schema)])
    with pytest.raises(ContractError) as caught:
        asyncio.run(catalog.call("records", {"operation": "list"}))
    assert caught.value.code == "invalid_contract"
    assert caught.value.message.startswith('Tool "records" has an invalid outputSchema. | ')
    assert ran == []


def test_the_recorded_annotation_message_is_exact() -> None:
    schema = MALFORMED_OUTPUT_SCHEMAS[8][1]
    catalog = Catalog([Tool(name="records", execute=lambda p: p, output_schema=schema)])
    with pytest.raises(ContractError) as caught:
        asyncio.run(catalog.call("records", {}))
    assert caught.value.message == (
        'Tool "records" has an invalid outputSchema. | '
        "Invalid tool output input-discriminator annotation."
    )


def test_a_malformed_input_schema_fails_before_the_tool_runs() -> None:
    ran: list[object] = []
    catalog = Catalog(
        [Tool(name="t", execute=ran.append, parameters={"type": "object", "required": 5})]
    )
    with pytest.raises(ContractError) as caught:
        asyncio.run(catalog.call("t", {}))
    assert caught.value.code == "invalid_contract"
    assert ran == []


def test_output_errors_name_paths_but_never_the_value() -> None:
    secret = "hunter2-secret"
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "number"}}},
        "additionalProperties": False,
    }
    catalog = Catalog(
        [Tool(name="t", execute=lambda p: {"items": [1, secret]}, output_schema=schema)]
    )
    with pytest.raises(ContractError) as caught:
        asyncio.run(catalog.call("t", {}))
    assert secret not in caught.value.message
    assert caught.value.message.endswith("Validation: items.1: must be number.")


def test_at_most_five_bounded_details_are_reported() -> None:
    schema = {
        "type": "object",
        "properties": {f"f{i}": {"type": "number"} for i in range(9)},
        "additionalProperties": False,
    }
    value = {f"f{i}": "x" for i in range(9)}
    catalog = Catalog([Tool(name="t", execute=lambda p: value, output_schema=schema)])
    with pytest.raises(ContractError) as caught:
        asyncio.run(catalog.call("t", {}))
    details = caught.value.message.split("Validation: ", 1)[1]
    assert details.count(": must be number") == 5


def test_untrusted_tools_are_not_validated() -> None:
    catalog = Catalog(
        [
            Tool(
                name="t",
                execute=lambda p: {"n": "text"},
                source="client",
                parameters={"type": "object", "required": ["x"]},
                output_schema={"type": "object", "properties": {"n": {"type": "number"}}},
            )
        ]
    )
    assert asyncio.run(catalog.call("t", {})) == {"n": "text"}
    assert catalog.describe("t")["input"] == "unknown"
    assert "outputSchema" not in catalog.describe("t")


def test_nullable_is_honoured_by_validation() -> None:
    schema = {"type": "string", "nullable": True}
    catalog = Catalog([Tool(name="t", execute=lambda p: None, output_schema=schema)])
    assert asyncio.run(catalog.call("t", {})) is None


@pytest.mark.parametrize(
    "kinds", [[[]], [{}, "string"], ["string", "string"], ["null", []]], ids=repr
)
def test_nullable_beside_a_malformed_type_list_builds_a_catalog(kinds: list[Any]) -> None:
    """`nullable` folds `null` into `type`; a type list holding what is not a type name (an
    unhashable list or object: hypothesis found `[[]]`) is left unfolded, as the hints leave
    it (`_json.type_names`), never a crash."""
    schema = {"type": kinds, "nullable": True}
    catalog = Catalog([Tool(name="t", execute=lambda p: None, output_schema=schema)])
    assert catalog.describe("t")["name"] == "t"


def test_did_you_mean_suggests_a_close_property_name() -> None:
    params = {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "additionalProperties": False,
    }
    catalog = Catalog([Tool(name="t", execute=lambda p: p, parameters=params)])
    with pytest.raises(ContractError) as caught:
        asyncio.run(catalog.call("t", {"qeury": "x"}))
    assert "Did you mean: query?" in caught.value.message
    assert caught.value.message.endswith("Expected input: { query?: string }.")


def test_a_schema_is_compiled_once_per_content_across_catalogs() -> None:
    from clawcell.catalog._contracts import compile_schema

    bound: dict[str, Any] = {"type": "integer", "minimum": 7}
    schema = {"type": "object", "properties": {"n": bound}}
    first = compile_schema(schema)
    reordered = {"type": "object", "properties": {"n": {"minimum": 7, "type": "integer"}}}
    assert compile_schema(reordered) is not first  # key order is part of the content
    assert compile_schema(dict(schema)) is first
    bound["minimum"] = 8  # an edit of the object is new content
    edited = compile_schema(schema)
    assert edited is not first
    assert edited.is_valid({"n": 8}) and not edited.is_valid({"n": 7})
    assert first.is_valid({"n": 7})
    assert compile_schema({"type": "integer", "minimum": 1}) is not compile_schema(
        {"type": "integer", "minimum": 1.0}
    )


def test_two_catalogs_with_one_schema_share_its_validator_and_check_alike() -> None:
    params = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    tools = [Tool(name="t", execute=lambda p: p, parameters=dict(params))]
    one, two = Catalog(tools), Catalog([Tool(name="t", execute=lambda p: p, parameters=params)])
    bound = [c.binding("t") for c in (one, two)]
    assert bound[0] is not None and bound[1] is not None
    assert bound[0].contract._input is bound[1].contract._input  # pyright: ignore[reportPrivateUsage]
    for catalog in (one, two):
        with pytest.raises(ContractError, match="q: must be string"):
            asyncio.run(catalog.call("t", {"q": 3}))


def test_a_schema_that_is_not_plain_json_is_compiled_uncached() -> None:
    from clawcell.catalog._contracts import compile_schema

    class Odd(dict[str, Any]):
        pass

    schema = {"type": "number", "maximum": float("nan")}
    with pytest.raises(ValueError):
        compile_schema(schema)
    tuples = {"type": "object", "required": ("n",)}  # a tuple is no JSON list
    assert compile_schema(tuples) is not compile_schema(tuples)
    # what is compiled is the normalized copy (string keys), so this one is plain after all
    keyed = compile_schema(cast("dict[str, Any]", {True: "x", "type": "string"}))
    assert keyed is compile_schema({"True": "x", "type": "string"})
    assert compile_schema(Odd(type="string")).is_valid("s")


TRIVIAL_INPUTS: list[Any] = [{}, {"a": [1, {"b": None}]}, 5, "text", [1], None, True]
EMPTY: dict[str, Any] = {}
TRIVIAL_CASES: list[tuple[str, dict[str, Any], Any, bool]] = [
    *[("empty", EMPTY, value, True) for value in TRIVIAL_INPUTS],
    *[("any object", {"type": "object"}, v, type(v) is dict) for v in TRIVIAL_INPUTS],
]


@pytest.mark.parametrize(
    ("schema", "value", "accepted"),
    [pytest.param(*case[1:], id=f"{case[0]}-{case[2]!r}") for case in TRIVIAL_CASES],
)
def test_a_schema_that_accepts_every_object_checks_every_other_input(
    schema: dict[str, Any], value: object, accepted: bool
) -> None:
    contract = ToolContract(name="t", parameters=schema, output_schema=None)
    if accepted:
        contract.check_input(value)
        return
    with pytest.raises(ContractError) as caught:
        contract.check_input(value)
    assert caught.value.code == "input_contract"


def test_an_object_schema_with_any_other_keyword_still_asks_the_validator() -> None:
    contract = ToolContract(
        name="t", parameters={"type": "object", "required": ["id"]}, output_schema=None
    )
    with pytest.raises(ContractError, match="id"):
        contract.check_input({})
