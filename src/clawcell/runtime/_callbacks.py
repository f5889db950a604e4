"""The host callbacks a guest puts in its instance's table: the interrupt check and the
promise-rejection tracker."""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Protocol

from ._wasm._instance import Instance

__all__ = ["Deadlined", "interrupt_check", "rejection_tracker", "set_tracker"]


class Deadlined(Protocol):
    """What the interrupt check reads and sets on its guest."""

    deadline: float
    interrupted: bool


# Host callbacks live in the process-wide registry of `_wasm._host_funcs` until their store
# is deleted, and the store is deleted only when its guest is freed: a callback that held the
# guest would keep it, its store and its linear memory alive forever. They hold weak
# references only.


def set_tracker(inst: Instance, tracker: Callable[..., None], *, set_handler: bool) -> int:
    """Put the promise-rejection tracker in the table (its slot is the same in every instance);
    `set_handler` also registers it with the runtime (a copy of an image has it already)."""
    slot = inst.callback_slot((("i32", "i64", "i64", "i32", "i32"), ()), tracker)
    if set_handler:
        inst._f["JS_SetHostPromiseRejectionTracker"](inst.rt, slot, 0)  # pyright: ignore[reportPrivateUsage]
    return slot


def interrupt_check(guest: weakref.ref[Deadlined]) -> Callable[[], bool]:
    def interrupted() -> bool:
        alive = guest()
        if alive is None:
            return True
        if time.monotonic() > alive.deadline:
            alive.interrupted = True
            return True
        return False

    return interrupted


def rejection_tracker(
    method: weakref.WeakMethod[Callable[[int, int, int, int, int], None]],
) -> Callable[[int, int, int, int, int], None]:
    def track(ctx: int, promise: int, reason: int, handled: int, op: int) -> None:
        bound = method()
        if bound is not None:
            bound(ctx, promise, reason, handled, op)

    return track
