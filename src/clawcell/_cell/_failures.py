"""What a cell's failures mean in the protocol: the envelope's failure code and message.

The runtime says *why* guest code stopped, as a typed `runtime.EngineFailure` (its one
translation point matches engine exceptions and trap messages; nothing here reads them).
This module gives each kind the code and message of the recorded release: a deadline is
`timeout`, an exhausted stack and an exhausted memory are the `internal_error`s QuickJS
itself reports, and a thrown error is the guest's own text, except module access
(`require`, `module`, `process` are not defined in a cell), which is `invalid_input`.
"""

from __future__ import annotations

from typing import Final, Literal

from ..runtime import EngineFailure

__all__ = [
    "MODULE_ACCESS_MESSAGE",
    "TIMEOUT_MESSAGE",
    "UNHANDLED_MESSAGE",
    "FailureCode",
    "classify",
    "failure_of",
]

TIMEOUT_MESSAGE: Final = "code mode timeout exceeded"
MODULE_ACCESS_MESSAGE: Final = "code mode module access is disabled."
UNHANDLED_MESSAGE: Final = "Error: unhandled promise rejection"
STACK_MESSAGE: Final = "RangeError: Maximum call stack size exceeded"
MEMORY_MESSAGE: Final = "InternalError: out of memory"
_MODULE_NAMES: Final = ("require", "module", "process")

FailureCode = Literal[
    "invalid_input",
    "runtime_unavailable",
    "aborted",
    "timeout",
    "snapshot_limit_exceeded",
    "internal_error",
]


def failure_of(failure: EngineFailure) -> tuple[FailureCode, str]:
    """The failure code and message of guest code that stopped with `failure`."""
    match failure.kind:
        case "timeout":
            return "timeout", TIMEOUT_MESSAGE
        case "stack_overflow":
            return "internal_error", STACK_MESSAGE
        case "out_of_memory":
            return "internal_error", MEMORY_MESSAGE
        case "trap":
            return "internal_error", f"InternalError: the guest runtime trapped ({failure.message})"
        case "thrown" | "syntax_error":
            return classify(failure.message)


def classify(error: str) -> tuple[FailureCode, str]:
    """A guest error's failure: module access is `invalid_input`, the rest `internal_error`."""
    for name in _MODULE_NAMES:
        if error.startswith(f"ReferenceError: {name} is not defined"):
            return "invalid_input", MODULE_ACCESS_MESSAGE
    return "internal_error", error
