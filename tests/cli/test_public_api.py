"""The public surface of `clawcell.cli` is deliberate, and the command table is complete."""

from __future__ import annotations

from clawcell import cli
from clawcell.cli._command import build_parser
from clawcell.cli._main import COMMANDS


def test_all_is_pinned_sorted_and_exported() -> None:
    assert cli.__all__ == [
        "Command",
        "Settings",
        "build_parser",
        "configured_agent",
        "load_settings",
        "main",
        "run_cli",
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
    parser = build_parser(COMMANDS)
    assert parser.parse_args(["mcp", "serve", "--http"]).http is True
