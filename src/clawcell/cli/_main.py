"""The `clawcell` command: one table of commands (see `clawcell.cli`).

To add a command, write `configure(parser)` and `run(args) -> int` in your package and add
one `Command(...)` line to `COMMANDS`.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
import traceback
from collections.abc import Sequence
from typing import Final

from ..errors import ClawcellError
from . import _db as db_command
from ._command import Command, run_cli
from ._failures import DEBUG_VARIABLE, debugging, describe, leaf, quiet_logging
from ._mcp import configure_mcp, run_mcp
from ._repl import configure_repl, run_repl
from ._run import configure_run, configure_wait, run_cell, wait_cell

__all__ = ["COMMANDS", "EXIT_BUG", "EXIT_INTERRUPTED", "main"]

EXIT_BUG: Final = 70
"""Exit status for an error clawcell did not expect (a bug; sysexits' EX_SOFTWARE)."""
EXIT_INTERRUPTED: Final = 130
"""Exit status after Ctrl-C (128 + SIGINT), as shells report it."""


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
    from ._serve_options import configure

    # The options are declared without the extra, so `serve --help` lists them on any
    # install; running the command without it says which extra to install.
    parser.description = "Serve the web Control UI (needs the [ui] extra)."
    configure(parser)


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
    """Entry point of the `clawcell` command.

    Every failure is one line on stderr, never a traceback: a clawcell error or an unusable
    file exits 2, Ctrl-C exits 130, anything unexpected exits 70 and says how to see the
    traceback (`CLAWCELL_DEBUG=1`, which also shows the tracebacks of logged warnings).

    Raises:
        SystemExit: For `--help`, `--version` and refused arguments (status 2).
    """
    debug = debugging()
    try:
        with quiet_logging(debug):
            return run_cli(COMMANDS, argv)
    except KeyboardInterrupt:
        print("clawcell: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # the last line of defence: one line, never a traceback
        if debug:
            traceback.print_exc()
        if isinstance(leaf(exc), ClawcellError | OSError):
            print(f"clawcell: {describe(exc)}", file=sys.stderr)
            return 2
        print(
            f"clawcell: unexpected error: {describe(exc)}; run with {DEBUG_VARIABLE}=1 for "
            "the traceback and report it.",
            file=sys.stderr,
        )
        return EXIT_BUG


if __name__ == "__main__":
    raise SystemExit(main())
