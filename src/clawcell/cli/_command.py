"""The command table of `clawcell`: each command is a `configure(parser)` / `run(args)` pair.

Packages that add a command (`clawcell chat`, `clawcell serve`, …) write those two functions
and register them with one `Command(...)` line in `clawcell/_cli.py`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version

from ..errors import ClawcellError

__all__ = ["Command", "build_parser", "run_cli"]

DESCRIPTION = "Code mode for AI agents: run JavaScript cells that call typed Python tools."


@dataclass(frozen=True, kw_only=True)
class Command:
    """One `clawcell <name>` command.

    Attributes:
        name: The word after `clawcell`.
        help: One line for `clawcell --help`.
        configure: Adds the command's arguments to its parser.
        run: Runs it; returns the exit status (0 success, 1 a failed cell, 2 bad input).
    """

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def build_parser(commands: Sequence[Command]) -> argparse.ArgumentParser:
    """The `clawcell` parser with one sub-parser per command and `--version`."""
    parser = argparse.ArgumentParser(prog="clawcell", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"clawcell {version('clawcell')}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in commands:
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
        sub.set_defaults(handler=command.run)
    return parser


def run_cli(commands: Sequence[Command], argv: Sequence[str] | None = None) -> int:
    """Parse `argv` and run the chosen command; clawcell errors print and exit 2."""
    args = build_parser(commands).parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except (ClawcellError, OSError) as exc:
        print(f"clawcell: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
