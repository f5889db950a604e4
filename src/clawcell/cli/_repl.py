"""`clawcell repl`: type cells, see their envelopes, keep state between them.

A cell is every line up to an empty line (or the end of input). All cells run in one
`CodeMode`, so `results.save` references and `store` values carry over. Lines starting with
`.` are commands: `.wait [RUN_ID]` continues a waiting cell (the last one by default),
`.tools` prints the quick index, `.mcp` the state of the MCP servers, `.help`, `.exit`.
Prompts are shown only when the input is a terminal, so piped input gives clean output.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any, TextIO

from .. import CodeMode
from ..errors import ClawcellError
from ._event_loop import read_line
from ._runtime import add_cell_options, open_mode, settings_from
from ._settings import Settings

__all__ = ["configure_repl", "format_envelope", "run_repl"]

HELP = (
    "End a cell with an empty line. Commands: .wait [RUN_ID] continues a waiting cell, "
    ".tools lists the tools, .mcp shows the MCP servers, .exit leaves."
)


def configure_repl(parser: argparse.ArgumentParser) -> None:
    """Arguments of `clawcell repl`."""
    add_cell_options(parser, store_help="a SQLite file for store values and parked cells")


def run_repl(args: argparse.Namespace) -> int:
    """Read cells until the end of input or `.exit`."""
    settings = settings_from(args)
    return asyncio.run(_session(settings, sys.stdin, sys.stdout))


async def _session(settings: Settings, source: TextIO, out: TextIO) -> int:
    async with open_mode(settings, default_store=None, command="repl") as mode:
        repl = _Repl(mode, out)
        if source.isatty():
            out.write(f"clawcell repl. {HELP}\n")
        async for chunk in _chunks(source, out):
            if not await repl.handle(chunk):
                break
    return 0


class _Repl:
    def __init__(self, mode: CodeMode, out: TextIO) -> None:
        self._mode = mode
        self._out = out
        self._waiting: str | None = None

    async def handle(self, chunk: str) -> bool:
        """Run one cell or command; `False` to stop."""
        word, _, rest = chunk.strip().partition(" ")
        try:
            if word in (".exit", ".quit"):
                return False
            if word == ".help":
                self._print(HELP)
            elif word == ".tools":
                self._print(self._mode.catalog.quick_index() or "(no tools)")
            elif word == ".mcp":
                await self._mcp()
            elif word == ".wait":
                await self._call("wait", {"runId": rest.strip() or self._waiting or ""})
            elif word.startswith("."):
                self._print(f"unknown command {word!r}. {HELP}")
            else:
                await self._call("exec", {"code": chunk})
        except ClawcellError as exc:
            self._print(f"error ({exc.code}): {exc.message}")
        return True

    async def _mcp(self) -> None:
        status = await self._mode.mcp_status()
        for name, state in status.items():
            cause = f": {state.cause}" if state.cause else ""
            self._print(f"MCP.{state.identifier} ({name}) {state.state}{cause}")
        if not status:
            self._print("(no MCP servers)")

    async def _call(self, tool: str, arguments: dict[str, Any]) -> None:
        envelope = await self._mode.call_tool(tool, arguments)
        self._waiting = envelope.get("runId") if envelope.get("status") == "waiting" else None
        self._print(format_envelope(envelope))

    def _print(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()


async def _chunks(source: TextIO, out: TextIO) -> AsyncIterator[str]:
    """Cells and commands: blank-line separated; a `.command` line stands alone."""
    tty = source.isatty()
    lines: list[str] = []
    while True:
        if tty:
            out.write("...... " if lines else "cell> ")
            out.flush()
        line = await read_line(source)
        if not line:
            break
        text = line.rstrip("\n")
        if not lines and text.startswith("."):
            yield text
        elif text.strip():
            lines.append(text)
        elif lines:
            yield "\n".join(lines)
            lines = []
    if lines:
        yield "\n".join(lines)


def format_envelope(envelope: dict[str, Any]) -> str:
    """An envelope for people: status line, output items, then the value or the error."""
    status = envelope.get("status")
    lines = [_headline(envelope)]
    items: list[Any] = envelope.get("output") or []
    lines += [_item(item) for item in items]
    if status == "completed" and envelope.get("value") is not None:
        lines.append("=> " + _json(envelope.get("value")))
    if status == "failed":
        lines.append(f"!! {envelope.get('error')}")
    warnings: list[Any] = envelope.get("warnings") or []
    lines += [f"warning: {w}" for w in warnings]
    return "\n".join(lines)


def _headline(envelope: dict[str, Any]) -> str:
    status = envelope.get("status")
    if status == "waiting":
        return f"-- waiting: {envelope.get('runId')} (type .wait to continue)"
    if status == "failed":
        return f"-- failed: {envelope.get('code')} in {envelope.get('failurePhase')}"
    return f"-- {status}"


def _item(item: Any) -> str:
    if isinstance(item, dict) and item.get("type") == "text":  # pyright: ignore[reportUnknownMemberType]
        return str(item.get("text"))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    if isinstance(item, dict) and item.get("type") == "json":  # pyright: ignore[reportUnknownMemberType]
        return _json(item.get("value"))  # pyright: ignore[reportUnknownMemberType]
    return _json(item)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
