"""A guest turn split at its wasm crossing, for a segment run on a guest thread.

A segment on a guest thread used to run all of `Guest.run_segment` there: staging the settle
batch, arming the backstop, the `clawcell_turn` crossing, reading the step report, parsing
it. Python that runs on a thread right after it was woken costs more than the same Python on
the thread that woke it (1.46× for the work of a turn on a busy machine, 1.12× on a quiet
one; `bench/bench_woken_python.py`, docs/benchmarks.md "The default path's turn, split at
its crossing"), and the loop thread waits for the segment anyway. So the loop thread does
the turn's Python before the crossing (staging the batch, arming the backstop) and after it
(parsing the report), and the guest thread the crossing itself, where the GIL is released
(`cross`). Reading a report that is a flat string runs no guest code and is left to the loop
thread too; everything that may run guest code (reading a thrown value calls its `toString`)
stays on the guest thread, under the backstop: guest code never runs on the event loop.

A crossing is armed when it is made (the guest's deadline and the epoch backstop), and the
guest thread disarms the backstop when the crossing returns, whatever the loop thread does
meanwhile (a cancelled leg drops its guest: see `_runs._lifecycle`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._failure import ENGINE_EXCEPTIONS, EngineFailure, engine_failure
from ._report import StepResult, parse_report

if TYPE_CHECKING:
    from ._wasm._instance import Instance

__all__ = ["TurnCrossing", "run_inline"]


class TurnCrossing:
    """One turn (settle a batch, run every job, take the step report) in three parts: made
    on the loop thread, `cross` on the guest thread, `finish` on the loop thread."""

    __slots__ = (
        "_deadline",
        "_error",
        "_instance",
        "_owned",
        "_ptr",
        "_report",
        "_settle",
        "_size",
        "_step",
        "_token",
        "_value",
    )

    def __init__(
        self,
        instance: Instance,
        handles: tuple[int, int],
        batch: str | None,
        deadline: float,
        backstop_at: float,
    ) -> None:
        """Stage `batch` and arm the backstop at `backstop_at` (`handles`: the controller's
        `settle` and `step`).

        Raises:
            MemoryError: the guest could not allocate a buffer for a large batch.
        """
        self._instance = instance
        self._settle, self._step = handles
        self._deadline = deadline
        self._ptr, self._size, self._owned = instance.stage(batch)
        self._report = ""
        self._value = 0
        self._error: BaseException | None = None
        self._token = instance.arm_backstop(backstop_at)

    def cross(self) -> None:
        """The crossing and what may run guest code after it (reading a thrown exception
        calls its `toString`): the part that runs on the guest thread, under the backstop.
        Never raises: what the engine raised is kept for `finish`."""
        instance = self._instance
        try:
            value = instance.raw_turn(self._settle, self._step, self._ptr, self._size)
            if instance.reads_flat(value):  # the usual report: `finish` reads it
                self._value = value
            else:
                self._report = instance.take_string(instance.checked(value), strict=True)
        except BaseException as exc:
            self._error = exc
        finally:
            instance.disarm_backstop(self._token)

    def finish(self) -> StepResult | EngineFailure:
        """The step report of the turn, or why guest code stopped without one."""
        try:
            if self._owned:
                self._instance.free(self._owned)
            if self._error is not None:
                raise self._error
            if self._value:  # a flat string (`cross` checked): read, then freed
                instance = self._instance
                self._report = instance.memory.flat_string(self._value & 0xFFFF_FFFF)
                instance.free_value(self._value)
            return parse_report(self._report)
        except ENGINE_EXCEPTIONS as exc:
            return engine_failure(exc, deadline=self._deadline)


def run_inline(
    instance: Instance,
    handles: tuple[int, int],
    batch: str | None,
    deadline: float,
    backstop_at: float,
) -> StepResult | EngineFailure:
    """`TurnCrossing(...)`, `cross()` and `finish()` in one call, for a turn that runs where
    it was made (the loop thread's path): the same steps in the same order, no object."""
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
    try:
        if owned:
            instance.free(owned)
        if error is not None:
            raise error
        if value:  # a flat string: read, then freed
            report = instance.memory.flat_string(value & 0xFFFF_FFFF)
            instance.free_value(value)
        return parse_report(report)
    except ENGINE_EXCEPTIONS as exc:
        return engine_failure(exc, deadline=deadline)
