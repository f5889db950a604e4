"""A cell's first segment begun on the event loop's thread (the default path's `exec`).

The first segment restores the guest's image, parses the cell and starts it: the cell's own
code runs to its first wait on the host (`clawcell_start`). Handed to a guest thread whole,
it paid the round trip a turn paid before `_crossing` (a quick cell, `return 1`, cost 1.2-1.3×
the loop thread's path). So, like a turn, it begins on the loop thread:

* the restore copies back the image's live data (about 0.6 MiB, 0.03 ms: the pages a cell
  touched in the image's zero runs are dropped, see `_wasm._linear_memory`), a plain copy;
* the parse and the start are call futures that share one slice (`_crossing.LOOP_SLICE_S`):
  a 4 KiB source can take QuickJS milliseconds to parse (deep nesting), and the start runs
  the cell's own code. Past the slice, the rest runs on the guest thread (`run_rest`), as
  does reading a start that threw (the thrown value's `toString` is guest code) or a report
  that is not a flat string. A parse that fails is read here: its `SyntaxError` was made by
  the parser, in a pristine image, so reading it runs no code of the cell's.

The backstop is handled as in `_crossing`: watched with the slice on the loop thread, armed
until the end on the guest thread. Every exit takes the hard deadline back before a failure
is read (`_fail`), and nothing more is called in a guest that trapped.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final, Literal, Protocol

from ._crossing import LOOP_SLICE_S
from ._failure import ENGINE_EXCEPTIONS, EngineFailure, engine_failure
from ._report import StepResult, parse_report
from ._wasm._exports import GuestTrap

if TYPE_CHECKING:
    from ._wasm._exports import CallFuture
    from ._wasm._instance import Instance

__all__ = ["FirstOutcome", "FirstSegment", "Starting"]

FirstOutcome = (
    tuple[Literal[False], EngineFailure] | tuple[Literal[True], StepResult | EngineFailure]
)
"""Whether the cell parsed, and the parse failure or the first segment's result."""

_PARSE: Final = 0
_START: Final = 1


class Starting(Protocol):
    """What a first segment needs of its guest (`_guest.Guest`)."""

    @property
    def instance(self) -> Instance: ...

    def start_future(self, script: int) -> CallFuture: ...


class FirstSegment:
    """A cell's first segment, its guest's image restored: `run_here` on the loop thread,
    `run_rest` on the guest thread if it returned False, then `outcome`."""

    __slots__ = ("_backstop_at", "_deadline", "_error", "_future", "_guest", "_outcome",
                 "_owned", "_pending", "_phase", "_script", "_source", "_token")  # fmt: skip

    def __init__(self, guest: Starting, source: str, deadline: float, backstop_at: float) -> None:
        """`source`: the cell, wrapped as the guest compiles it."""
        self._guest = guest
        self._source = source
        self._deadline = deadline
        self._backstop_at = backstop_at
        self._phase = _PARSE
        self._future: CallFuture | None = None
        self._pending: int | None = None
        self._owned = 0
        self._script = 0
        self._token = 0
        self._outcome: FirstOutcome | None = None
        self._error: BaseException | None = None

    def run_here(self) -> bool:
        """Parse and start the cell on this thread, the event loop's, for at most a slice:
        True when the segment is over (`outcome` next), False when `run_rest` must finish it
        on a guest thread."""
        instance = self._guest.instance
        hard = instance.hard_deadline
        hard.at = self._backstop_at  # watched with the slice
        watchdog, until = instance.reactor.watchdog, time.monotonic() + LOOP_SLICE_S
        until = min(until, self._backstop_at)
        try:
            while self._outcome is None:
                future = self._begin_phase(instance)
                if future is None:
                    break
                if not watchdog.run_slice(future, hard, until):
                    self._future = future
                    break
                self._end_phase(instance, future.result(), here=True)
        except BaseException as exc:
            if instance.store.future is not None:  # suspended, then interrupted: unwind it
                instance.store.future.free()
            hard.at = float("inf")  # first: the staging buffer is freed by a guest call
            if not isinstance(exc, ENGINE_EXCEPTIONS):
                raise
            self._fail(exc)  # raises a signal's exception a host function took (see `_fail`)
            return True
        if self._outcome is not None:
            hard.at = float("inf")
            return True
        self._token = instance.arm_backstop(self._backstop_at)
        return False

    def run_rest(self) -> None:
        """The rest of the parse and the start (on the guest thread), and reading the start's
        report. Never raises: what it raised is kept for `outcome`."""
        instance = self._guest.instance
        error: BaseException | None = None
        try:
            while self._outcome is None:
                value = self._pending
                if value is None:
                    future = self._future or self._begin_phase(instance)
                    assert future is not None
                    self._future = None
                    while not future.poll():  # only a slice suspends it; this thread has none
                        pass
                    value = future.result()
                self._pending = None
                self._end_phase(instance, value, here=False)
        except BaseException as exc:
            error = exc
        finally:
            instance.disarm_backstop(self._token)  # first: `_fail` may free with a guest call
        if error is None:
            return
        try:
            if not isinstance(error, ENGINE_EXCEPTIONS):
                raise error
            self._fail(error)
        except BaseException as exc:
            self._error = exc

    def outcome(self) -> FirstOutcome:
        """Whether the cell parsed, and the parse failure or the first segment's result."""
        if self._error is not None:
            raise self._error
        assert self._outcome is not None
        return self._outcome

    def _begin_phase(self, instance: Instance) -> CallFuture | None:
        """The current phase's call future; `None` when a value waits to be read."""
        if self._pending is not None:
            return None
        if self._phase == _PARSE:
            ptr, size, self._owned = instance.stage(self._source + "\0")  # read up to a NUL
            return instance.compile_future(ptr, size - 1)
        return self._guest.start_future(self._script)

    def _end_phase(self, instance: Instance, value: int, *, here: bool) -> None:
        """Take a phase's value: the compiled script (then the start), or the report."""
        if self._phase == _PARSE:
            owned, self._owned = self._owned, 0
            if owned:
                instance.free(owned)
            try:
                self._script = instance.checked(value)
            except ENGINE_EXCEPTIONS as exc:
                self._outcome = (False, engine_failure(exc, deadline=self._deadline, parsing=True))
                return
            self._phase = _START
            return
        if here and not instance.reads_flat(value):  # only guest code can read it
            self._pending = value
            return
        report = instance.take_string(instance.checked(value), strict=True)
        self._outcome = (True, parse_report(report))

    def _fail(self, exc: BaseException) -> None:
        """The segment failed (the hard deadline no longer set): the outcome, once the
        staging buffer is given back. After a trap the guest's code stopped anywhere, inside
        its allocator too, so nothing more is called in it: the buffer goes with the image,
        which is restored before the guest's next cell.

        Raises:
            BaseException: a trap's cause that is not an `Exception` (see `engine_failure`).
        """
        parsing = self._phase == _PARSE
        owned, self._owned = self._owned, 0
        if owned and not isinstance(exc, GuestTrap):
            self._guest.instance.free(owned)
        failure = engine_failure(exc, deadline=self._deadline, parsing=parsing)
        self._outcome = (False, failure) if parsing else (True, failure)
