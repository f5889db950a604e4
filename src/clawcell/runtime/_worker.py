"""The guest threads that run guest code off the event loop.

Wasm execution releases the GIL (the engine is called through `ctypes`), so while a
cell computes on a guest thread the event loop keeps serving other work, and cells on
different guest threads compute in parallel. There is one guest thread per core; each guest
is given a *lane* (a guest thread) when it is built, and every segment of a cell runs on its
guest's lane, so a guest's memory stays warm in one core's caches. Each guest keeps its own
hard deadline (see `_wasm._backstop`), so lanes never disturb each other's backstop.

What comes here: a segment that computed past its slice of the loop thread (`_crossing`,
`_first_segment`: a short one, the common case, never leaves the loop thread), every segment
of a guest that cannot begin it there (V8's; any, where Python cannot run call futures), and
the description of an unhandled rejection. The hand-off is still built for short jobs, whose
cost is mostly the hand-off itself:

- The loop wakes a lane's thread by writing a byte to the lane's pipe, and the thread tells
  a waiting loop thread that a job finished by ringing a `Doorbell` (an eventfd that epoll
  watches edge-triggered: a wait is one `epoll_wait`, nothing is read back). `os.write`
  lets go of the GIL before the system call, so the woken thread finds the GIL free
  instead of waking a second time for it: two context switches per round trip (a queue
  and `call_soon_threadsafe` took about five) and four system calls.
- When no other guest job is in flight and the loop has no other work ready, the loop
  thread waits for the doorbell for at most `SYNC_WAIT_S` (without the GIL) rather than
  through the selector, a future and a task wake-up. A job that ends later is awaited the
  asyncio way, so a cell that computes holds the event loop for `SYNC_WAIT_S` at most; its
  lane remembers that its last job ended late (from submission, so a thread that waited
  for a busy core counts too), and the lane's next job is awaited at once. With other jobs
  in flight or other callbacks ready the loop never waits: concurrent cells keep computing
  in parallel while it serves them.
- Nothing on the path asks the kernel more than it must: `PerProcess` notices forks
  without `getpid`, and no `contextlib.suppress` (three calls) runs per round trip.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import os
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

from ._doorbell import DRAIN, WAKE, Doorbell, pipe
from ._process import PerProcess

__all__ = [
    "SYNC_WAIT_S",
    "SegmentRunner",
    "guest_lanes",
    "next_lane",
    "run_on_guest_thread",
]

SegmentRunner = Callable[..., Awaitable[Any]]
"""How a cell runs a guest segment off the event loop: `run_on_guest_thread`, or `None` in the
cell's place for the loop thread."""

SYNC_WAIT_S: Final = 0.001
"""How long the loop thread waits for a guest job before it awaits it through the loop (the
wait is a `poll`, whose resolution is a millisecond)."""


def guest_lanes() -> int:
    """How many guest threads this process runs (one per core available to it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


class _Job:
    """One call on a guest thread. The worker stores the outcome, sets `finished`, then
    reads `future`; the loop sets `future` before it reads `finished` for the last time, so
    either the loop sees the job finished or the worker sees the future, never neither."""

    __slots__ = ("args", "error", "finished", "function", "future", "result", "submitted")

    def __init__(self, function: Callable[..., Any] | None, args: tuple[Any, ...]) -> None:
        self.function = function
        self.args = args
        self.future: asyncio.Future[Any] | None = None
        self.finished = False
        self.result: Any = None
        self.error: BaseException | None = None
        self.submitted = 0.0

    def run(self) -> None:
        function = self.function
        assert function is not None
        try:
            self.result = function(*self.args)
        except BaseException as exc:  # handed to the awaiting coroutine, never lost
            self.error = exc
        self.function, self.args = None, ()  # the idle thread must not keep a cell alive
        self.finished = True

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


def _signal(fd: int) -> None:
    # `try`, not `contextlib.suppress` (three calls more): this runs on every round trip.
    try:  # noqa: SIM105
        os.write(fd, WAKE)
    except BlockingIOError:  # full of wake-ups not yet read: wakes anyway
        pass


class _Worker:
    """One lane: its thread and pipe are made at its first job, not with the lane. Most cells
    end inside their slice of the loop thread (`_first_segment`), so a process whose cells
    never computed past one starts no guest thread (nor leaves one for its exit)."""

    def __init__(self, lane: int, lanes: _Lanes) -> None:
        self._jobs: collections.deque[_Job] = collections.deque()
        self._lane = lane
        self._lanes = lanes
        self._waker = -1
        """The pipe's write end (-1 until the thread is started)."""
        self.slow = False
        """Whether this lane's last job ended later than `SYNC_WAIT_S` after it was submitted
        (its next one is awaited)."""

    def submit(self, job: _Job) -> None:
        if self._waker < 0:
            self._start()  # first: a thread that cannot start leaves no job queued
        job.submitted = time.perf_counter()
        self._jobs.append(job)
        _signal(self._waker)

    def _start(self) -> None:
        # Loops on several threads may hand this lane their first jobs at once: one starts it.
        with self._lanes.starting:
            if self._waker >= 0:
                return
            wake, waker = pipe()
            name = f"clawcell-guest-{self._lane}"
            try:
                threading.Thread(target=self._run, args=(wake,), name=name, daemon=True).start()
            except BaseException:  # no thread (the process is at its limit): no pipe left open
                os.close(wake)
                os.close(waker)
                raise
            self._waker = waker  # last: a submit that sees it may signal the running thread

    def _run(self, wake: int) -> None:
        # Every `submit` appends before it writes, and the thread empties the queue after
        # each read, so no job waits for a wake-up that was already consumed.
        read, jobs, finish = os.read, self._jobs, self._finish
        while True:
            read(wake, DRAIN)
            while jobs:
                finish(jobs.popleft())

    def _finish(self, job: _Job) -> None:
        job.run()
        # From submission: a thread that waits for a core makes a quick job late too.
        self.slow = time.perf_counter() - job.submitted > SYNC_WAIT_S
        future = job.future
        if future is None:
            self._lanes.done.ring()
        else:
            _hand_back(future, job, self._lanes.in_flight)


