"""Engine failures: traps and QuickJS exceptions become typed `EngineFailure`s inside the
runtime, and nothing outside it reads engine message text."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import clawcell
from clawcell.runtime import EngineFailure, Guest, GuestPool, StepResult
from clawcell.runtime._failure import JSException, engine_failure
from clawcell.runtime._wasm._exports import GuestTrap

INSTALL = json.dumps({"maxPending": 16, "bindings": []})
LATER = time.monotonic() + 3600


# Guests come from a pool and go back to it: a guest left for the garbage collector could be
# finalized in the middle of a later test.
_POOL = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)


@pytest.fixture
def guest() -> Iterator[Guest]:
    taken = _POOL.acquire()
    yield taken
    _POOL.release(taken)


def _run(guest: Guest, code: str, deadline: float = LATER) -> StepResult | EngineFailure:
    script = guest.parse_cell(code, LATER)
    assert isinstance(script, int)
    return guest.run_segment(script, None, deadline)


@pytest.mark.parametrize(
    ("exc", "kind", "message"),
    [
        (GuestTrap("wasm trap: call stack exhausted"), "stack_overflow", None),
        (GuestTrap("wasm trap: out of bounds memory access"), "out_of_memory", None),
        (
            GuestTrap("error while executing\nwasm trap: unreachable\n"),
            "trap",
            "error while executing",
        ),
        (GuestTrap("wasm trap: interrupt (the hard deadline passed)"), "timeout", None),
        (MemoryError("guest malloc failed"), "out_of_memory", "guest malloc failed"),
        (
            JSException("TypeError: x is not a function", "at f"),
            "thrown",
            "TypeError: x is not a function",
        ),
        (JSException("InternalError: interrupted"), "thrown", "InternalError: interrupted"),
    ],
    ids=["stack", "bounds", "other-trap", "backstop", "malloc", "thrown", "interrupt-early"],
)
def test_each_engine_exception_has_one_kind(
    exc: BaseException, kind: str, message: str | None
) -> None:
    failure = engine_failure(exc, deadline=LATER)
    assert failure.kind == kind
    if message is not None:
        assert failure.message == message


def test_an_interrupt_after_the_deadline_is_a_timeout() -> None:
    failure = engine_failure(JSException("InternalError: interrupted"), deadline=time.monotonic())
    assert failure.kind == "timeout"


def test_any_trap_after_the_deadline_is_a_timeout() -> None:
    failure = engine_failure(GuestTrap("wasm trap: unreachable"), deadline=time.monotonic())
    assert failure.kind == "timeout"


def test_an_exception_while_parsing_is_a_syntax_error_with_its_stack(guest: Guest) -> None:
    failure = guest.parse_cell("return 1 +;", LATER)
    assert isinstance(failure, EngineFailure)
    assert failure.kind == "syntax_error"
    assert failure.message.startswith("SyntaxError: ")
    assert "openclaw-code-mode:user.js:" in failure.stack


@pytest.mark.parametrize(
    ("text", "kind", "past_deadline"),
    [
        ("SyntaxError: unexpected token", "syntax_error", False),
        ("RangeError: Maximum call stack size exceeded", "syntax_error", False),  # nesting
        ("InternalError: out of memory", "out_of_memory", False),
        ("null", "out_of_memory", False),  # too short of memory to build even the error
        ("InternalError: interrupted", "timeout", True),
        ("InternalError: interrupted", "thrown", False),
    ],
    ids=["syntax", "nesting", "out-of-memory", "out-of-memory-unbuilt", "timeout", "interrupt"],
)
def test_only_the_parsers_refusal_is_a_syntax_error(
    text: str, kind: str, past_deadline: bool
) -> None:
    """A parse that stops for any other reason is what it is: every exception of a parse
    was a `syntax_error` (memory running out read `SyntaxError …: null.`)."""
    deadline = time.monotonic() if past_deadline else LATER
    failure = engine_failure(JSException(text), deadline=deadline, parsing=True)
    assert (failure.kind, failure.message) == (kind, text)


def test_a_cell_that_parses_is_a_compiled_script(guest: Guest) -> None:
    assert isinstance(guest.parse_cell("return 1;", LATER), int)


def test_a_busy_loop_past_its_deadline_stops_as_a_timeout(guest: Guest) -> None:
    failure = _run(guest, "while (true) {}", deadline=time.monotonic())
    assert isinstance(failure, EngineFailure)
    assert failure.kind == "timeout"
    assert guest.interrupted


def test_a_cell_that_runs_reports_a_step(guest: Guest) -> None:
    report = _run(guest, "return 6 * 7;")
    assert isinstance(report, StepResult)
    assert report.value_json == "42"


def test_a_rejection_reason_whose_getter_never_returns_stops_at_the_deadline(
    guest: Guest,
) -> None:
    code = (
        "const e = new Error('m');"
        " Object.defineProperty(e, 'name', { get() { for (;;) {} } });"
        " void Promise.reject(e); return 1;"
    )
    assert isinstance(_run(guest, code), StepResult)
    assert guest.has_unhandled_rejection
    described = guest.describe_rejection(time.monotonic())
    assert isinstance(described, EngineFailure)
    assert described.kind == "timeout"


def test_a_plain_rejection_is_described_by_its_text(guest: Guest) -> None:
    assert isinstance(_run(guest, "Promise.reject(new TypeError('no')); return 1;"), StepResult)
    described = guest.describe_rejection(LATER)
    assert isinstance(described, str)
    assert described.splitlines()[0] == "TypeError: no"


def test_no_module_outside_the_runtime_reads_engine_messages() -> None:
    package = Path(clawcell.__file__).parent
    runtime = package / "runtime"
    readers = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if runtime not in path.parents
        and any(
            text in path.read_text(encoding="utf-8")
            for text in (
                "call stack exhausted",
                "wasm trap",
                "out of bounds",
                "InternalError: interrupted",
            )
        )
    ]
    assert readers == []


@pytest.mark.parametrize("signal", [KeyboardInterrupt(), SystemExit(3)])
def test_a_trap_caused_by_a_signal_raises_the_signal(signal: BaseException) -> None:
    """A host function (or the epoch callback) that a signal's handler interrupted traps the
    guest with the exception as the trap's cause: that is the host's, raised again, never
    mapped to a guest failure."""
    trap = GuestTrap("wasm trap: interrupt (the epoch deadline check raised a Python exception)")
    trap.__cause__ = signal
    with pytest.raises(type(signal)) as raised:
        engine_failure(trap, deadline=LATER)
    assert raised.value is signal
    trap.__cause__ = MemoryError()  # an ordinary exception stays the guest's failure
    assert engine_failure(trap, deadline=LATER).kind == "timeout"
