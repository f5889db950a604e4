"""The `clawcell` command line: `clawcell run CELL.js` and `clawcell demo`."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ._codemode import CodeMode
from ._limits import Limits
from .catalog import Tool
from .errors import ClawcellError, ConfigurationError

__all__ = ["main"]


def _load_tools(spec: str) -> list[Tool]:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(f"--tools takes `module:attribute`, got {spec!r}.")
    try:
        target: Any = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"cannot load tools from {spec!r}: {exc}") from exc
    if callable(target) and not isinstance(target, Tool):
        target = target()
    if isinstance(target, Tool):
        return [target]
    tools = list(target) if isinstance(target, Iterable) else [target]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    if not all(isinstance(t, Tool) for t in tools):  # pyright: ignore[reportUnknownVariableType]
        raise ConfigurationError(f"{spec!r} must be a Tool or an iterable of Tool values.")
    return tools  # pyright: ignore[reportUnknownVariableType]


def _parse_limits(pairs: Sequence[str]) -> Limits:
    config: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep:
            raise ConfigurationError(f"--limit takes `name=value`, got {pair!r}.")
        try:
            config[name.strip()] = int(raw)
        except ValueError as exc:
            raise ConfigurationError(f"--limit {name}: {raw!r} is not an integer.") from exc
    return Limits.from_config(config)


async def _run(path: Path, tools: list[Tool], limits: Limits) -> dict[str, Any]:
    async with CodeMode(tools, limits=limits) as mode:
        return await mode.call_tool("exec", {"code": path.read_text("utf-8")})


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="clawcell", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run one cell and print its envelope as JSON")
    run.add_argument("cell", type=Path, help="a JavaScript file with the cell's code")
    run.add_argument("--tools", action="append", default=[], help="module:attribute of tools")
    run.add_argument("--limit", action="append", default=[], help="a limit, e.g. timeoutMs=2000")
    commands.add_parser("demo", help="a short guided tour of code mode")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `clawcell` command."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "demo":
            from ._demo import run_demo

            asyncio.run(run_demo())
            return 0
        tools = [tool for spec in args.tools for tool in _load_tools(spec)]
        envelope = asyncio.run(_run(args.cell, tools, _parse_limits(args.limit)))
    except (ClawcellError, OSError) as exc:
        print(f"clawcell: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(envelope, indent=2, ensure_ascii=False))
    return 0 if envelope.get("status") != "failed" else 1


if __name__ == "__main__":
    raise SystemExit(main())
