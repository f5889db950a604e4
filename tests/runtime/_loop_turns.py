"""How many turns the event loop gave other work while a cell ran: the runtime tests' measure
of whether guest code held the loop thread (counted, not timed)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Final, TypeVar

_T = TypeVar("_T")

FREE_LOOP_TURNS: Final = 200
"""Turns that prove the loop ran beside guest code computing for a few tenths of a second:
such a cell leaves tens of thousands free (a turn is a few microseconds), while guest code
that held the loop thread throughout leaves only the handful around its start and end."""


async def with_loop_turns(awaitable: Awaitable[_T]) -> tuple[_T, int]:
    """`awaitable`'s result, and how many loop turns this coroutine took while it ran."""
    task = asyncio.ensure_future(awaitable)
    turns = 0
    while not task.done():
        await asyncio.sleep(0)
        turns += 1
    return task.result(), turns
