"""A guest turn begun on the event loop's thread, moved to a guest thread if it computes on.

A turn settles a reply batch, runs every job and takes the step report, in one wasm crossing
(`clawcell_turn`). A call-heavy cell's turn is short (it settles a reply and runs to its next
call), and handing each one to a guest thread cost more than the turn itself: a round trip
of two context switches, two system calls and the GIL handed over, about 16 µs a turn
against the loop thread's own path (docs/benchmarks.md, "A turn begun on the loop thread").

So a turn on the default path begins where it is made, on the loop thread, as a call future
(`_wasm._exports.CallFuture`) given a slice of `LOOP_SLICE_S` (`run_sliced`). When the slice
ends first, the watchdog bumps the epoch, the guest is suspended at its next epoch check
(a loop header or a function entry, inside a long native operation too), and what is left,
a `TurnCrossing`, runs on the guest thread (`cross`), which polls the same future to its end:
wasmtime moves a suspended call between threads. A report that is not a flat string (a
thrown value, whose `toString` is guest code) is read there too. Guest code therefore holds
the event loop for one slice at most (plus the few instructions to its next epoch check),
where the guest thread's path held it for none and the loop thread's path
(`CodeMode(guest_thread=False)`, `run_inline`) holds it for the whole turn.

Where Python cannot run host functions on a call future's stack (`FIBERS_USABLE`), every
turn is a `TurnCrossing` crossed whole on the guest thread, as before.

The backstop: a sliced turn sets its hard deadline without watching it, since the slice's
watch (at the earlier of the two instants) wakes the epoch callback, which checks both;
a turn handed to a guest thread is watched until its crossing returns, whatever the loop
thread does meanwhile (a cancelled leg drops its guest: see `_runs._lifecycle`).
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Final

from ._failure import ENGINE_EXCEPTIONS, EngineFailure, engine_failure
from ._report import StepResult, parse_report

if TYPE_CHECKING:
    from ._wasm._exports import CallFuture
    from ._wasm._instance import Instance

__all__ = ["FIBERS_USABLE", "LOOP_SLICE_S", "TurnCrossing", "run_inline", "run_sliced"]

FIBERS_USABLE: Final = sys.version_info < (3, 14)
"""Whether a turn may begin on the loop thread (`run_sliced`). Its host functions then run
Python on the call future's own stack, which Python 3.14 and later may take for a C stack
overflow (they compare the C stack pointer with the bounds of the thread's own stack)."""
LOOP_SLICE_S: Final = 0.002
"""How long a turn's guest code may run on the event loop's thread before the rest of it
moves to a guest thread."""


class TurnCrossing:
    """What is left of a turn for a guest thread: `cross` there, then `finish` on the loop
    thread. Made by `run_sliced` with the backstop armed (`token`) and either the suspended
    call (`future`), the returned value to read (`pending`), or, with neither, the whole
    crossing (`turn`: the controller's `settle` and `step` and the staged batch)."""

    __slots__ = (
        "_deadline",
        "_error",
        "_future",
        "_instance",
        "_owned",
        "_pending",
        "_report",
        "_token",
        "_turn",
        "_value",
    )

    def __init__(
        self,
        instance: Instance,
        deadline: float,
        owned: int,
        token: int,
        *,
        future: CallFuture | None = None,
        pending: int | None = None,
        turn: tuple[int, int, int, int] = (0, 0, 0, -1),
    ) -> None:
        self._instance = instance
        self._deadline = deadline
        self._owned = owned
        self._token = token
        self._future = future
        self._pending = pending
        self._turn = turn
        self._report = ""
        self._value = 0
        self._error: BaseException | None = None

    def cross(self) -> None:
        """The rest of the crossing, and what may run guest code after it (reading a thrown
        exception calls its `toString`): the part that runs on the guest thread, under the
        backstop. Never raises: what the engine raised is kept for `finish`."""
        instance = self._instance
        try:
            value = self._pending
            if value is None:
                value = self._call_value(instance)
            if instance.reads_flat(value):  # the usual report: `finish` reads it
                self._value = value
            else:
                self._report = instance.take_string(instance.checked(value), strict=True)
        except BaseException as exc:
            self._error = exc
        finally:
            instance.disarm_backstop(self._token)

    def _call_value(self, instance: Instance) -> int:
        future = self._future
        if future is None:  # never begun: the whole crossing, here
            return instance.raw_turn(*self._turn)
        while not future.poll():  # only a slice suspends it, and this thread gives none
            pass
        return future.result()

    def finish(self) -> StepResult | EngineFailure:
        """The step report of the turn, or why guest code stopped without one."""
        return _read_report(
            self._instance,
            self._deadline,
            self._owned,
            error=self._error,
            value=self._value,
            report=self._report,
        )


def run_sliced(
    instance: Instance,
    handles: tuple[int, int],
    batch: str | None,
    deadline: float,
    backstop_at: float,
) -> StepResult | EngineFailure | TurnCrossing:
    """Settle `batch` and run every job (`handles`: the controller's `settle` and `step`) on
    this thread, the event loop's, for one slice: the step report (or why guest code stopped
    without one), or the rest of the turn for a guest thread."""
    try:
        ptr, size, owned = instance.stage(batch)
    except ENGINE_EXCEPTIONS as exc:
        return engine_failure(exc, deadline=deadline)
    if not FIBERS_USABLE:
        token = instance.arm_backstop(backstop_at)
        return TurnCrossing(instance, deadline, owned, token, turn=(*handles, ptr, size))
    hard = instance.hard_deadline
    hard.at = backstop_at  # watched with the slice: see the module's docstring
    value = 0
    error: BaseException | None = None
    try:
        future = instance.turn_future(handles[0], handles[1], ptr, size)
        until = min(time.monotonic() + LOOP_SLICE_S, backstop_at)
        if not instance.reactor.watchdog.run_slice(future, hard, until):
            token = instance.arm_backstop(backstop_at)
            return TurnCrossing(instance, deadline, owned, token, future=future)
        value = future.result()
        if not instance.reads_flat(value):
            token = instance.arm_backstop(backstop_at)
            return TurnCrossing(instance, deadline, owned, token, pending=value)
    except BaseException as exc:
        error = exc
        if instance.store.future is not None:  # suspended, then interrupted: unwind it
            instance.store.future.free()
    hard.at = float("inf")
    return _read_report(instance, deadline, owned, error=error, value=value, report="")


def run_inline(
    instance: Instance,
    handles: tuple[int, int],
    batch: str | None,
    deadline: float,
    backstop_at: float,
) -> StepResult | EngineFailure:
    """The whole turn where it is made, a plain call (the loop thread's path, and a guest
    thread's segment that restores the image first)."""
    try:
        ptr, size, owned = instance.stage(batch)
    except ENGINE_EXCEPTIONS as exc:
        return engine_failure(exc, deadline=deadline)
    token = instance.arm_backstop(backstop_at)
    value = 0
    report = ""
    error: BaseException | None = None
    try:
        value = instance.raw_turn(handles[0], handles[1], ptr, size)
        if not instance.reads_flat(value):
            value, report = 0, instance.take_string(instance.checked(value), strict=True)
    except BaseException as exc:
        error = exc
    finally:
        instance.disarm_backstop(token)
    return _read_report(instance, deadline, owned, error=error, value=value, report=report)


def _read_report(
    instance: Instance,
    deadline: float,
    owned: int,
    *,
    error: BaseException | None,
    value: int,
    report: str,
) -> StepResult | EngineFailure:
    """The step report: `report`, or the flat string `value` (read, then freed), once the
    batch buffer the turn `owned` is freed; or why guest code stopped (`error`)."""
    try:
        if owned:
            instance.free(owned)
        if error is not None:
            raise error
        if value:
            report = instance.memory.flat_string(value & 0xFFFF_FFFF)
            instance.free_value(value)
        return parse_report(report)
    except ENGINE_EXCEPTIONS as exc:
        return engine_failure(exc, deadline=deadline)
