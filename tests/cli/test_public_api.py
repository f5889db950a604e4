"""The public surface of `clawcell.cli` is deliberate, and the command table is complete."""

from __future__ import annotations

from clawcell import cli
from clawcell._cli import COMMANDS


def test_all_is_pinned_sorted_and_exported() -> None:
    assert cli.__all__ == [
        "MEMORY",
        "Command",
        "Settings",
        "add_cell_options",
        "build_parser",
        "configure_mcp",
        "configure_repl",
        "configure_run",
        "configure_wait",
        "format_envelope",
        "limit_names",
        "load_settings",
        "load_tools",
        "open_settings_store",
        "parse_limits",
        "run_cell",
        "run_cli",
        "run_mcp",
        "run_repl",
        "settings_from",
        "state_directory",
        "store_option",
        "wait_cell",
    ]
    assert all(hasattr(cli, name) for name in cli.__all__)


def test_the_command_table_names_every_command_once() -> None:
    assert [c.name for c in COMMANDS] == [
        "run",
        "wait",
        "repl",
        "mcp",
        "chat",
        "serve",
        "automations",
        "db",
        "demo",
    ]
    parser = cli.build_parser(COMMANDS)
    assert parser.parse_args(["mcp", "serve", "--http"]).http is True
