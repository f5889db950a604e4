"""`clawcell run CELL` and `clawcell wait RUN_ID`: one leg of a cell, its envelope as JSON.

The envelope is printed without its `telemetry` block unless `--telemetry` asks for it: a
person reading `return 6 * 7` wants the status and the value, not a block of counters. Scripts
that want the counters pass the flag; the rest of the envelope is the protocol's, unchanged.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ._files import check_store_file, read_cell
from ._runtime import add_cell_options, open_mode, settings_from
from ._settings import Settings

__all__ = ["configure_run", "configure_wait", "run_cell", "wait_cell"]

_STORE_HELP = "a SQLite file for store values and parked cells (default: in memory)"


def configure_run(parser: argparse.ArgumentParser) -> None:
    """Arguments of `clawcell run`."""
    parser.add_argument("cell", help="a JavaScript file with the cell's code, or - for stdin")
    add_cell_options(parser, store_help=_STORE_HELP)
    _add_telemetry_option(parser)


def configure_wait(parser: argparse.ArgumentParser) -> None:
    """Arguments of `clawcell wait`."""
    parser.add_argument("run_id", metavar="RUN_ID", help="the runId of a waiting envelope")
    add_cell_options(parser, store_help="the SQLite file the cell was parked in (required)")
    _add_telemetry_option(parser)


def _add_telemetry_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--telemetry",
        action="store_true",
        help="also print the envelope's telemetry block (catalog size, searches, calls)",
    )


def run_cell(args: argparse.Namespace) -> int:
    """Run one cell and print its envelope."""
    code = read_cell(args.cell)
    settings = settings_from(args)
    envelope = asyncio.run(_call(settings, "exec", {"code": code}))
    return _report(envelope, settings, args)


def wait_cell(args: argparse.Namespace) -> int:
    """Continue a parked cell and print its envelope."""
    settings = settings_from(args)
    target = settings.store_target(None)
    if target is None:
        raise ConfigurationError(
            "`clawcell wait` needs `--store PATH` (and `--session ID`): the store the cell was "
            "parked in by `clawcell run --store PATH`."
        )
    if isinstance(target, Path):
        check_store_file(target, create=False)  # a missing file: nothing to wait for
    envelope = asyncio.run(_call(settings, "wait", {"runId": args.run_id}))
    return _report(envelope, settings, args)


async def _call(settings: Settings, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    command = "run" if tool == "exec" else "wait"
    async with open_mode(settings, default_store=None, command=command) as mode:
        return await mode.call_tool(tool, arguments)


def _report(envelope: dict[str, Any], settings: Settings, args: argparse.Namespace) -> int:
    shown = envelope if args.telemetry else {k: v for k, v in envelope.items() if k != "telemetry"}
    print(json.dumps(shown, indent=2, ensure_ascii=False))
    if envelope.get("status") == "waiting":
        print(_waiting_hint(str(envelope.get("runId")), settings, args), file=sys.stderr)
    return 1 if envelope.get("status") == "failed" else 0


def _waiting_hint(run_id: str, settings: Settings, args: argparse.Namespace) -> str:
    path = settings.store_target(None)
    if path is None:
        return (
            "clawcell: the cell is waiting, but it was parked in memory and ends with this "
            "process; run it with `--store PATH` to continue it later with `clawcell wait`."
        )
    words = ["clawcell", "wait", run_id, "--store", str(path)]
    words += ["--session", settings.session or "default"]
    words += [w for spec in args.tools for w in ("--tools", spec)]
    words += [w for file in args.mcp for w in ("--mcp", file)]
    words += ["--config", args.config] if args.config else []
    return f"clawcell: the cell is waiting; continue it with: {shlex.join(words)}"
