"""The guest pool spreads the guests in use over the guest threads (lanes).

Each case runs in a forked child, whose process-wide lane bookkeeping starts empty, so guests
that other tests still hold cannot tilt it."""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import threading
import time
import weakref
from collections.abc import Callable

import pytest

from clawcell.runtime import Guest, GuestPool
from clawcell.runtime._wasm._backstop import run_slice  # pyright: ignore[reportPrivateUsage]
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


def _one_lane_dropped(pool: GuestPool) -> list[Guest]:
    held = [pool.acquire() for _ in range(LANES)]
    gone = weakref.ref(held.pop())  # never released: its cell was abandoned
    gc.collect()
    assert gone() is None
    return [pool.acquire()]


def test_a_guest_dropped_without_release_frees_its_lane() -> None:
    assert _lanes_in_child(_one_lane_dropped) == [LANES - 1]


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


INSTALL_HEADROOM = '{"maxPending":1,"bindings":[],"test":"heap headroom"}'
ON_LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pagemap is Linux's")


def test_a_cell_that_allocates_within_the_heap_headroom_leaves_its_guest_reusable() -> None:
    pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL_HEADROOM)
    guest = pool.acquire()
    inst = guest.instance
    size = inst.memory.size
    # 1.5 MB in one string, kept alive: without free heap in the image this grew the memory,
    # and the guest was dropped.
    inst.free_value(inst.eval("globalThis.kept = 'x'.repeat(1500000); 1"))
    assert inst.memory.size == size
    assert not inst.grown
    pool.release(guest)
    again = pool.acquire()
    assert again is guest
    again.reset()
    assert again.instance.take_string(again.instance.eval("typeof kept")) == "undefined"


@ON_LINUX
def test_a_released_guest_gives_the_pages_its_cell_used_in_the_free_heap_back() -> None:
    from clawcell.runtime._wasm._pages import run_bits, touched_pages  # pyright: ignore[reportPrivateUsage]

    pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL_HEADROOM)
    guest = pool.acquire()
    memory = guest.instance.memory
    inst = guest.instance
    inst.free_value(inst.eval("globalThis.kept = 'x'.repeat(1500000); 1"))
    runs = run_bits(memory._zero_runs, memory.size)  # pyright: ignore[reportPrivateUsage]
    used = touched_pages(memory.base, memory.size)
    assert used is not None and bin(used & runs).count("1") >= 1_000_000 // 4096
    pool.release(guest)
    left = touched_pages(memory.base, memory.size)
    assert left is not None and left & runs == 0


def test_a_guest_reset_after_its_release_is_its_image_byte_for_byte() -> None:
    pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL_HEADROOM)
    guest = pool.acquire()
    inst = guest.instance
    deep = "function f(n) { return n === 0 ? 0 : 1 + f(n - 1); } f(150)"
    inst.free_value(inst.eval("globalThis.kept = 'x'.repeat(1500000); 1"))
    assert inst.take_string(inst.eval(deep)) == "150"
    pool.release(guest)  # the touched free heap and stack are dropped here ...
    again = pool.acquire()
    assert again is guest
    again.reset()  # ... so the reset leaves those runs alone, and must still be exact
    assert again.instance.memory.copy() == again.instance.memory.image


def test_a_forked_child_takes_none_of_its_parents_idle_guests() -> None:
    pool = _pool()
    held = [pool.acquire(), pool.acquire()]
    for guest in held:
        pool.release(guest)  # idle in the pool
    shelved = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)
    shelved_guest = shelved.acquire()
    shelved.release(shelved_guest)
    shelved.close()  # idle on the process-wide shelf

    def child() -> bytes:
        taken = [
            pool.acquire(),
            GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL).acquire(),
        ]
        parents = {id(guest) for guest in [*held, shelved_guest]}
        return json.dumps([id(guest) in parents for guest in taken]).encode()

    out = in_forked_child(child)
    assert out is not None, "the child hung"
    assert json.loads(out) == [False, False]


def test_acquiring_and_releasing_asks_the_kernel_for_no_process_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os

    pool = _pool()
    pool.release(pool.acquire())

    def no_getpid() -> int:
        raise AssertionError("the pool called os.getpid")

    monkeypatch.setattr(os, "getpid", no_getpid)
    for _ in range(3):
        pool.release(pool.acquire())
    pool.close()
    other = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)
    other.release(other.acquire())  # from the shelf
    other.close()


# -- a release inside a running event loop: put away from a callback of the loop -------------


def _zero_run_pages_touched(guest: Guest) -> int:
    from clawcell.runtime._wasm._pages import run_bits, touched_pages  # pyright: ignore[reportPrivateUsage]

    memory = guest.instance.memory
    runs = run_bits(memory._zero_runs, memory.size)  # pyright: ignore[reportPrivateUsage]
    used = touched_pages(memory.base, memory.size)
    assert used is not None
    return bin(used & runs).count("1")


def _fill_free_heap(guest: Guest) -> None:
    inst = guest.instance
    inst.free_value(inst.eval("globalThis.kept = 'x'.repeat(1500000); 1"))


async def _next_iteration() -> None:
    """Return once the loop ran an iteration after this one: a timer due now, set before,
    has run (the first `sleep(0)` resumes in the iteration that runs it, before it)."""
    await asyncio.sleep(0)
    await asyncio.sleep(0)


