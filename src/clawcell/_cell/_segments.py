"""Where a cell's guest segments run: on a guest thread, or inline in loop-thread mode.

A segment is guest code run until it waits on the host again (`ExecutorGuest`). With a
`SegmentRunner` (the default: `runtime.run_on_guest_thread`) it runs off the event loop, and
a turn that the guest can split runs only its crossing there (`runtime._crossing`): the
Python around the crossing costs less on the loop thread, which waits for it anyway.
Without a runner (`CodeMode(guest_thread=False)`) everything runs inline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

from ..runtime import (
    EngineFailure,
    ExecutorGuest,
    SegmentRunner,
    StepResult,
    TurnCrossing,
    release_hold,
)

__all__ = ["HOLD_FROM_TURN", "end_leg", "off_loop", "run_turn"]

HOLD_FROM_TURN: Final = 4
"""The turn of a leg (from 0) from which a quick turn may hold the guest thread on the loop
thread's CPU (`runtime.run_on_guest_thread`'s `hold`): a call-heavy leg, never a short one
or a cell's first segments."""


async def off_loop(
    guest: ExecutorGuest,
    runner: SegmentRunner | None,
    function: Callable[..., Any],
    *args: Any,
    hold: bool = False,
) -> Any:
    """`function(*args)` on `guest`'s thread (or inline without a runner). A cancelled
    caller stops the guest: else its segment would spin on until the leg's deadline. `hold`:
    see `run_on_guest_thread` (the caller ends the hold with `runtime.release_hold`)."""
    if runner is None:
        return function(*args)
    try:
        return await runner(function, *args, lane=guest.lane, hold=hold)
    except asyncio.CancelledError:
        guest.stop()
        raise


async def run_turn(
    guest: ExecutorGuest,
    runner: SegmentRunner | None,
    batch: str | None,
    deadline: float,
    turn: int = 0,
) -> StepResult | EngineFailure:
    """Settle `batch` (if any) and run `guest` until it waits on the host again: the leg's
    `turn`th turn. From `HOLD_FROM_TURN` on, a quick crossing may hold the guest thread on
    the loop thread's CPU; the leg lets go when it ends (`end_leg`). A guest without a
    crossing (V8's: a segment is a message to its worker process, which the guest thread may
    have to start anew) is never held: a process started on a held thread would inherit its
    one CPU."""
    if runner is None:  # the loop thread's path: the segment inline, no hand-off
        return guest.run_segment(None, batch, deadline)
    outcome = guest.turn_here(batch, deadline)
    if outcome is None:
        return await off_loop(guest, runner, guest.run_segment, None, batch, deadline)
    if not isinstance(outcome, TurnCrossing):
        return outcome
    # it computes on, past a slice of the loop thread's time
    await off_loop(guest, runner, outcome.cross, hold=turn >= HOLD_FROM_TURN)
    return outcome.finish()


def end_leg(runner: SegmentRunner | None) -> None:
    """A leg ended: let go of the CPU its quick turns held (see `run_turn`)."""
    if runner is not None:
        release_hold()
