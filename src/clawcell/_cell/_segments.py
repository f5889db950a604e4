"""Where a cell's guest segments run: begun on the loop thread, on a guest thread, or inline
in loop-thread mode.

A segment is guest code run until it waits on the host again (`ExecutorGuest`). With a
`SegmentRunner` (the default: `runtime.run_on_guest_thread`) a cell's first segment and each
turn begin on the loop thread for a slice, and only one that computes past it moves to the
guest thread (`runtime._first_segment`, `runtime._crossing`); a guest that cannot begin them
here (V8's) runs them on the guest thread whole. Without a runner
(`CodeMode(guest_thread=False)`) everything runs inline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Literal

from ..runtime import EngineFailure, ExecutorGuest, SegmentRunner, StepResult, TurnCrossing

__all__ = ["FirstOutcome", "off_loop", "run_first", "run_turn"]

FirstOutcome = (
    tuple[Literal[False], EngineFailure] | tuple[Literal[True], StepResult | EngineFailure]
)
"""Whether the cell parsed, and the parse failure or the first segment's result."""


async def off_loop(
    guest: ExecutorGuest,
    runner: SegmentRunner | None,
    function: Callable[..., Any],
    *args: Any,
    awaited: bool = False,
) -> Any:
    """`function(*args)` on `guest`'s thread (or inline without a runner). A cancelled
    caller stops the guest: else its segment would spin on until the leg's deadline.
    `awaited`: the rest of a segment begun on the loop thread, which ran there for its slice
    already: awaited at once, never waited for on the loop thread (`run_on_guest_thread`)."""
    if runner is None:
        return function(*args)
    try:
        if awaited:
            return await runner(function, *args, lane=guest.lane, awaited=True)
        return await runner(function, *args, lane=guest.lane)
    except asyncio.CancelledError:
        guest.stop()
        raise


async def run_first(
    guest: ExecutorGuest,
    runner: SegmentRunner | None,
    code: str,
    deadline: float,
    whole: Callable[[str, float], FirstOutcome],
) -> FirstOutcome:
    """Parse `code` and run its first segment: begun on the loop thread where the guest can
    (`runtime._first_segment`), else `whole(code, deadline)` on the guest thread (inline
    without a runner)."""
    if runner is None:
        return whole(code, deadline)
    segment = guest.first_here(code, deadline)
    if segment is None:
        return await off_loop(guest, runner, whole, code, deadline)
    if not segment.run_here():
        await off_loop(guest, runner, segment.run_rest, awaited=True)
    return segment.outcome()


async def run_turn(
    guest: ExecutorGuest, runner: SegmentRunner | None, batch: str | None, deadline: float
) -> StepResult | EngineFailure:
    """Settle `batch` (if any) and run `guest` until it waits on the host again."""
    if runner is None:  # the loop thread's path: the segment inline, no hand-off
        return guest.run_segment(None, batch, deadline)
    outcome = guest.turn_here(batch, deadline)
    if outcome is None:  # not begun here: the whole segment on the guest thread
        return await off_loop(guest, runner, guest.run_segment, None, batch, deadline)
    if not isinstance(outcome, TurnCrossing):
        return outcome
    await off_loop(guest, runner, outcome.cross, awaited=True)
    return outcome.finish()