def _released_in_a_loop_step() -> bytes:
    async def body() -> dict[str, object]:
        pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL_HEADROOM)
        held = [pool.acquire() for _ in range(LANES)]  # one guest on every lane
        last = held[-1]
        _fill_free_heap(last)
        pool.release(last)
        other = _pool()
        beside = other.acquire()  # `last` still holds its lane: every lane carries one
        again = pool.acquire()  # taken back before the loop turned: as it was, on its lane
        again.reset()
        return {
            "same": again is last,
            "lane": again.lane == LANES - 1,
            "beside": beside.lane,
            "pristine": again.instance.memory.copy() == bytes(again.instance.memory.image),
            "global": again.instance.take_string(again.instance.eval("typeof kept")),
        }

    return json.dumps(asyncio.run(body())).encode()


@ON_LINUX
def test_a_guest_released_in_a_loop_step_is_taken_back_as_it_was_by_the_next_acquire() -> None:
    out = in_forked_child(_released_in_a_loop_step)
    assert out is not None, "the child hung"
    assert json.loads(out) == {
        "same": True,
        "lane": True,
        "beside": 0,
        "pristine": True,
        "global": "undefined",
    }


def _put_away_when_the_loop_turns() -> bytes:
    async def body() -> dict[str, object]:
        pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL_HEADROOM)
        held = [pool.acquire() for _ in range(LANES)]
        last = held[-1]
        _fill_free_heap(last)
        pool.release(last)
        before = _zero_run_pages_touched(last)
        await _next_iteration()  # the timer due at once puts it away
        after = _zero_run_pages_touched(last)
        freed = _pool().acquire().lane  # its lane is the only one without a guest now
        return {"before": before >= 1_000_000 // 4096, "after": after, "freed": freed}

    return json.dumps(asyncio.run(body())).encode()


@ON_LINUX
def test_a_guest_released_in_a_loop_is_put_away_when_the_loop_turns() -> None:
    out = in_forked_child(_put_away_when_the_loop_turns)
    assert out is not None, "the child hung"
    assert json.loads(out) == {"before": True, "after": 0, "freed": LANES - 1}


def _put_away_by_close_and_by_a_later_loop() -> bytes:
    pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL_HEADROOM)
    first, second, third = pool.acquire(), pool.acquire(), pool.acquire()
    for guest in (first, second, third):
        _fill_free_heap(guest)

    async def release_only(guest: Guest) -> None:
        pool.release(guest)  # the loop ends before its callback runs

    async def release_and_turn(guest: Guest) -> None:
        pool.release(guest)
        await _next_iteration()

    asyncio.run(release_only(first))
    asyncio.run(release_and_turn(second))  # a later loop puts away the earlier loop's too
    turned = [_zero_run_pages_touched(first), _zero_run_pages_touched(second)]

    async def release_and_close(guest: Guest) -> None:
        pool.release(guest)
        pool.close()  # at once, before the loop turns

    asyncio.run(release_and_close(third))
    return json.dumps([*turned, _zero_run_pages_touched(third)]).encode()


@ON_LINUX
def test_a_guest_released_in_a_loop_is_put_away_by_close_or_by_a_later_loop() -> None:
    out = in_forked_child(_put_away_by_close_and_by_a_later_loop)
    assert out is not None, "the child hung"
    assert json.loads(out) == [0, 0, 0]


def test_a_guest_released_with_a_call_future_alive_is_never_handed_out_again() -> None:
    """A turn suspended on its call future and never finished (`runtime._crossing`) leaves
    guest code mid-way and the store unusable for any other call: the pool unwinds it and
    drops the guest, whatever let it come back."""
    pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)
    guest = pool.acquire()
    instance = guest.instance
    source = b"let n = 0; for (let i = 0; i < 1e8; i++) n += i; n"
    ptr = instance.put_cstring(source)
    filename = instance._filename  # pyright: ignore[reportPrivateUsage]
    future = instance._f["JS_Eval"].start(instance.ctx, ptr, len(source), filename, 0)  # pyright: ignore[reportPrivateUsage]
    assert not run_slice(future, instance.hard_deadline, instance.reactor.watchdog, 0.0)
    pool.release(guest)
    assert instance.store.future is None  # unwound at once
    again = pool.acquire()
    assert again is not guest
    assert again.instance.store.future is None
    pool.release(again)


def _stopped_mid_segment(pool: GuestPool) -> list[Guest]:
    """A guest released while its segment still runs on another thread, stopped (its caller
    was cancelled): dropped untouched, its lane freed at once, the segment ends on its own."""
    held = [pool.acquire() for _ in range(LANES)]
    guest = held.pop()
    spinning = threading.Event()
    script = guest.parse_cell("let n = 0;\nfor (;;) n++;", time.monotonic() + 3600)
    assert isinstance(script, int)

    def segment() -> None:
        spinning.set()
        guest.run_segment(script, None, time.monotonic() + 3600)

    thread = threading.Thread(target=segment)
    thread.start()
    assert spinning.wait(60)
    guest.stop()
    pool.release(guest)  # while the segment may still run: nothing of its store is touched
    freed = pool.acquire()  # on the lane the stopped guest left
    thread.join(60)
    assert not thread.is_alive() and guest.retired
    assert freed is not guest
    return [freed]


def test_a_guest_stopped_mid_segment_frees_its_lane_when_released_and_is_dropped() -> None:
    assert _lanes_in_child(_stopped_mid_segment) == [LANES - 1]
