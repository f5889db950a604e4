"""What a cell's failures mean in the protocol: the envelope's failure code and message.

The runtime says *why* guest code stopped, as a typed `runtime.EngineFailure` (its one
translation point matches engine exceptions and trap messages; nothing here reads them).
This module gives each kind the code and message of the recorded release: a deadline is
`timeout`, an exhausted stack and an exhausted memory are the `internal_error`s QuickJS
itself reports, and a thrown error is the guest's own text, except module access
(`require`, `module`, `process` are not defined in a cell), which is `invalid_input`.

A cell QuickJS cannot parse is refused as the release refuses it: `syntax_error_message`
takes the words and position from acorn, the release's parser (`runtime.parse_failure`), and
`format_syntax_error` writes them in the release's sentence. Both read engine output, so they
live with the cell, not with the checks made before one exists (`_source/`).
"""

from __future__ import annotations

from typing import Final, Literal

from ..runtime import EngineFailure, wire

__all__ = [
    "MODULE_ACCESS_MESSAGE",
    "TIMEOUT_MESSAGE",
    "UNHANDLED_MESSAGE",
    "FailureCode",
    "classify",
    "failure_of",
    "format_syntax_error",
    "syntax_error_message",
    "unparsed_failure_of",
]

TIMEOUT_MESSAGE: Final = "code mode timeout exceeded"
MODULE_ACCESS_MESSAGE: Final = "code mode module access is disabled."
UNHANDLED_MESSAGE: Final = "Error: unhandled promise rejection"
STACK_MESSAGE: Final = "RangeError: Maximum call stack size exceeded"
MEMORY_MESSAGE: Final = "InternalError: out of memory"
PARSE_MEMORY_MESSAGE: Final = (
    "InternalError: out of memory while parsing the cell: its source needs more memory than "
    "memoryLimitBytes allows. No code ran and no tools were dispatched; submit less code per "
    "cell (keep large data in a tool or the store rather than in the source), or raise "
    "memoryLimitBytes."
)
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


def unparsed_failure_of(failure: EngineFailure) -> tuple[FailureCode, str]:
    """The failure code and message of a cell whose parse stopped without a syntax error:
    memory running out says so, and what to do; the rest are as in a running cell."""
    if failure.kind == "out_of_memory":
        return "internal_error", PARSE_MEMORY_MESSAGE
    return failure_of(failure)


def classify(error: str) -> tuple[FailureCode, str]:
    """A guest error's failure: module access is `invalid_input`, the rest `internal_error`."""
    for name in _MODULE_NAMES:
        if error.startswith(f"ReferenceError: {name} is not defined"):
            return "invalid_input", MODULE_ACCESS_MESSAGE
    return "internal_error", error


def format_syntax_error(message: str, line: int, column: int) -> str:
    """The release's syntax-error text for the submitted code (1-based line and column).

    The release writes `<parser message>.` before its advice; a message that already ends
    in a period keeps just one.
    """
    return (
        f"SyntaxError at openclaw-code-mode:user.js:{line}:{column}: {message.rstrip('.')}. "
        "No tools were dispatched; correct the JavaScript source and submit it again."
    )


_USER_FILE: Final = wire.USER_FILE + ":"


def syntax_error_message(failure: EngineFailure, code: str) -> str:
    """The `invalid_input` message of a cell QuickJS could not parse (`failure`).

    The words and position are acorn's, the parser the release checks cells with
    (`runtime.parse_failure`). When acorn accepts the cell or cannot answer, they are
    QuickJS's: the failure's message and stack, and the position is the first user-file
    frame's, moved up one line for the wrapper's header and clamped to the code.
    """
    from ..runtime import parse_failure  # acorn loads with the first syntax error

    # acorn first: the release words syntax errors with acorn, and QuickJS's words and
    # positions differ from it for most mistakes (a model retries better on the same text).
    found = parse_failure(code)
    if found is not None:
        return format_syntax_error(found.message, found.line, found.column)
    message = failure.message.removeprefix("SyntaxError: ")
    line, column = 1, 1
    for frame in failure.stack.splitlines():
        at = frame.find(_USER_FILE)
        if at >= 0:
            parts = frame[at + len(_USER_FILE) :].rstrip(")").split(":")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                line, column = int(parts[0]) - 1, int(parts[1])
                break
    # An error QuickJS places in the wrapper (after the last line, or on its header) is
    # still the cell's: the position is clamped to the lines the model wrote.
    last_line = code.count("\n") + 1
    line = min(max(line, 1), last_line)
    return format_syntax_error(message, line, column)
