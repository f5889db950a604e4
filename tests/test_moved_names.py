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
