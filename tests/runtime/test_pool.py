"""The guest pool spreads the guests in use over the guest threads (lanes).

Each case runs in a forked child, whose process-wide lane bookkeeping starts empty, so guests
that other tests still hold cannot tilt it."""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Callable

from clawcell.runtime import Guest, GuestPool
from clawcell.runtime._worker import guest_lanes  # pyright: ignore[reportPrivateUsage]
from tests.conftest import in_forked_child

INSTALL = '{"maxPending":1,"bindings":[],"test":"lanes"}'
LANES = guest_lanes()
INSTALL_GROWN = '{"maxPending":1,"bindings":[],"test":"grown template"}'


def _pool() -> GuestPool:
    return GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)


def _lanes_in_child(body: Callable[[GuestPool], list[Guest]]) -> list[int]:
    out = in_forked_child(lambda: json.dumps([g.lane for g in body(_pool())]).encode())
    assert out is not None, "the child hung"
    return json.loads(out)


def _held_at_once(pool: GuestPool) -> list[Guest]:
    return [pool.acquire() for _ in range(2 * LANES)]


def test_guests_in_use_at_once_are_spread_over_the_lanes() -> None:
    lanes = _lanes_in_child(_held_at_once)
    assert sorted(lanes) == sorted(list(range(LANES)) * 2)


def _idle_on_lane_zero_first(pool: GuestPool) -> list[Guest]:
    held = _held_at_once(pool)
    # Released last, the guests of lane 0 are taken first: they must not all stay there.
    for guest in sorted(held, key=lambda g: -g.lane):
        pool.release(guest)
    return [pool.acquire() for _ in range(LANES)]


def test_idle_guests_last_run_on_one_lane_are_moved_to_the_free_ones() -> None:
    assert sorted(_lanes_in_child(_idle_on_lane_zero_first)) == list(range(LANES))


def _one_lane_freed(pool: GuestPool) -> list[Guest]:
    held = [pool.acquire() for _ in range(LANES)]
    pool.release(held[-1])
    return [pool.acquire()]


def test_a_released_guest_frees_its_lane_for_the_next_one() -> None:
    assert _lanes_in_child(_one_lane_freed) == [LANES - 1]


def test_a_template_whose_memory_grew_is_replaced_and_freed_when_released() -> None:
    # The first guest of a configuration is its template; were it kept after its memory grew,
    # the grown memory would stay alive for the life of the process.
    pool = GuestPool(memory_limit_bytes=256 * 1024 * 1024, install_config=INSTALL_GROWN)
    template = pool.acquire()
    inst = template.instance
    inst.free_value(inst.eval("globalThis.big = new Uint8Array(64 * 1024 * 1024); 1"))
    assert inst.grown
    dropped = weakref.ref(template)
    pool.release(template)
    del template, inst
    gc.collect()
    assert dropped() is None
    successor = pool.acquire()  # the copy that took the template's place, idle in the pool
    successor.reset()
    assert not successor.instance.grown
    assert successor.instance.take_string(successor.instance.eval("typeof big")) == "undefined"
