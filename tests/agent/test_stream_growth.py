"""A streamed reply costs the same per delta however long it already is.

The turn used to keep the text streamed so far as one string grown by `+=` on an attribute,
which CPython copies whole on every delta: a 1 MB reply of ~170,000 deltas spent most of its
14 s in those copies. The measurement (`tests/_growth.py`, CPU time of this thread) times the
same 2,000 deltas after a head of 1 KB and after one of 8 MB; the last test shows it failing a
stand-in that grows a string the old way.

Not an `isolated` test: the ratios are about 1 against tens, far from the bound, and the
clock is this thread's CPU time, which other workers do not add to.
"""

from __future__ import annotations

import asyncio
import time

from clawcell.agent import Agent, ScriptedModel, TextDelta
from clawcell.store import MemoryStore
from tests._growth import tail_growth

_TAIL = "word " * 2000
_SMALL, _LARGE = 1_000, 8_000_000
_BOUND = 4.0
"""Linear work measures about 1 (the tail is the same work); the quadratic stand-in 20-60."""


def _turn_tail_seconds(head: int) -> float:
    async def main() -> float:
        reply = "x" * head + " " + _TAIL
        async with Agent(model=ScriptedModel([reply]), store=MemoryStore()) as agent:
            first = last = 0.0
            async for event in agent.run("s", "go"):
                if isinstance(event, TextDelta):
                    last = time.thread_time()
                    first = first or last
            return last - first

    return asyncio.run(main())


def test_a_turns_deltas_cost_the_same_after_a_long_head() -> None:
    ratio = tail_growth(_turn_tail_seconds, _SMALL, _LARGE, bound=_BOUND)
    assert ratio < _BOUND, f"2,000 deltas after 8 MB cost {ratio:.1f}x those after 1 KB"


class _Appending:
    """The defect: a running text on an attribute, grown by `+=`."""

    def __init__(self) -> None:
        self.text = ""

    def add(self, piece: str) -> None:
        self.text += piece


def _stand_in_tail_seconds(head: int) -> float:
    box = _Appending()
    box.add("x" * head)
    started = time.thread_time()
    for _ in range(50):  # a shorter tail than the turn's: each step copies 8 MB
        box.add("word ")
    return time.thread_time() - started


def test_the_measurement_fails_a_string_grown_by_copies() -> None:
    assert tail_growth(_stand_in_tail_seconds, _SMALL, _LARGE, bound=_BOUND) > _BOUND
