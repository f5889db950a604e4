"""Snapshot tests of generated `mcp/<server>.d.ts` files and the §9.1 naming rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clawcell.mcp._declarations import index_declaration, server_declaration
from clawcell.mcp._names import allocate_identifiers, to_identifier
from clawcell.mcp._namespace import McpNamespace
from clawcell.mcp._types import McpListing, tool_from_mcp

from .servers.kitchen import TOOLS

SNAPSHOTS = Path(__file__).parent / "snapshots"


def _namespace() -> McpNamespace:
    listing = McpListing(
        server_name="kitchen",
        tools=tuple(tool_from_mcp(t) for t in TOOLS),
        resources=True,
        prompts=True,
    )
    return McpNamespace([listing, McpListing(server_name="chrome-devtools")])


@pytest.mark.parametrize("name", ["kitchen", "chromeDevtools"])
def test_server_declaration_matches_its_snapshot(name: str) -> None:
    scope = _namespace().server(name)
    assert scope is not None
    text = server_declaration(scope) + "\n"
    path = SNAPSHOTS / f"{name}.d.ts"
    if os.environ.get("CLAWCELL_UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_index_declaration_references_every_server() -> None:
    assert index_declaration(_namespace()).splitlines()[:3] == [
        '/// <reference path="./chromeDevtools.d.ts" />',
        '/// <reference path="./kitchen.d.ts" />',
        "",
    ]


def test_a_server_named_index_is_inlined_in_the_index_file() -> None:
    text = index_declaration(McpNamespace([McpListing(server_name="index")]))
    assert "/// <reference" not in text
    assert "declare namespace MCP.index {" in text


@pytest.mark.parametrize(
    ("name", "identifier"),
    [
        ("chrome-devtools", "chromeDevtools"),
        ("read_file", "readFile"),
        ("list_invoices", "listInvoices"),
        ("ListInvoices", "listInvoices"),
        ("9patch", "patch"),
        ("__", "tool"),
        ("a.b c", "aBC"),
    ],
)
def test_names_become_camel_case_identifiers(name: str, identifier: str) -> None:
    assert to_identifier(name, "tool") == identifier


def test_collisions_and_reserved_names_get_numeric_suffixes() -> None:
    assert allocate_identifiers(["listInvoices", "list_invoices"], fallback="tool") == {
        "list_invoices": "listInvoices",
        "listInvoices": "listInvoices2",
    }
    assert allocate_identifiers(["constructor", "JSON", "delete", "enum"], fallback="s") == {
        "constructor": "constructor2",
        "JSON": "jSON",
        "delete": "delete2",
        "enum": "enum2",
    }
    assert allocate_identifiers(["resources", "$api"], fallback="tool", used=["resources"]) == {
        "$api": "api",
        "resources": "resources2",
    }
