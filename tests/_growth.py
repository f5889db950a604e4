"""How the cost of a function grows with its input, for the linearity tests (`-m isolated`).

A linear function takes about `k` times as long on inputs `k` times larger; a quadratic one
about `k²` times. The clock is `time.thread_time`, the CPU time of the calling thread: the
other processes of a loaded machine (other xdist workers, other users) do not add to it, so a
ratio of two measurements taken a moment apart stays near the algorithm's own (a wall clock
under a load of 10 made linear functions look 40 times dearer on 8 times the input). The
ratio has no absolute deadline, so it does not depend on the machine's speed either.

The small input is measured three times (the best counts: a baseline inflated by a cache miss
would hide growth), the large one once; only a ratio over the caller's bound is measured again,
so a one-off stall cannot fail a linear function while a quadratic one fails every time.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

MIN_BASELINE_SECONDS = 0.0005
"""Short calls repeat until the small input costs this much CPU time (the clock's noise is
microseconds)."""
MAX_ROUNDS = 4096
"""The cap keeps a function that answers from a cache from doubling its rounds forever."""
ATTEMPTS = 3


def _cost(function: Callable[[Any], object], inputs: Sequence[Any], rounds: int) -> float:
    started = time.thread_time()
    for _ in range(rounds):
        for item in inputs:
            function(item)
    return time.thread_time() - started


def _baseline(function: Callable[[Any], object], small: Sequence[Any]) -> tuple[float, int]:
    rounds = 1
    cost = _cost(function, small, rounds)
    while cost < MIN_BASELINE_SECONDS and rounds < MAX_ROUNDS:
        rounds *= 2
        cost = _cost(function, small, rounds)
    return min(cost, _cost(function, small, rounds), _cost(function, small, rounds)), rounds


def _measure(
    function: Callable[[Any], object], small: Sequence[Any], large: Sequence[Any]
) -> float:
    baseline, rounds = _baseline(function, small)
    return _cost(function, large, rounds) / max(baseline, 1e-9)


def _ratio(
    function: Callable[[Any], object], small: Sequence[Any], large: Sequence[Any], bound: float
) -> float:
    ratio = _measure(function, small, large)
    for _ in range(ATTEMPTS - 1):
        if ratio < bound:
            break
        ratio = min(ratio, _measure(function, small, large))
    return ratio


def worst_growth(
    function: Callable[[Any], object],
    cases: Iterable[tuple[str, Sequence[Any], Sequence[Any]]],
    *,
    bound: float,
) -> tuple[float, str]:
    """The largest growth of `function` over `(label, small, large)` cases, with its label.

    Each ratio is the cost over `large` divided by the cost over `small`, measured again (up to
    `ATTEMPTS` times, the smallest counting) while it is at least `bound`. The garbage
    collector is paused meanwhile, after one collection: its pauses grow with the live objects
    of the whole process (in a collected suite a collection takes a tenth of a second), not
    with the work of `function`."""
    gc.collect()
    gc.disable()
    try:
        return max(
            ((_ratio(function, small, large, bound), label) for label, small, large in cases),
            key=lambda found: found[0],
        )
    finally:
        gc.enable()


def tail_growth(
    tail_cost: Callable[[int], float], small: int, large: int, *, bound: float
) -> float:
    """How much dearer the same tail of work gets after a `large` head than after a `small`
    one: `tail_cost(head)` does `head` units of work, then a fixed tail, and returns the CPU
    seconds of the tail alone. Work that keeps a running total the quadratic way (a string
    copied on every append) pays for the head again on every step of the tail; linear work
    does not, so the ratio stays near 1. Measured again while it is at least `bound` (the
    smallest counting), the garbage collector paused as in `worst_growth`."""
    gc.collect()
    gc.disable()
    try:
        ratio = math.inf
        for _ in range(ATTEMPTS):
            baseline = min(tail_cost(small) for _ in range(3))
            ratio = min(ratio, tail_cost(large) / max(baseline, 1e-9))
            if ratio < bound:
                break
        return ratio
    finally:
        gc.enable()
