"""The public surface of `clawcell.tools`: a sorted `__all__` naming exactly what is exported."""

from __future__ import annotations

import types

import clawcell.tools

TOOLS = [
    "AddressGuard",
    "BraveProvider",
    "BrowserSettings",
    "FetchCache",
    "FetchSettings",
    "Resolver",
    "SearchOutcome",
    "SearchProvider",
    "SearchResult",
    "SearxngProvider",
    "SendLimits",
    "SessionVisibility",
    "ShellSettings",
    "SystemResolver",
    "WorkspaceLimits",
    "automations",
    "bind_agent",
    "browser",
    "from_config",
    "sessions",
    "shell",
    "web",
    "workspace",
]


def test_tools_all_is_sorted_and_pinned() -> None:
    assert clawcell.tools.__all__ == TOOLS
    assert sorted(TOOLS) == TOOLS


def test_tools_exports_exactly_its_all() -> None:
    public = {
        name
        for name, value in vars(clawcell.tools).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "annotations"
    }
    assert public == set(TOOLS)


def test_every_public_name_has_a_docstring() -> None:
    for name in TOOLS:
        assert getattr(clawcell.tools, name).__doc__, name
