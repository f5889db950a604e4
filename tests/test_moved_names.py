"""Public names that moved in the layout of issue 27 stay reachable from their old package for
one release, with a `DeprecationWarning` that names the new home."""

from __future__ import annotations

import importlib

import pytest

MOVED = [
    ("clawcell.mcp", "CodeModeServer", "clawcell.mcp_server"),
    ("clawcell.mcp", "serve_http", "clawcell.mcp_server"),
    ("clawcell.mcp", "ApprovalPolicy", "clawcell.mcp_server"),
    ("clawcell.agent", "configure_chat", "clawcell.cli._chat"),
    ("clawcell.agent", "configured_agent", "clawcell.cli"),
    ("clawcell.agent", "run_chat", "clawcell.cli._chat"),
    ("clawcell.ui", "configure", "clawcell.cli._serve"),
    ("clawcell.ui", "run", "clawcell.cli._serve"),
    ("clawcell.automations", "automations_tool", "clawcell.tools._automations._tool"),
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED, ids=[f"{o}.{n}" for o, n, _ in MOVED])
def test_a_moved_name_warns_and_is_the_new_object(old: str, name: str, new: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"`{old}\.{name}` moved to `"):
        value = getattr(importlib.import_module(old), name)
    assert value is getattr(importlib.import_module(new), name)


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    mcp = importlib.import_module("clawcell.mcp")
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        _ = mcp.nothing_here


def test_a_name_moved_to_a_private_home_says_what_to_use_instead() -> None:
    automations = importlib.import_module("clawcell.automations")
    with pytest.warns(DeprecationWarning) as caught:
        _ = automations.automations_tool
    assert str(caught[0].message) == (
        "`clawcell.automations.automations_tool` moved to "
        "`clawcell.tools._automations._tool.automations_tool`; build the tool with "
        "`clawcell.tools.automations(store, …)` (the old name goes away in the next release)"
    )
