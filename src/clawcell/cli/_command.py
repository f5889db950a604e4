"""The command table of `clawcell`: each command is a `configure(parser)` / `run(args)` pair.

Packages that add a command (`clawcell chat`, `clawcell serve`, …) write those two functions
and register them with one `Command(...)` line in `clawcell/cli/_main.py`.

A usage error (an unknown option, a missing argument) is one line on stderr naming the
problem and where the usage is, and exit status 2; argparse's usage block is left to
`--help`.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence
from importlib.metadata import version
from typing import Any, NoReturn

from .._lazy import value_class
from ..errors import ClawcellError

__all__ = ["Command", "UsageError", "build_parser", "run_cli"]

DESCRIPTION = "Code mode for AI agents: run JavaScript cells that call typed Python tools."
_REQUIRED = "the following arguments are required: "


class UsageError(SystemExit):
    """A command line argparse refused; already printed, exit status 2."""

    def __init__(self) -> None:
        super().__init__(2)


class _Parser(argparse.ArgumentParser):
    """An `ArgumentParser` whose errors are one line: the problem and where help is."""

    _given: Sequence[str] = ()

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        if message.startswith(_REQUIRED):
            # argparse checks required arguments before unknown ones: `clawcell --bogus`
            # would say a COMMAND is missing. An unknown option is the real problem.
            unknown = [a for a in self._given if a.startswith("-") and not self._knows(a)]
            if unknown:
                message = f"unrecognized arguments: {' '.join(unknown)}"
        usage_error(self.prog, message)

    def _knows(self, argument: str) -> bool:
        option = argument.split("=", 1)[0]
        return option in self._option_string_actions or option == "-"


def usage_error(prog: str, message: str) -> NoReturn:
    """Print `prog: message; see `prog --help`` and exit 2."""
    print(f"{prog}: {message}; see `{prog} --help`.", file=sys.stderr)
    raise UsageError


@value_class
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
    parser = _Parser(prog="clawcell", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"clawcell {version('clawcell')}")
    names = ", ".join(c.name for c in commands)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", help=names)
    for command in commands:
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
        sub.set_defaults(handler=command.run, parser=sub)
    return parser


def run_cli(commands: Sequence[Command], argv: Sequence[str] | None = None) -> int:
    """Parse `argv` and run the chosen command; clawcell errors print and exit 2.

    Raises:
        UsageError: The arguments were refused (exit status 2, already printed).
    """
    parser = build_parser(commands)
    args, extra = parser.parse_known_args(argv)
    if extra:
        where: argparse.ArgumentParser = getattr(args, "parser", parser)
        usage_error(where.prog, f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        names = ", ".join(c.name for c in commands)
        usage_error(parser.prog, f"a COMMAND is needed, one of {names}")
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except (ClawcellError, OSError) as exc:
        from ._failures import debugging, describe

        if debugging():
            traceback.print_exc()
        print(f"clawcell: {describe(exc)}", file=sys.stderr)
        return 2
