"""Guest threads: one per core, each guest pinned to its lane."""

from __future__ import annotations

import asyncio
import json
import threading

from clawcell.runtime import GuestPool, run_on_guest_thread
from clawcell.runtime._worker import guest_lanes  # pyright: ignore[reportPrivateUsage]
from tests.conftest import in_forked_child

INSTALL = '{"maxPending":16,"bindings":[]}'


def _thread_name() -> str:
    return threading.current_thread().name


def test_each_lane_runs_on_its_own_guest_thread() -> None:
    async def main() -> list[str]:
        return [await run_on_guest_thread(_thread_name, lane=lane) for lane in range(guest_lanes())]

    assert asyncio.run(main()) == [f"clawcell-guest-{lane}" for lane in range(guest_lanes())]


def _lanes_of_concurrent_guests() -> bytes:
    pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)
    guests = [pool.acquire() for _ in range(2 * guest_lanes())]
    return json.dumps([guest.lane for guest in guests]).encode()


def test_concurrent_guests_are_spread_over_the_lanes() -> None:
    # In a forked child: the pool balances lanes over every guest in use in the process, and
    # guests other tests still hold would tilt it (see `tests/runtime/test_pool.py`).
    out = in_forked_child(_lanes_of_concurrent_guests)
    assert out is not None, "the child hung"
    assert sorted(json.loads(out)) == sorted(list(range(guest_lanes())) * 2)
