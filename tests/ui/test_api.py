"""The public surface of `clawcell.ui`."""

from __future__ import annotations

import types

import pytest

import clawcell.ui

UI = [
    "AgentEvent",
    "CellRunner",
    "ChatAgent",
    "DocumentStore",
    "EmbedSandbox",
    "PendingPrompt",
    "SessionSummary",
    "UiServers",
    "UiSettings",
    "bind_listeners",
    "canvas_tool",
    "create_app",
    "demo_agent",
    "load_settings",
    "serve_ui",
    "widget_tool",
]


def test_the_ui_exports_exactly_its_public_names() -> None:
    assert clawcell.ui.__all__ == UI
    public = {
        name
        for name, value in vars(clawcell.ui).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "annotations"
    }
    assert public == set(UI)


@pytest.mark.parametrize("name", [n for n in UI if n != "EmbedSandbox"])  # a Literal alias
def test_every_public_name_has_a_docstring(name: str) -> None:
    assert getattr(clawcell.ui, name).__doc__
