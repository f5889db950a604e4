"""The `clawcell` command: one table of commands (see `clawcell.cli`).

To add a command, write `configure(parser)` and `run(args) -> int` in your package and add
one `Command(...)` line to `COMMANDS`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import sys
from collections.abc import Sequence
from typing import Final

from . import _db as db_command
from ._command import Command, run_cli
from ._mcp import configure_mcp, run_mcp
from ._repl import configure_repl, run_repl
from ._run import configure_run, configure_wait, run_cell, wait_cell

__all__ = ["COMMANDS", "main"]


def _no_arguments(_parser: argparse.ArgumentParser) -> None:
    pass


def _demo(_args: argparse.Namespace) -> int:
    from ._demo import run_demo

    asyncio.run(run_demo())
    return 0


def _configure_chat(parser: argparse.ArgumentParser) -> None:
    from ._chat import configure_chat

    configure_chat(parser)


def _chat(args: argparse.Namespace) -> int:
    from ._chat import run_chat

    return run_chat(args)


def _configure_automations(parser: argparse.ArgumentParser) -> None:
    from ._automations import configure_worker

    configure_worker(parser)


def _automations(args: argparse.Namespace) -> int:
    from ._automations import run_worker

    return run_worker(args)


def _configure_serve(parser: argparse.ArgumentParser) -> None:
    with contextlib.suppress(ImportError):  # without the extra, `serve` says how to get it
        importlib.import_module("clawcell.cli._serve").configure(parser)


def _serve(args: argparse.Namespace) -> int:
    try:
        serve = importlib.import_module("clawcell.cli._serve")
    except ImportError as exc:
        print(f"clawcell: {exc}", file=sys.stderr)
        return 2
    return int(serve.run(args))


COMMANDS: Final[tuple[Command, ...]] = (
    Command(
        name="run",
        help="run one cell and print its envelope as JSON",
        configure=configure_run,
        run=run_cell,
    ),
    Command(
        name="wait",
        help="continue a parked cell and print its envelope",
        configure=configure_wait,
        run=wait_cell,
    ),
    Command(
        name="repl",
        help="run cells interactively against the configured tools",
        configure=configure_repl,
        run=run_repl,
    ),
    Command(
        name="mcp",
        help="serve code mode to MCP clients (`clawcell mcp serve`)",
        configure=configure_mcp,
        run=run_mcp,
    ),
    Command(
        name="chat",
        help="chat with an agent in the terminal",
        configure=_configure_chat,
        run=_chat,
    ),
    Command(
        name="serve",
        help="the web Control UI (needs clawcell[ui])",
        configure=_configure_serve,
        run=_serve,
    ),
    Command(
        name="automations",
        help="run a scheduler worker for automations (`clawcell automations run`)",
        configure=_configure_automations,
        run=_automations,
    ),
    Command(
        name="db",
        help="manage a durable session store (`clawcell db upgrade`)",
        configure=db_command.configure,
        run=db_command.run,
    ),
    Command(
        name="demo", help="a short guided tour of code mode", configure=_no_arguments, run=_demo
    ),
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `clawcell` command."""
    return run_cli(COMMANDS, argv)
