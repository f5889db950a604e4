"""The public surface: each `__all__` is sorted and names exactly what is exported."""

from __future__ import annotations

import types
from typing import Any, cast

import pytest

import clawcell
import clawcell._cell
import clawcell._runs
import clawcell._source
import clawcell.automations
import clawcell.catalog
import clawcell.reply
import clawcell.runtime
import clawcell.store

PACKAGE = [
    "CellUpdate",
    "ClawcellError",
    "ClosedError",
    "CodeMode",
    "CodeModeOptions",
    "ConfigurationError",
    "ContractError",
    "InputError",
    "Limits",
    "McpError",
    "MemoryStore",
    "ModelError",
    "RuntimeUnavailableError",
    "SQLiteStore",
    "SessionStore",
    "SnapshotError",
    "StoreRangeError",
    "StoreTypeError",
    "StoreUnavailableError",
    "Tool",
    "ToolError",
    "ToolResult",
    "TurnLimitError",
    "render",
]
RUNTIME = [
    "EXECUTOR_NAMES",
    "EngineFailure",
    "Executor",
    "ExecutorGuest",
    "FailureKind",
    "Guest",
    "GuestConfig",
    "GuestPool",
    "ParseFailure",
    "QuickJSExecutor",
    "SegmentRunner",
    "StepResult",
    "TurnCrossing",
    "V8Executor",
    "bwrap_binary",
    "checked_executor_name",
    "compiled_reactor",
    "die_with_parent",
    "executor_named",
    "parse_failure",
    "pid_guard",
    "run_on_guest_thread",
    "script_failure",
    "wire",
]
AUTOMATIONS = [
    "Outcome",
    "PayloadRunner",
    "Scheduler",
    "TurnRunner",
    "check_schedule",
    "delete_job_session",
    "embedded_worker",
    "next_after",
]
MODULES = [
    clawcell,
    # The engine stages: what one stage may take from another (tests/test_imports.py).
    clawcell._cell,
    clawcell._runs,
    clawcell._source,
    clawcell.automations,
    clawcell.catalog,
    clawcell.reply,
    clawcell.runtime,
    clawcell.store,
]


def _public_attributes(module: types.ModuleType) -> set[str]:
    """Public names bound in `module`, leaving out `annotations` and the submodules it does
    not export by name (`clawcell.runtime.wire` is one it does)."""
    exported: set[str] = set(getattr(module, "__all__", ()))
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (not isinstance(value, types.ModuleType) or name in exported)
        and name != "annotations"
    }


def test_the_package_exports_exactly_its_public_names() -> None:
    assert clawcell.__all__ == PACKAGE


def test_the_runtime_exports_exactly_its_public_names() -> None:
    assert clawcell.runtime.__all__ == RUNTIME


def test_automations_export_what_fires_jobs_and_the_job_rules_not_a_second_tool_entry() -> None:
    # The tool's one entry is `clawcell.tools.automations` (issue 40).
    assert clawcell.automations.__all__ == AUTOMATIONS
    assert all(getattr(clawcell.automations, name).__doc__ for name in AUTOMATIONS)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_all_is_sorted_and_matches_the_module(module: types.ModuleType) -> None:
    names: list[str] = module.__all__
    # Constants (UPPER_CASE) may lead, as in `clawcell.store`; otherwise plain sorting.
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    assert len(set(names)) == len(names)
    for name in names:  # names a module loads on first use are bound once touched
        getattr(module, name)
    assert set(names) == _public_attributes(module)


@pytest.mark.parametrize("name", PACKAGE)
def test_every_public_name_has_a_docstring(name: str) -> None:
    assert getattr(clawcell, name).__doc__


def test_the_mcp_and_reply_subpackages_are_reachable_from_the_package_root() -> None:
    # They load on first use, so `import clawcell` alone stays light.
    package = cast(Any, clawcell)
    assert package.mcp.StdioServer.__name__ == "StdioServer"
    assert callable(package.reply.build_reply)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = package.nope
