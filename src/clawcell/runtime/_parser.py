"""The release's JavaScript parser, run in a guest of its own on the syntax-error path.

OpenClaw parses a cell on the host with acorn before any executor runs, so the syntax errors a
model reads are acorn's words at acorn's positions ("Unexpected token", "Unterminated string
constant", "'import' and 'export' may only appear at the top level"), not QuickJS's. clawcell
compiles cells with QuickJS as before; only when QuickJS refuses one does it ask acorn
(acorn 8.18.0, unmodified) for the release's wording. Valid cells never pay for it.

acorn is a dependency, not part of clawcell's source: `make` (scripts/fetch-acorn.py) fetches
the pinned npm tarball, checks its hashes and writes `vendor/acorn.js`; wheels carry it. When
the file is absent (a checkout never built with `make`), `parse_failure` answers `None` and
cells get QuickJS's own syntax-error messages.

The parser lives in one process-wide QuickJS instance, created on first use and used under a
lock; a parse that runs past its deadline is interrupted and reported as no answer, so
the caller keeps QuickJS's own message.

Threat model: the cell's source reaches acorn as a string argument, never as code; the
instance holds nothing but acorn and runs no cell.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Final, cast

from .._lazy import value_class
from ._failure import JSException
from ._wasm._engine import compiled_reactor
from ._wasm._instance import Instance

__all__ = ["ParseFailure", "parse_failure", "script_failure"]

_ACORN: Final = Path(__file__).with_name("vendor") / "acorn.js"
# The release parses a cell as the body of an async arrow function, so top-level `await`
# and `return` are legal; positions are then reported relative to the cell.
_PARSE: Final = """(code) => {
  try {
    acorn.parse("(async () => {\\n" + code + "\\n})", { ecmaVersion: "latest" });
    return "null";
  } catch (error) {
    if (!(error instanceof SyntaxError) || !error.loc) return "null";
    const message = String(error.message).replace(/ \\(\\d+:\\d+\\)$/u, "");
    return JSON.stringify([message, error.loc.line - 1, error.loc.column + 1]);
  }
}"""
# A widget's inline `<script>` as the browser reads it: a classic script or a module; acorn's
# line is 1-based and its column 0-based, reported 1-based.
_PARSE_SCRIPT: Final = """(sourceType) => (code) => {
  try {
    acorn.parse(code, { ecmaVersion: "latest", sourceType });
    return "null";
  } catch (error) {
    if (!(error instanceof SyntaxError) || !error.loc) return "null";
    const message = String(error.message).replace(/ \\(\\d+:\\d+\\)$/u, "");
    return JSON.stringify([message, error.loc.line, error.loc.column + 1]);
  }
}"""
_MEMORY_BYTES: Final = 64 * 1024 * 1024
_DEADLINE_SECONDS: Final = 2.0


@value_class
class ParseFailure:
    """Acorn's verdict on a cell: its message and the 1-based position within the cell."""

    message: str
    line: int
    column: int


class _Parser:
    def __init__(self) -> None:
        self._deadline = float("inf")
        self._instance = Instance(
            compiled_reactor(),
            memory_limit_bytes=_MEMORY_BYTES,
            interrupt=lambda: time.monotonic() > self._deadline,
        )
        inst = self._instance
        inst.free_value(inst.eval(_ACORN.read_text("utf-8")))
        self._parse = inst.eval(_PARSE)
        self._scripts = {
            kind: inst.eval(f"({_PARSE_SCRIPT})({json.dumps(kind)})")
            for kind in ("script", "module")
        }
        inst.gc()

    def parse(self, code: str) -> ParseFailure | None:
        try:
            return self._call(self._parse, code)
        except (JSException, MemoryError):
            return None

    def parse_script(self, code: str, kind: str) -> ParseFailure | None:
        return self._call(self._scripts[kind], code)

    def _call(self, function: int, code: str) -> ParseFailure | None:
        self._deadline = time.monotonic() + _DEADLINE_SECONDS
        try:
            text = self._instance.take_string(self._instance.call_with_string(function, code))
        finally:
            self._deadline = float("inf")
            self._instance.gc()
        found: object = json.loads(text)
        if not isinstance(found, list):
            return None
        parts = cast("list[object]", found)
        if len(parts) != 3 or not all(isinstance(n, int) for n in parts[1:]):
            return None
        message, line, column = parts
        return ParseFailure(message=str(message), line=cast(int, line), column=cast(int, column))


_lock = threading.Lock()
_parser: list[_Parser] = []


def parse_failure(code: str) -> ParseFailure | None:
    """Acorn's syntax error for a cell, as the release reports it; `None` when acorn accepts
    the cell or cannot answer (then the caller keeps QuickJS's message)."""
    with _lock:
        if not _parser:
            if not _ACORN.is_file():
                return None
            _parser.append(_Parser())
        return _parser[0].parse(code)


def script_failure(code: str, *, module: bool = False) -> ParseFailure | None:
    """Acorn's first syntax error in a browser script (`module=True`: an ES module), at a
    1-based line and column of `code`; `None` when acorn accepts it.

    Unlike `parse_failure` this fails closed, for callers that must not store what was not
    checked.

    Raises:
        FileNotFoundError: acorn is not installed (`vendor/acorn.js`; run `make`).
        TimeoutError: the parse ran past its deadline or its memory.
    """
    with _lock:
        if not _parser:
            if not _ACORN.is_file():
                raise FileNotFoundError(_ACORN)
            _parser.append(_Parser())
        try:
            return _parser[0].parse_script(code, "module" if module else "script")
        except (JSException, MemoryError) as exc:
            raise TimeoutError("the script could not be parsed within its limits") from exc
