"""Bindings and the per-process cache of what they derive from the tools' content.

The tests check that the cache never serves a derivation of other content than the
catalog's own tools (a stale hint, name or contract), never holds on to a caller's object,
and stays within its bounds.
"""

from __future__ import annotations

import asyncio
import threading
import types
from collections.abc import Mapping
from typing import Any, cast

import pytest

from clawcell import Tool
from clawcell.catalog import Catalog
from clawcell.catalog._bindings import (
    BINDINGS_CACHE_SIZE,
    BINDINGS_CACHE_TOOLS,
    Binding,
    _content,  # pyright: ignore[reportPrivateUsage]
    _derive,  # pyright: ignore[reportPrivateUsage]
    _DerivedCache,  # pyright: ignore[reportPrivateUsage]
    build_bindings,
)
from clawcell.errors import ContractError


def _echo(params: dict[str, Any]) -> dict[str, Any]:
    return params


def _tool(name: str = "t", parameters: Mapping[str, Any] | None = None, **options: Any) -> Tool:
    if parameters is not None:
        options["parameters"] = parameters
    return Tool(name=name, execute=options.pop("execute", _echo), **options)


def _only(catalog: Catalog) -> Binding:
    (binding,) = catalog.bindings
    return binding


def _view(bindings: tuple[Binding, ...]) -> list[tuple[str, str, str | None, dict[str, Any]]]:
    return [(b.callable_name, b.input_hint, b.output_hint, b.metadata) for b in bindings]


def _typed(kind: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"n": {"type": kind}}, "required": ["n"]}


def test_catalogs_of_one_content_share_its_derivations_around_their_own_tools() -> None:
    calls: list[str] = []

    def execute_as(who: str) -> Any:
        def execute(params: dict[str, Any]) -> str:
            calls.append(who)
            return who

        return execute

    one = Catalog([_tool(parameters=_typed("string"), execute=execute_as("one"))])
    two = Catalog([_tool(parameters=_typed("string"), execute=execute_as("two"))])
    first, second = _only(one), _only(two)
    assert first.contract is second.contract
    assert first.tool is one._tools[0] and second.tool is two._tools[0]  # pyright: ignore[reportPrivateUsage]
    assert asyncio.run(two.call("t", {"n": "x"})) == "two"
    assert asyncio.run(one.call("t", {"n": "x"})) == "one"
    assert calls == ["two", "one"]
    first.metadata["description"] = "changed by a caller"  # each binding owns its metadata
    assert second.metadata["description"] == ""
    assert _only(Catalog([_tool(parameters=_typed("string"))])).metadata["description"] == ""


def test_a_schema_edited_in_place_is_new_content_for_the_next_catalog() -> None:
    schema = _typed("string")
    tool = _tool(parameters=schema)
    before = _only(Catalog([tool]))
    schema["properties"]["n"]["type"] = "integer"
    after = _only(Catalog([tool]))
    assert (before.input_hint, after.input_hint) == ("{ n: string }", "{ n: number /* integer */ }")
    assert after.contract is not before.contract
    with pytest.raises(ContractError, match="n: must be integer"):
        asyncio.run(Catalog([tool]).call("t", {"n": "x"}))
    assert asyncio.run(Catalog([tool]).call("t", {"n": 3})) == {"n": 3}


def test_an_edit_after_a_build_does_not_reach_the_entry_other_catalogs_read() -> None:
    def strict(*names: str) -> dict[str, Any]:
        properties = {name: {"type": "number"} for name in names}
        return {"type": "object", "properties": properties, "additionalProperties": False}

    edited = strict("count")
    Catalog([_tool(parameters=edited)])
    edited["properties"] = {"total": {"type": "number"}}  # the caller's object, after the build
    fresh = Catalog([_tool(parameters=strict("count"))])
    assert _only(fresh).contract.parameters is not edited
    with pytest.raises(ContractError, match="Did you mean: count\\?"):
        asyncio.run(fresh.call("t", {"cont": 1}))


