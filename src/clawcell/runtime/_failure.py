"""Engine failures: the one place where traps and QuickJS exceptions get their meaning.

Guest code fails in engine terms: a QuickJS call returns the exception value (`JSException`,
raised by `_wasm._instance`), wasm traps (`GuestTrap`, raised by `_wasm._exports`: the epoch
backstop, an exhausted call stack, an access out of bounds) or the guest has no memory left to
report anything (`MemoryError`). Neither exception leaves the runtime: the guest's segment methods
catch them and return an `EngineFailure` built by `engine_failure`, whose `kind` the rest of
clawcell reads. Trap messages are wasmtime's and not a stable interface, so they are matched
here and nowhere else.
"""

from __future__ import annotations

import time
from typing import Final, Literal

from .._lazy import value_class
from ._wasm._exports import GuestTrap

__all__ = ["ENGINE_EXCEPTIONS", "EngineFailure", "FailureKind", "JSException", "engine_failure"]

FailureKind = Literal[
    "syntax_error", "thrown", "timeout", "stack_overflow", "out_of_memory", "trap"
]
"""Why guest code stopped:

* `syntax_error`: the parser refused the cell (`message` is its, `stack` its frames);
* `thrown`: a value was thrown out of the guest (`message` is `String(value)`);
* `timeout`: the leg's deadline stopped it (interrupt handler or epoch backstop);
* `stack_overflow`: the wasm call stack ran out (deep recursion in native code);
* `out_of_memory`: the guest's memory ran out;
* `trap`: any other wasm trap (`message` is its first line).
"""

_INTERRUPTED: Final = "InternalError: interrupted"
_PARSER_REFUSALS: Final = ("SyntaxError", "RangeError: Maximum call stack size exceeded")
"""What QuickJS's parser throws for a source it refuses: a syntax error, or nesting deeper
than its stack allows (which acorn, the release's parser, refuses as a syntax error too)."""
_OUT_OF_MEMORY: Final = ("InternalError: out of memory", "null")
"""QuickJS's out-of-memory error; `null` when memory was too short to build even that error
(QuickJS then throws `null` rather than recurse)."""


class JSException(Exception):
    """A QuickJS call returned the exception value (private to the runtime).

    Attributes:
        text: `String(thrown value)`.
        stack: The thrown value's `stack` property as a string ("" when absent).
    """

    def __init__(self, text: str, stack: str = "") -> None:
        super().__init__(text)
        self.text = text
        self.stack = stack


ENGINE_EXCEPTIONS: Final = (JSException, GuestTrap, MemoryError)
"""What guest code can raise; `engine_failure` translates each."""


@value_class
class EngineFailure:
    """Guest code stopped without a result.

    Attributes:
        kind: Why (see `FailureKind`).
        message: The thrown value's text, the parser's message or the trap's first line.
        stack: The thrown value's stack ("" when it has none).
    """

    kind: FailureKind
    message: str = ""
    stack: str = ""


def engine_failure(exc: BaseException, *, deadline: float, parsing: bool = False) -> EngineFailure:
    """The failure an engine exception means, for a segment that ran until `deadline`.

    While `parsing`, the parser's refusal is a `syntax_error`, and memory running out is
    `out_of_memory` (it was a `syntax_error` too, worded as one: `SyntaxError …: null.`).

    Raises:
        BaseException: the trap's cause, when that is not an `Exception` (a `KeyboardInterrupt`
            or `SystemExit` a signal's handler raised in a host function or the epoch
            callback, which run on the thread of the turn: the event loop's, for a turn on a
            call future): the host's, never the guest's failure.
    """
    if isinstance(exc, JSException):
        if parsing and exc.text.startswith(_PARSER_REFUSALS):
            return EngineFailure(kind="syntax_error", message=exc.text, stack=exc.stack)
        if parsing and exc.text in _OUT_OF_MEMORY:
            return EngineFailure(kind="out_of_memory", message=exc.text)
        if exc.text == _INTERRUPTED and time.monotonic() >= deadline:
            return EngineFailure(kind="timeout", message=exc.text)
        return EngineFailure(kind="thrown", message=exc.text, stack=exc.stack)
    if isinstance(exc, GuestTrap):
        cause = exc.__cause__
        if cause is not None and not isinstance(cause, Exception):
            raise cause
        return _trap(str(exc), deadline)
    return EngineFailure(kind="out_of_memory", message=str(exc))


def _trap(text: str, deadline: float) -> EngineFailure:
    if "call stack exhausted" in text:
        return EngineFailure(kind="stack_overflow", message=text)
    if "wasm trap: interrupt" in text or time.monotonic() >= deadline:
        return EngineFailure(kind="timeout", message=text)
    if "out of bounds" in text or "memory" in text:
        return EngineFailure(kind="out_of_memory", message=text)
    return EngineFailure(kind="trap", message=_first_line(text))


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "unknown trap"
