"""Host-side outputs compared with the values recorded from OpenClaw 2026.9.6."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from clawcell.catalog import Catalog
from clawcell.errors import ContractError, InputError, ToolError

from ._cases import CASES, case_tools, expected_value

TELEMETRY_KEYS = [
    "catalogSize",
    "sources",
    "counterScope",
    "searchCount",
    "describeCount",
    "callCount",
    "visibleTools",
]


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_fresh_catalog_telemetry_matches_the_recorded_shape(case_id: str) -> None:
    catalog = Catalog(case_tools(case_id))
    recorded = CASES[case_id]["expected"][0]["telemetry"]
    telemetry = catalog.telemetry()
    assert list(telemetry) == TELEMETRY_KEYS
    assert telemetry["catalogSize"] == recorded["catalogSize"]
    assert telemetry["sources"] == recorded["sources"]
    assert telemetry["visibleTools"] == ["exec", "wait"]
    assert (telemetry["searchCount"], telemetry["describeCount"], telemetry["callCount"]) == (
        0,
        0,
        0,
    )


@pytest.mark.parametrize("case_id", ["spec-E02/handle-json-via-search", "spec-E03/catalog-all"])
def test_handle_metadata_carries_label_and_both_hints(case_id: str) -> None:
    assert Catalog(case_tools(case_id)).all() == expected_value(case_id)


def _metadata(catalog: Catalog, names: list[str]) -> list[dict[str, Any]]:
    found = [catalog.binding(name) for name in names]
    return [binding.metadata for binding in found if binding is not None]


def test_search_by_exact_name_returns_that_one_handle() -> None:
    catalog = Catalog(case_tools("spec-E02/handle-json-via-search"))
    names = catalog.search("fake_create_ticket")
    assert _metadata(catalog, names) == expected_value("spec-E02/handle-json-via-search")
    assert catalog.telemetry()["searchCount"] == 1


def test_search_by_word_finds_the_ticket_tool() -> None:
    catalog = Catalog(case_tools("spec-E01/search-then-call"))
    assert catalog.search("ticket", 1) == ["fake_create_ticket"]


def test_nested_handles_serialize_to_metadata_without_label() -> None:
    catalog = Catalog(case_tools("spec-E05/nested-handles"))
    names = catalog.search("noop")
    handle = expected_value("spec-E05/nested-handles")["byKey"]["tool"]
    assert _metadata(catalog, names) == [handle]


def test_reserved_and_colliding_names_get_recorded_suffixes() -> None:
    catalog = Catalog(case_tools("spec-E07/reserved-and-colliding-names"))
    names = [binding.callable_name for binding in catalog.bindings]
    assert names == expected_value("spec-E07/reserved-and-colliding-names")["names"]


def test_made_up_name_matches_failing_tool_through_the_shared_token() -> None:
    catalog = Catalog(case_tools("catalog/search-token-overlap"))
    assert catalog.search("zzzz_missing_tool") == expected_value("catalog/search-token-overlap")


def test_catalog_all_order_and_metadata_keys_match_the_record() -> None:
    recorded = expected_value("catalog/all-and-handle-metadata")
    catalog = Catalog(case_tools("catalog/all-and-handle-metadata"))
    handles = {h["callableName"]: h for h in catalog.all()}
    assert list(handles) == recorded["names"]
    assert [*handles["shipping_list"], "describe"] == recorded["keys"]
    assert handles["echo"] == recorded["echoMeta"]
    assert json.dumps(handles["shipping_list"], separators=(",", ":")) == recorded["json"]


def test_describe_matches_the_recorded_objects_and_counts() -> None:
    recorded = expected_value("catalog/describe")
    catalog = Catalog(case_tools("catalog/describe"))
    assert catalog.describe("shipping_list") == recorded["d"]
    assert catalog.describe("fleet_query") == recorded["e"]
    assert catalog.telemetry()["describeCount"] == 2


def test_api_list_of_tools_lists_paths_only_without_a_describe() -> None:
    catalog = Catalog(case_tools("spec-E46/api-list-tools"))
    assert catalog.api_list("tools") == expected_value("spec-E46/api-list-tools")
    assert catalog.telemetry()["describeCount"] == 0


def _read_or_message(catalog: Catalog, path: str) -> str:
    try:
        catalog.api_read(path)
    except InputError as error:
        return error.message
    return "ok"


def test_api_read_of_results_and_bad_paths_match_the_record() -> None:
    recorded = expected_value("api/results-dts-and-bad-paths")
    catalog = Catalog(case_tools("api/results-dts-and-bad-paths"))
    results = catalog.api_read("results.d.ts")
    assert results["path"] == recorded["path"]
    assert results["description"] == recorded["description"]
    assert results["bytes"] == recorded["bytes"]
    assert results["content"][:60] == recorded["startsWith"]
    for path in ["../x", "tools/../results.d.ts", "", "tools/nope.d.ts", "tools//echo.d.ts"]:
        assert _read_or_message(catalog, path) == recorded[path]
    assert len(catalog.api_list("tools/")["files"]) == recorded["prefixed"]
    assert catalog.api_list("nothing")["files"] == recorded["none"]
    assert catalog.telemetry()["describeCount"] == 0


def test_discriminated_tool_returns_each_branch_and_counts_calls() -> None:
    catalog = Catalog(case_tools("spec-E39/input-discriminator"))

    async def run() -> list[Any]:
        return [await catalog.call("fleet_query", {"kind": k}) for k in ("count", "names", "count")]

    assert asyncio.run(run()) == expected_value("spec-E39/input-discriminator")
    assert catalog.telemetry()["callCount"] == 3


def test_missing_input_becomes_an_empty_object() -> None:
    catalog = Catalog(case_tools("tools/echo-input-normalization"))
    recorded = expected_value("tools/echo-input-normalization")
    assert asyncio.run(catalog.call("echo")) == recorded["a"]
    assert asyncio.run(catalog.call("echo", None)) == recorded["b"]


def test_sequential_tool_never_overlaps_itself() -> None:
    catalog = Catalog(case_tools("tools/sequential-execution-mode"))

    async def run() -> list[Any]:
        return list(await asyncio.gather(*(catalog.call("seq_probe", {}) for _ in range(3))))

    assert asyncio.run(run()) == expected_value("tools/sequential-execution-mode")


def _default_catalog() -> Catalog:
    return Catalog(case_tools("catalog/describe"))


def test_output_contract_message_matches_the_release() -> None:
    with pytest.raises(ContractError) as caught:
        asyncio.run(_default_catalog().call("bad_output", {}))
    assert caught.value.code == "output_contract"
    assert caught.value.message == (
        'Tool "bad_output" returned details that do not match its declared outputSchema. '
        "Check current state before retrying; the tool returned and side effects may already "
        "have occurred. Validation: n: must be number."
    )


def test_discriminated_output_checks_the_selected_branch() -> None:
    with pytest.raises(ContractError) as caught:
        asyncio.run(_default_catalog().call("fleet_query", {"kind": "broken"}))
    assert caught.value.message.endswith(
        "Validation: names: must have required property 'names'; "
        '<root>: must not have additional properties: "count".'
    )


def test_input_contract_message_includes_the_expected_input_hint() -> None:
    with pytest.raises(ContractError) as caught:
        asyncio.run(_default_catalog().call("fleet_query", {}))
    assert caught.value.code == "input_contract"
    assert caught.value.message == (
        "Invalid arguments for tool \"fleet_query\": kind: must have required property 'kind'. "
        'Expected input: { kind: "count" | "names" | "broken" }.'
    )


def test_a_throwing_tool_fails_with_its_message_as_tool_error() -> None:
    with pytest.raises(ToolError) as caught:
        asyncio.run(_default_catalog().call("failing_tool", {}))
    assert (caught.value.code, caught.value.message) == (
        "tool_error",
        "shipping backend unavailable",
    )


def test_content_only_result_reaches_the_guest_as_a_content_object() -> None:
    value = asyncio.run(_default_catalog().call("text_only", {}))
    assert value == {"content": [{"type": "text", "text": "plain text result"}]}
