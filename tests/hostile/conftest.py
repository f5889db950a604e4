"""Reports the hostile corpus's size by category and the peak RSS of the process that ran it
(target: under 1 GiB)."""

from __future__ import annotations

import resource
from collections import Counter
from typing import Final

import pytest

# Where each test's cases belong: a test function's own category, else its module's.
BY_FUNCTION: Final = {
    "test_native_code_flood_times_out": "native-code floods",
    "test_endless_microtask_work_always_times_out": "native-code floods",
    "test_serialization_trap_ends_in_its_recorded_envelope": "serialization traps",
    "test_controller_tampering_ends_in_its_recorded_envelope": "controller tampering",
    "test_output_flood_is_bounded": "output floods",
    "test_returning_100_mb_completes_with_a_truncation_marker": "output floods",
    "test_queue_and_inbox_caps_hold": "queue and inbox caps",
    "test_a_forged_run_id_is_an_input_error_and_changes_nothing": "snapshot and store tampering",
    "test_a_finished_run_cannot_be_waited_on_again": "snapshot and store tampering",
    "test_sessions_sharing_a_store_see_only_their_own_values_and_runs": "session isolation",
    "test_an_epoch_trap_does_not_break_the_next_cell_in_another_code_mode": (
        "mixed guest-thread modes"
    ),
}
BY_MODULE: Final = {
    "test_hostile_agent": "agent turns (bad text, deep arguments, broken models)",
    "test_hostile_cli": "command line (damaged stores, bad files, tool modules, limits)",
    "test_hostile_bridge": "deep and huge bridge arguments",
    "test_hostile_cancel": "cancellation at random points",
    "test_hostile_cells": "hostile cells (runaway, memory, stack, throws, pollution)",
    "test_hostile_fetch": "web_fetch bombs, encodings and redirects",
    "test_hostile_lifecycle": "cancellation at random points",
    "test_hostile_mcp": "malicious MCP server",
    "test_hostile_mcp_rogue": "malicious MCP server",
    "test_hostile_mcp_states": "approvals: forged MCP request states",
    "test_hostile_memory": "host memory",
    "test_hostile_mixed": "mixed guest-thread modes",
    "test_hostile_queue": "queue and inbox caps",
    "test_hostile_realm": "realm escapes and cross-session tampering (both executors)",
    "test_hostile_sessions": "session isolation",
    "test_hostile_snapshot": "snapshot and store tampering",
    "test_hostile_source": "source checks and parsing",
    "test_hostile_stack": "controller tampering",
    "test_hostile_tools": "cancellation at random points",
    "test_hostile_trust": "store writers: forged runs, decisions, results, keys",
    "test_hostile_ui": "Control UI requests",
    "test_hostile_urls": "URLs, media paths and embeds",
    "test_hostile_workspace": "workspace paths, patches and symlink races",
}
_COUNTS: Counter[str] = Counter()


def category(item: pytest.Item) -> str:
    """The corpus category of one collected hostile test case."""
    function = getattr(item, "originalname", item.name)
    if function in BY_FUNCTION:
        return BY_FUNCTION[function]
    return BY_MODULE.get(item.path.stem, "other")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    _COUNTS.clear()
    _COUNTS.update(category(i) for i in items if i.path.parent.name == "hostile")


def peak_rss_mib() -> float:
    """The process's peak resident set size so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    total = sum(_COUNTS.values())
    terminalreporter.write_line(f"hostile corpus: {total} cases collected")
    for name, count in sorted(_COUNTS.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"  {count:4}  {name}")
    terminalreporter.write_line(f"hostile corpus: peak host RSS {peak_rss_mib():.0f} MiB")
