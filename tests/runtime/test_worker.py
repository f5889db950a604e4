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

from clawcell.runtime import GuestPool, run_on_guest_thread
from clawcell.runtime import _worker as _worker_module  # pyright: ignore[reportPrivateUsage]
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


def _guest_threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("clawcell-guest-"))


def _threads_as_lanes_are_used() -> bytes:
    pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)
    guest = pool.acquire()
    seen = [_guest_threads()]

    async def on_last_lane() -> str:
        return await run_on_guest_thread(_thread_name, lane=guest_lanes() - 1)

    ran_on = asyncio.run(on_last_lane())
    seen.append(_guest_threads())
    pool.release(guest)
    return json.dumps({"seen": seen, "ran_on": ran_on}).encode()


def test_a_lanes_thread_starts_with_its_first_job_not_with_the_guests() -> None:
    # In a forked child: the lanes are made once per process, and this one has none yet.
    # A cell that ends inside its slice of the loop thread never hands a lane a job, so a
    # process that runs only such cells starts (and leaves for its exit) no guest thread.
    out = in_forked_child(_threads_as_lanes_are_used)
    assert out is not None, "the child hung"
    last = f"clawcell-guest-{guest_lanes() - 1}"
    assert json.loads(out) == {"seen": [[], [last]], "ran_on": last}


def _a_lane_that_cannot_start() -> bytes:
    real_start = threading.Thread.start
    refused: list[str] = []

    def refuse(thread: threading.Thread) -> None:
        refused.append(thread.name)
        raise RuntimeError("can't start new thread")

    async def twice() -> list[str]:
        results: list[str] = []
        _lanes.get()  # the lanes' doorbell opens its own descriptors
        threading.Thread.start = refuse  # pyright: ignore[reportAttributeAccessIssue]
        before = len(os.listdir("/proc/self/fd"))
        try:
            await run_on_guest_thread(_thread_name)
        except RuntimeError as exc:
            results.append(f"{exc} ({len(os.listdir('/proc/self/fd')) - before} fds left)")
        finally:
            threading.Thread.start = real_start  # pyright: ignore[reportAttributeAccessIssue]
        results.append(await run_on_guest_thread(_thread_name))
        return results

    return json.dumps({"refused": refused, "results": asyncio.run(twice())}).encode()


def test_a_lane_whose_thread_cannot_start_fails_its_job_and_starts_at_the_next() -> None:
    # A process at its thread limit: the job fails with the reason, leaves no pipe open and no
    # job in flight, and the lane starts its thread at its next job.
    out = in_forked_child(_a_lane_that_cannot_start)
    assert out is not None, "the child hung"
    assert json.loads(out) == {
        "refused": ["clawcell-guest-0"],
        "results": ["can't start new thread (0 fds left)", "clawcell-guest-0"],
    }


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


def test_an_awaited_job_is_never_waited_for_on_the_loop_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rest of a segment that already held the loop thread for its slice is awaited at
    once: the loop thread does not wait up to `SYNC_WAIT_S` for it as for a quick job."""
    lanes = _lanes.get()
    waited: list[object] = []
    wait_for = type(lanes).wait_for

    def spy(self: Any, job: Any) -> bool:
        # Which job: `_sleep_then`'s value, from its arguments, or from its result once the
        # lane ran it (a finished job drops its arguments; its result is set before).
        args = job.args
        waited.append(args[-1] if args else job.result)
        return wait_for(self, job)

    monkeypatch.setattr(type(lanes), "wait_for", spy)
    # A lane whose last job ended late is not waited for (`slow`): the awaited job may be the
    # first of a lane whose thread starts with it, late on a loaded machine. Nothing here is
    # late by that measure; the bound of `wait_for` itself does not matter (the job sleeps 0).
    monkeypatch.setattr(_worker_module, "SYNC_WAIT_S", 3600.0)

    async def main() -> list[object]:
        await asyncio.sleep(0.01)  # no job of an earlier test in flight
        awaited = await run_on_guest_thread(_sleep_then, 0.0, "awaited", awaited=True)
        quick = await run_on_guest_thread(_sleep_then, 0.0, "quick")
        return [awaited, quick]

    assert asyncio.run(main()) == ["awaited", "quick"]
    assert waited == ["quick"]