def test_an_output_branch_is_narrowed_from_the_content_the_entry_was_built_from() -> None:
    def union(second_kind: str) -> dict[str, Any]:
        return {
            "anyOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {"type": second_kind}}, "required": ["b"]},
            ],
            "x-openclaw-input-discriminator": {
                "version": 1,
                "inputProperty": "mode",
                "mapping": {"x": 0, "y": 1},
            },
        }

    def parameters() -> dict[str, Any]:
        return {"type": "object", "properties": {"mode": {"enum": ["x", "y"]}}}

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        return {"b": 1}

    output = union("number")
    Catalog([_tool(parameters=parameters(), output_schema=output, execute=answer)])
    output["anyOf"][1]["properties"]["b"]["type"] = "string"
    fresh = Catalog([_tool(parameters=parameters(), output_schema=union("number"), execute=answer)])
    assert asyncio.run(fresh.call("t", {"mode": "y"})) == {"b": 1}


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ({"type": "integer", "maximum": 1}, {"type": "integer", "maximum": 1.0}),
        ({"type": "integer", "maximum": 1}, {"type": "integer", "maximum": True}),
        ({"type": "object", "required": ["n"]}, {"type": "object", "required": ("n",)}),
        ({"type": "number", "title": "a"}, {"title": "a", "type": "number"}),
        (_typed("string"), _typed("number")),
    ],
    ids=["int-float", "int-bool", "list-tuple", "key-order", "another-schema"],
)
def test_contents_that_json_would_spell_alike_or_that_differ_get_their_own_derivations(
    left: dict[str, Any], right: dict[str, Any]
) -> None:
    a, b = _only(Catalog([_tool(parameters=left)])), _only(Catalog([_tool(parameters=right)]))
    assert a.contract is not b.contract
    assert a.contract.parameters == left and b.contract.parameters == right
    copied = cast("dict[str, Any]", b.contract.parameters)  # the entry's own copy, types kept
    assert [type(value) for value in copied.values()] == [type(value) for value in right.values()]


@pytest.mark.parametrize(
    "parameters",
    [
        types.MappingProxyType({"type": "object"}),
        type("Schema", (dict,), {})(type="object"),
        {"type": "string", "title": type("Text", (str,), {})("a str subclass")},
    ],
    ids=["mapping-proxy", "dict-subclass", "a-str-subclass"],
)
def test_schemas_of_other_types_are_derived_for_each_catalog_from_the_callers_object(
    parameters: Mapping[str, Any],
) -> None:
    one, two = (
        _only(Catalog([_tool(parameters=parameters)])),
        _only(Catalog([_tool(parameters=parameters)])),
    )
    assert one.contract is not two.contract
    assert one.contract.parameters is parameters and two.contract.parameters is parameters
    assert one.input_hint == two.input_hint


def test_a_cyclic_schema_is_derived_without_the_cache() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    schema["properties"]["self"] = schema
    bindings = build_bindings([_tool(parameters=schema)])
    assert bindings[0].contract.parameters is schema


def test_reserved_names_are_part_of_the_content() -> None:
    tools = [_tool("fs")]
    plain = Catalog(tools)
    reserved = Catalog(tools, reserved_names=["fs"])
    again = Catalog(tools)
    assert _only(plain).callable_name == _only(again).callable_name == "fs"
    assert _only(reserved).callable_name.startswith("fs_")
    assert reserved.binding("fs") is None


def test_labels_descriptions_and_sources_are_part_of_the_content() -> None:
    base = _only(Catalog([_tool(description="adds")]))
    labelled = _only(Catalog([_tool(description="adds", label="Add")]))
    described = _only(Catalog([_tool(description="sums")]))
    client = _only(Catalog([_tool(description="adds", source="client")]))
    assert base.metadata == {
        "callableName": "t",
        "toolName": "t",
        "description": "adds",
        "source": "openclaw",
        "input": "{}",
    }
    assert labelled.metadata["label"] == "Add" and "label" not in base.metadata
    assert described.metadata["description"] == "sums"
    assert (client.metadata["source"], client.input_hint, client.contract.parameters) == (
        "client",
        "unknown",
        None,
    )


def test_a_client_tool_with_any_schema_shares_the_derivation_of_its_name() -> None:
    one = _only(Catalog([_tool(source="client", parameters=_typed("string"))]))
    two = _only(Catalog([_tool(source="client", parameters=_typed("number"))]))
    assert one.contract is two.contract and one.input_hint == "unknown"


def test_mcp_tools_are_counted_not_bound_with_or_without_a_cached_entry() -> None:
    host = _tool("t")
    alone = Catalog([host])
    with_mcp = Catalog([host, _tool("t", source="mcp"), _tool("m", source="mcp")])
    assert _view(with_mcp.bindings) == _view(alone.bindings)
    assert with_mcp.telemetry()["sources"] == {"openclaw": 1, "mcp": 2, "client": 0}
    assert with_mcp.binding("m") is None


