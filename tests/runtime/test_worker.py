"""Guest threads: one per core, each guest pinned to its lane."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import threading
import time
from typing import Any

import pytest

from clawcell import CodeMode, Tool
from clawcell._cell._segments import HOLD_FROM_TURN  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime import GuestPool, release_hold, run_on_guest_thread
from clawcell.runtime._worker import (  # pyright: ignore[reportPrivateUsage]
    SYNC_WAIT_S,
    _lanes,  # pyright: ignore[reportPrivateUsage]
    guest_lanes,
)
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


def _sleep_then(seconds: float, value: object) -> object:
    time.sleep(seconds)
    return value


def _fail_after(seconds: float, message: str) -> object:
    time.sleep(seconds)
    raise ValueError(message)


def test_the_loop_keeps_running_while_a_guest_job_outlasts_the_short_wait() -> None:
    async def main() -> tuple[object, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.005)

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        value = await run_on_guest_thread(_sleep_then, 0.3, "late")
        seen = ticks
        task.cancel()
        return value, seen

    value, ticks = asyncio.run(main())
    assert value == "late"
    assert ticks >= 5  # the loop served the ticker while the job ran (300 ms, a tick per 5)


def test_errors_reach_the_awaiting_coroutine_on_both_paths() -> None:
    async def main() -> list[str]:
        messages: list[str] = []
        for seconds in (0.0, 20 * SYNC_WAIT_S):
            try:
                await run_on_guest_thread(_fail_after, seconds, f"after {seconds}")
            except ValueError as exc:
                messages.append(str(exc))
        return messages

    assert asyncio.run(main()) == ["after 0.0", f"after {20 * SYNC_WAIT_S}"]


def test_jobs_around_the_wait_threshold_all_return_their_own_value() -> None:
    # Durations straddle `SYNC_WAIT_S`, so jobs end before, during and after the loop stops
    # waiting for them; a lost wake-up would hang here, a crossed one return a wrong value.
    durations = [SYNC_WAIT_S * factor for factor in (0.0, 0.5, 0.9, 1.0, 1.1, 1.5, 3.0)] * 10

    async def main() -> list[object]:
        return [await run_on_guest_thread(_sleep_then, d, i) for i, d in enumerate(durations)]

    assert asyncio.run(main()) == list(range(len(durations)))


def test_concurrent_jobs_on_every_lane_return_their_own_values() -> None:
    async def main() -> list[object]:
        calls = [
            run_on_guest_thread(_sleep_then, 0.001 * (i % 3), i, lane=i % guest_lanes())
            for i in range(40)
        ]
        return list(await asyncio.gather(*calls))

    assert asyncio.run(main()) == list(range(40))


def test_a_cancelled_wait_leaves_nothing_in_flight_and_the_next_job_runs() -> None:
    async def main() -> tuple[bool, object]:
        job = asyncio.ensure_future(run_on_guest_thread(_sleep_then, 0.1, "abandoned"))
        await asyncio.sleep(0.02)
        job.cancel()
        await asyncio.sleep(0.2)  # the abandoned job ends and is collected
        idle = not _lanes.get().in_flight
        return idle, await run_on_guest_thread(_sleep_then, 0.0, "next")

    assert asyncio.run(main()) == (True, "next")


def test_a_job_handed_back_to_a_loop_that_closes_unrun_is_not_left_in_flight() -> None:
    # A job stays "in flight" until it is collected; a loop that closed before it ran the
    # hand-back callback never collects it, and every later job of the process then took the
    # slow path (found when a test cancelled a cell and its loop ended at once).
    release = threading.Event()
    loop = asyncio.new_event_loop()

    async def submit() -> asyncio.Future[object]:
        job = asyncio.ensure_future(run_on_guest_thread(release.wait, 60))
        await asyncio.sleep(20 * SYNC_WAIT_S)  # past the wait: awaited through a future
        return job

    job = loop.run_until_complete(submit())
    try:
        release.set()
        ready: Any = getattr(loop, "_ready")  # noqa: B009 - asyncio's private ready queue
        for _ in range(6000):  # the lane's thread hands it back (the loop does not run)
            if ready:
                break
            time.sleep(0.01)
        assert ready  # the hand-back callback is queued, and will never run
        assert not _lanes.get().in_flight
    finally:
        job.cancel()
        loop.run_until_complete(asyncio.gather(job, return_exceptions=True))
        loop.close()


def _lane_tid() -> int:
    tid = _lanes.get().workers[0]._thread.native_id  # pyright: ignore[reportPrivateUsage]
    assert tid
    return tid


def _held_jobs(hold: bool, jobs: int = 200) -> tuple[list[set[int]], set[int] | None, bool]:
    """`jobs` jobs on lane 0, each reading the loop thread's CPUs while the loop waits for it:
    what they read, the lane's CPUs once held, and whether the loop thread could use every
    CPU it had whenever it ran."""
    lanes, lane, before = _lanes.get(), _lane_tid(), os.sched_getaffinity(0)

    async def main() -> tuple[list[set[int]], set[int] | None, bool]:
        loop_thread = threading.get_native_id()
        seen: list[set[int]] = []
        lane_cpus: set[int] | None = None
        free_while_running = True
        for _ in range(jobs):
            seen.append(await run_on_guest_thread(os.sched_getaffinity, loop_thread, hold=hold))
            free_while_running &= os.sched_getaffinity(0) == before
            if lanes.held is not None:
                lane_cpus = os.sched_getaffinity(lane)
        return seen, lane_cpus, free_while_running

    return asyncio.run(main())


def test_a_held_lane_sits_on_the_loop_thread_cpu_until_let_go_and_the_loop_never_moves() -> None:
    lanes, before, lane_before = (
        _lanes.get(),
        os.sched_getaffinity(0),
        os.sched_getaffinity(_lane_tid()),
    )
    try:
        seen, lane_cpus, free_while_running = _held_jobs(hold=True)
        assert lanes.held is not None, "never held: no quick job in 200"
    finally:
        release_hold()
    assert lane_cpus is not None and len(lane_cpus) == 1 and lane_cpus <= before
    assert seen == [before] * len(seen)  # the loop thread's CPUs, read while it waited
    assert free_while_running  # a process it starts (a tool's) gets every CPU
    assert lanes.held is None
    assert os.sched_getaffinity(_lane_tid()) == lane_before


def test_jobs_that_do_not_ask_for_a_hold_never_move_the_loop_thread() -> None:
    before = os.sched_getaffinity(0)
    seen, lane_cpus, free_while_running = _held_jobs(hold=False, jobs=50)
    assert seen == [before] * 50 and lane_cpus is None and free_while_running
    assert _lanes.get().held is None


def test_a_job_that_outlasts_the_wait_lets_go_of_the_lane_at_once() -> None:
    lanes, lane_before = _lanes.get(), os.sched_getaffinity(_lane_tid())

    async def main() -> tuple[bool, set[int]]:
        for _ in range(200):
            await run_on_guest_thread(_thread_name, hold=True)
            if lanes.held is not None:
                break
        was_held = lanes.held is not None
        await run_on_guest_thread(_sleep_then, 20 * SYNC_WAIT_S, None, hold=True)
        return was_held, os.sched_getaffinity(_lane_tid())

    try:
        was_held, lane_after = asyncio.run(main())
    finally:
        release_hold()
    assert was_held
    assert lane_after == lane_before  # a computing cell runs beside the loop, not under it


def test_a_call_heavy_cell_is_held_after_its_first_turns_and_let_go_when_its_leg_ends() -> None:
    before = os.sched_getaffinity(0)
    calls: list[tuple[bool, set[int]]] = []

    async def echo(args: dict[str, Any]) -> dict[str, Any]:
        calls.append((_lanes.get().held is not None, os.sched_getaffinity(0)))
        return args

    async def main() -> Any:
        async with CodeMode([Tool(name="echo", execute=echo)]) as mode:
            return await mode.exec("for (let i = 0; i < 300; i++) await echo({ i }); return 1")

    result = asyncio.run(main())
    assert result["status"] == "completed"
    held = [was_held for was_held, _ in calls]
    assert any(held), "no tool call ran while the lane was held"
    assert not any(held[:HOLD_FROM_TURN])  # a cell's first turns are never held
    assert all(cpus == before for _, cpus in calls)  # a tool runs with every CPU
    assert _lanes.get().held is None


def test_a_call_heavy_cell_on_v8_is_never_held() -> None:
    """A V8 guest's segment is a message to its worker process, which the guest thread may
    have to start anew: a process started on a held thread would inherit its one CPU."""
    held: list[bool] = []

    async def echo(args: dict[str, Any]) -> dict[str, Any]:
        held.append(_lanes.get().held is not None)
        return args

    async def main() -> Any:
        async with CodeMode([Tool(name="echo", execute=echo)], executor="v8") as mode:
            return await mode.exec("for (let i = 0; i < 50; i++) await echo({ i }); return 1")

    result = asyncio.run(main())
    assert result["status"] == "completed"
    assert len(held) == 50 and not any(held)


def test_a_process_that_may_not_set_affinities_stops_trying_and_runs_its_jobs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lanes = _lanes.get()

    def refuse(*_: Any) -> None:
        raise PermissionError("not here")

    monkeypatch.setattr(os, "sched_setaffinity", refuse)
    monkeypatch.setattr(lanes, "can_hold", True)
    seen, _, _ = _held_jobs(hold=True, jobs=100)
    assert len(seen) == 100 and lanes.held is None
    assert lanes.can_hold is False


def _voluntary_switches() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw


def test_a_round_trip_puts_each_thread_to_sleep_once() -> None:
    # Counted, not timed: the loop thread sleeps while the job runs, the lane's thread while
    # the loop works, and neither sleeps again for the GIL (the design's two; waking the
    # other side while holding the GIL made it four to five). Every thread of the process
    # counts, so the bound leaves room for the odd wait elsewhere.
    rounds = 300

    async def main() -> int:
        for _ in range(20):
            await run_on_guest_thread(_thread_name)
        before = _voluntary_switches()
        for _ in range(rounds):
            await run_on_guest_thread(_thread_name)
        return _voluntary_switches() - before

    assert asyncio.run(main()) <= 3 * rounds
