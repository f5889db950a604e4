"""Guest threads: one per core, each guest pinned to its lane."""

from __future__ import annotations

import asyncio
import threading

from clawcell.runtime import GuestPool, run_on_guest_thread
from clawcell.runtime._worker import guest_lanes  # pyright: ignore[reportPrivateUsage]

INSTALL = '{"maxPending":16,"bindings":[]}'


def _thread_name() -> str:
    return threading.current_thread().name


def test_each_lane_runs_on_its_own_guest_thread() -> None:
    async def main() -> list[str]:
        return [await run_on_guest_thread(_thread_name, lane=lane) for lane in range(guest_lanes())]

    assert asyncio.run(main()) == [f"clawcell-guest-{lane}" for lane in range(guest_lanes())]


def test_concurrent_guests_are_spread_over_the_lanes() -> None:
    pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)
    guests = [pool.acquire() for _ in range(2 * guest_lanes())]
    lanes = [guest.lane for guest in guests]
    assert sorted(lanes) == sorted(list(range(guest_lanes())) * 2)