def _hand_back(future: asyncio.Future[Any], job: _Job, in_flight: set[_Job]) -> None:
    try:  # noqa: SIM105 - the same shape as `_signal`
        future.get_loop().call_soon_threadsafe(_settle, future, job, in_flight)
    except RuntimeError:  # the loop closed meanwhile: nobody awaits the job any more
        pass
    # No longer running on a lane: a loop that closes before it runs `_settle` must not leave
    # the job "in flight" for good (every later job would take the slow path).
    in_flight.discard(job)


def _settle(future: asyncio.Future[Any], job: _Job, in_flight: set[_Job]) -> None:
    in_flight.discard(job)
    if future.done():  # the awaiting coroutine was cancelled (or took the result) meanwhile
        return
    if job.error is not None:
        future.set_exception(job.error)
    else:
        future.set_result(job.result)


class _Lanes:
    def __init__(self) -> None:
        self.in_flight: set[_Job] = set()
        """Jobs submitted and not yet collected by the loop that awaits them."""
        self.done = Doorbell()
        self.starting = threading.Lock()
        """Held while a lane's thread is started (see `_Worker._start`)."""
        self.workers = [_Worker(lane, self) for lane in range(guest_lanes())]
        self.counter = itertools.count()

    def wait_for(self, job: _Job) -> bool:
        """Wait up to `SYNC_WAIT_S` for `job` on this thread: whether it finished."""
        if job.finished:
            return True
        until = time.monotonic() + SYNC_WAIT_S
        while True:
            remaining = until - time.monotonic()
            if remaining <= 0 or not self.done.wait(remaining):
                return job.finished
            if job.finished:
                return True


def _has_ready_callbacks(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether `loop` has other work ready to run (other cells' steps, settled tools): then
    it must not wait. One callback is allowed: after a tool call it is the finished task's
    done-callback, which only records what the cell has already swept. Read from asyncio's
    own loop; a loop without that queue never waits."""
    ready: Any = getattr(loop, "_ready", None)
    return ready is None or len(ready) > 1


_lanes = PerProcess(_Lanes)  # a forked child does not inherit the threads: it starts its own


def next_lane() -> int:
    """The lane for a new guest: lanes are handed out in turn."""
    lanes = _lanes.get()
    return next(lanes.counter) % len(lanes.workers)


async def run_on_guest_thread(
    function: Callable[..., Any], *args: Any, lane: int = 0, awaited: bool = False
) -> Any:
    """`function(*args)` on guest thread `lane`, awaited from the event loop (or waited for
    briefly on the loop thread, see the module's docstring; never when `awaited`: the job is
    the rest of a segment that already held the loop thread for its slice)."""
    lanes = _lanes.get()
    worker = lanes.workers[lane % len(lanes.workers)]
    job = _Job(function, args)
    in_flight = lanes.in_flight
    loop = asyncio.get_running_loop()
    quick = not (awaited or in_flight or worker.slow or _has_ready_callbacks(loop))
    in_flight.add(job)
    if not quick:
        job.future = loop.create_future()
    try:
        worker.submit(job)
    except BaseException:  # its thread could not start: the job never ran, nor will
        in_flight.discard(job)
        raise
    if quick and lanes.wait_for(job):
        in_flight.discard(job)
        return job.outcome()
    if job.future is None:
        job.future = loop.create_future()
        if job.finished:  # it ended before the worker could see the future
            job.future.cancel()  # which the worker may still settle: nobody awaits it
            in_flight.discard(job)
            return job.outcome()
    return await job.future