def test_an_invalid_schema_is_not_kept_and_each_catalog_raises_its_own_error() -> None:
    broken = {"type": "object", "properties": {"n": {"type": "no-such-type"}}}
    one, two = (
        _only(Catalog([_tool(parameters=broken)])),
        _only(Catalog([_tool(parameters=broken)])),
    )
    assert one.contract is not two.contract
    with pytest.raises(ContractError) as raised:
        asyncio.run(Catalog([_tool(parameters=broken)]).call("t", {}))
    assert raised.value.code == "invalid_contract"


def test_the_cache_keeps_the_most_recently_used_entries_up_to_its_size() -> None:
    cache = _DerivedCache(2, 100)
    sets = {name: [_content(_tool(name))] for name in ("a", "b", "c")}
    first_a = cache.derived(sets["a"], ())
    first_b = cache.derived(sets["b"], ())
    assert cache.derived(sets["a"], ()) is first_a  # a is now the most recent
    cache.derived(sets["c"], ())  # drops b, the least recently used
    assert cache.derived(sets["a"], ()) is first_a
    assert cache.derived(sets["b"], ()) is not first_b
    assert BINDINGS_CACHE_SIZE >= 16


def test_the_cache_holds_at_most_its_budget_of_tools_and_never_a_larger_set() -> None:
    cache = _DerivedCache(10, 3)
    pair = [_content(_tool("a")), _content(_tool("b"))]
    other = [_content(_tool("c")), _content(_tool("d"))]
    large = [_content(_tool(name)) for name in "efgh"]
    first = cache.derived(pair, ())
    assert cache.derived(pair, ()) is first
    kept = cache.derived(other, ())  # 4 tools > 3: the pair makes room
    assert cache.derived(other, ()) is kept
    again = cache.derived(pair, ())  # derived again, and now it drops `other`
    assert again is not first
    assert cache.derived(large, ()) is not cache.derived(large, ())
    assert [d.callable_name for d in cache.derived(large, ())] == list("efgh")
    assert cache.derived(pair, ()) is again  # the larger set made no room for itself
    assert BINDINGS_CACHE_TOOLS >= 16 * BINDINGS_CACHE_SIZE


def test_many_tool_sets_stay_correct_past_the_cache_size() -> None:
    sets = [[_tool(f"tool{i}", parameters=_typed("string")), _tool("x")] for i in range(300)]
    for tools in [*sets, *reversed(sets)]:
        names = [b.callable_name for b in Catalog(tools).bindings]
        assert names == sorted([tools[0].name, "x"])


def test_threads_building_catalogs_at_once_each_get_their_own_contents_derivations() -> None:
    cache = _DerivedCache(3, 100)
    sets = [
        [_tool(f"t{i}", parameters=_typed(kind))] for i in range(6) for kind in ("string", "number")
    ]
    expected = [_derive([_content(t) for t in tools], ()) for tools in sets]
    start = threading.Barrier(4)
    wrong: list[object] = []

    def work(offset: int) -> None:
        start.wait()
        for round_ in range(200):
            index = (offset * 5 + round_) % len(sets)
            got = cache.derived([_content(t) for t in sets[index]], ())
            seen = [(d.callable_name, d.input_hint, d.contract.parameters) for d in got]
            want = [(d.callable_name, d.input_hint, d.contract.parameters) for d in expected[index]]
            if seen != want:
                wrong.append((index, seen))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_uncached_and_cached_derivations_are_alike() -> None:
    tools = [
        _tool("b", parameters=_typed("string"), output_schema={"type": "number"}, label="B"),
        _tool("a-b", description="dashes"),
        _tool("class"),
        _tool("b", source="client"),
    ]
    contents = [_content(t) for t in tools[:3]]
    cache = _DerivedCache(4, 100)
    for derived in (cache.derived(contents, ()), cache.derived(contents, ())):
        assert [(d.callable_name, d.input_hint, d.output_hint, d.metadata) for d in derived] == [
            (d.callable_name, d.input_hint, d.output_hint, d.metadata)
            for d in _derive(contents, ())
        ]
    catalog = Catalog(tools)
    assert [b.tool for b in catalog.bindings] == [tools[1], tools[3], tools[2]]
    assert cast(Any, catalog.binding("b")).tool.source == "client"


def test_runtimes_built_over_equal_tools_share_the_derivations() -> None:
    from clawcell import CodeMode

    async def build() -> list[Binding]:
        bound: list[Binding] = []
        for _ in range(2):
            async with CodeMode([_tool("echo", parameters=_typed("string"))]) as mode:
                bound.append(_only(mode.catalog))
        return bound

    first, second = asyncio.run(build())
    assert first.contract is second.contract and first.tool is not second.tool
