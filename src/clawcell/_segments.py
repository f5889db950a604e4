"""Guest segments: the parts of a cell's life that run guest code, and what their failures mean.

A segment — parsing the cell, running it until it waits on the host again, describing an
unhandled rejection — runs off the event loop (on the guest's thread, see `runtime`) under
the leg's deadline: the QuickJS interrupt handler at the deadline, the epoch backstop
`EPOCH_GRACE_S` later. Segments touch no asyncio state; engine failures are returned, not
raised, and `failure_of` turns them into an envelope's failure code and message.
"""

from __future__ import annotations

import time
from typing import Final, Literal

from .runtime import Guest, GuestTrap, JSException, StepResult

__all__ = [
    "EPOCH_GRACE_S",
    "MODULE_ACCESS_MESSAGE",
    "TIMEOUT_MESSAGE",
    "UNHANDLED_MESSAGE",
    "FailureCode",
    "classify",
    "compile_cell",
    "describe_rejection",
    "failure_of",
    "interrupted",
    "run_segment",
]

EPOCH_GRACE_S: Final = 0.025
TIMEOUT_MESSAGE: Final = "code mode timeout exceeded"
MODULE_ACCESS_MESSAGE: Final = "code mode module access is disabled."
UNHANDLED_MESSAGE: Final = "Error: unhandled promise rejection"
_MODULE_NAMES: Final = ("require", "module", "process")
_ENGINE_FAILURES: Final = (JSException, GuestTrap, MemoryError)

FailureCode = Literal[
    "invalid_input",
    "runtime_unavailable",
    "aborted",
    "timeout",
    "snapshot_limit_exceeded",
    "internal_error",
]


def _enter(guest: Guest, deadline: float) -> None:
    guest.deadline, guest.interrupted = deadline, False


def compile_cell(guest: Guest, code: str, deadline: float) -> int | BaseException:
    """Parse a cell (parsing counts in the budget, spec §2.5); a `JSException` is a syntax
    error."""
    _enter(guest, deadline)
    try:
        with guest.instance.backstop(deadline + EPOCH_GRACE_S):
            return guest.compile(code)
    except _ENGINE_FAILURES as exc:
        return exc


def run_segment(
    guest: Guest, cell_function: int | None, deadline: float, batch: str | None
) -> StepResult | BaseException:
    """Start the compiled cell (first segment) or settle `batch`, and run the guest until it
    waits on the host again."""
    _enter(guest, deadline)
    try:
        with guest.instance.backstop(deadline + EPOCH_GRACE_S):
            if cell_function is not None:
                guest.start(cell_function)
            return guest.turn(batch)
    except _ENGINE_FAILURES as exc:
        return exc


def describe_rejection(guest: Guest, deadline: float) -> str | BaseException | None:
    """The oldest unhandled rejection's text; it reads the reason's `name` and `message`,
    which may be guest getters that never return (D5)."""
    _enter(guest, deadline)
    try:
        with guest.instance.backstop(deadline + EPOCH_GRACE_S):
            return guest.unhandled_rejection()
    except _ENGINE_FAILURES as exc:
        return exc


def interrupted(exc: JSException, deadline: float) -> bool:
    """Whether `exc` is the interrupt handler stopping the guest at `deadline`."""
    return exc.text == "InternalError: interrupted" and time.monotonic() >= deadline


def failure_of(result: BaseException, deadline: float) -> tuple[FailureCode, str]:
    """The failure code and message of a segment's engine failure."""
    if isinstance(result, JSException):
        if interrupted(result, deadline):
            return "timeout", TIMEOUT_MESSAGE
        return classify(result.text)
    if isinstance(result, GuestTrap):
        return _trap(str(result), deadline)
    return "internal_error", "InternalError: out of memory"


def _trap(text: str, deadline: float) -> tuple[FailureCode, str]:
    if "call stack exhausted" in text:
        return "internal_error", "RangeError: Maximum call stack size exceeded"
    if "wasm trap: interrupt" in text or time.monotonic() >= deadline:
        return "timeout", TIMEOUT_MESSAGE
    if "out of bounds" in text or "memory" in text:
        return "internal_error", "InternalError: out of memory"
    return "internal_error", f"InternalError: the guest runtime trapped ({_first_line(text)})"


def classify(error: str) -> tuple[FailureCode, str]:
    """A guest error's failure: module access is `invalid_input`, the rest `internal_error`."""
    for name in _MODULE_NAMES:
        if error.startswith(f"ReferenceError: {name} is not defined"):
            return "invalid_input", MODULE_ACCESS_MESSAGE
    return "internal_error", error


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "unknown trap"
