"""`Catalog.with_extension`: the public seam through which MCP joins search and API files."""

from __future__ import annotations

import pytest

from clawcell import Tool
from clawcell.catalog import ApiFile, Catalog, CatalogExtension, SearchEntry
from clawcell.errors import InputError

INVOICES = Tool(name="list_invoices", description="List unpaid invoices.", execute=lambda _: [])
ENTRY = SearchEntry(
    callable_name="MCP.billing.listInvoices",
    catalog_id="mcp:billing:list_invoices",
    name="list_invoices_remote",
    description="List invoices stored at the billing service.",
)
FILE = ApiFile(path="mcp/index.d.ts", description="MCP servers.", content="declare const MCP: {};")


def _extended() -> tuple[Catalog, Catalog]:
    native = Catalog([INVOICES])
    return native, native.with_extension(CatalogExtension(entries=(ENTRY,), files=(FILE,)))


def test_entries_share_one_ranking_and_exact_lookup_with_the_native_tools() -> None:
    native, extended = _extended()
    assert extended.search("invoices") == ["list_invoices", "MCP.billing.listInvoices"]
    assert extended.search("billing service") == ["MCP.billing.listInvoices"]
    assert extended.search("LIST_INVOICES_REMOTE") == ["MCP.billing.listInvoices"]
    assert native.search("billing") == []


def test_native_names_win_an_exact_lookup() -> None:
    twin = SearchEntry(
        callable_name="MCP.x.listInvoices", catalog_id="mcp:x:l", name="list_invoices"
    )
    extended = Catalog([INVOICES]).with_extension(CatalogExtension(entries=(twin,)))
    assert extended.search("list_invoices") == ["list_invoices"]


def test_files_are_listed_after_results_and_read_without_counting_a_describe() -> None:
    native, extended = _extended()
    paths = [f["path"] for f in extended.api_list()["files"]]
    assert paths == ["results.d.ts", "mcp/index.d.ts", "tools/list_invoices.d.ts"]
    assert extended.api_read("/mcp/index.d.ts")["content"] == "declare const MCP: {};"
    assert native.telemetry()["describeCount"] == 0
    with pytest.raises(InputError) as refused:
        native.api_read("mcp/index.d.ts")
    assert refused.value.message == "Unknown API file: mcp/index.d.ts"


def test_the_extended_catalog_shares_counters_and_keeps_its_extension_when_tools_join() -> None:
    native, extended = _extended()
    extended.search("invoices")
    native.search("invoices")
    assert native.telemetry()["searchCount"] == 2
    assert native.telemetry()["counterScope"] == extended.telemetry()["counterScope"]
    grown = extended.with_tools([Tool(name="pay", description="Pay.", execute=lambda _: None)])
    assert grown.search("billing") == ["MCP.billing.listInvoices"]
    assert grown.telemetry()["searchCount"] == 3
