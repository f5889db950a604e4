"""The `clawcell` command: one table of commands (see `clawcell.cli`).

To add a command, write `configure(parser)` and `run(args) -> int` in your package and add
one `Command(...)` line to `COMMANDS`.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from typing import Final

from .cli import (
    Command,
    configure_mcp,
    configure_repl,
    configure_run,
    configure_wait,
    run_cell,
    run_cli,
    run_mcp,
    run_repl,
    wait_cell,
)

__all__ = ["COMMANDS", "main"]


def _no_arguments(_parser: argparse.ArgumentParser) -> None:
    pass


def _demo(_args: argparse.Namespace) -> int:
    from ._demo import run_demo

    asyncio.run(run_demo())
    return 0


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
        name="demo", help="a short guided tour of code mode", configure=_no_arguments, run=_demo
    ),
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `clawcell` command."""
    return run_cli(COMMANDS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
