"""Callable-name derivation (spec §3.2)."""

from __future__ import annotations

import hashlib

import pytest

from clawcell import Tool
from clawcell.catalog import Catalog
from clawcell.catalog._names import callable_base, locale_key


async def _noop(params: dict[str, object]) -> dict[str, object]:
    return params


def _names(*tool_names: str) -> list[str]:
    catalog = Catalog([Tool(name=name, execute=_noop) for name in tool_names])
    return [binding.callable_name for binding in catalog.bindings]


def _suffix(name: str) -> str:
    return hashlib.sha256(f"openclaw:core:{name}".encode()).hexdigest()[:8]


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("web_search", "web_search"),
        ("llm-task", "llm_task"),
        ("9patch", "tool_9patch"),
        ("__openclawResult", "tool___openclawResult"),
        ("a.b c", "a_b_c"),
        ("$ok", "$ok"),
    ],
)
def test_base_name_replaces_non_identifier_characters(name: str, base: str) -> None:
    assert callable_base(name) == base


def test_reserved_globals_and_keywords_get_a_hash_suffix() -> None:
    assert _names("catalog", "class", "results") == [
        f"catalog_{_suffix('catalog')}",
        f"class_{_suffix('class')}",
        f"results_{_suffix('results')}",
    ]


def test_an_exact_name_wins_over_a_normalized_one() -> None:
    assert _names("llm-task", "llm_task") == ["llm_task", f"llm_task_{_suffix('llm-task')}"]


def test_names_sort_like_javascript_locale_compare() -> None:
    ordered = sorted(["tool_9patch", "tool___x", "Beta", "alpha", "a_b", "ab"], key=locale_key)
    assert ordered == ["a_b", "ab", "alpha", "Beta", "tool___x", "tool_9patch"]


def test_a_client_tool_shadows_a_host_tool_with_the_same_name() -> None:
    host = Tool(name="shared_action", execute=_noop)
    client = Tool(name="shared_action", execute=_noop, source="client")
    catalog = Catalog([host, client])
    assert [b.tool for b in catalog.bindings] == [client]
    assert catalog.telemetry()["catalogSize"] == 2
