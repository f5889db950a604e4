"""The worker thread that runs guest code off the event loop.

Wasm execution releases the GIL, so while a cell computes on this thread the event loop keeps
serving other work. There is one worker per process: guest segments never overlap, which the
single epoch watchdog relies on. The handoff is a plain queue and `call_soon_threadsafe`, a
quarter cheaper than `run_in_executor` (about 0.1 ms per round trip on a small VM).
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any

from ._process import PerProcess

__all__ = ["run_on_guest_thread"]

_Job = tuple[asyncio.Future[Any], Callable[..., Any], tuple[Any, ...]]


class _Worker:
    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="clawcell-guest", daemon=True)
        self._thread.start()

    def submit(self, job: _Job) -> None:
        self._jobs.put(job)

    def _run(self) -> None:
        while True:
            future, function, args = self._jobs.get()
            try:
                result = function(*args)
            except BaseException as exc:  # handed to the awaiting coroutine, never lost
                future.get_loop().call_soon_threadsafe(_settle, future, None, exc)
            else:
                future.get_loop().call_soon_threadsafe(_settle, future, result, None)
            # The idle thread must not keep the last job's cell (and its guest) alive.
            del future, function, args
            result = None


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # the awaiting coroutine was cancelled meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


_worker = PerProcess(_Worker)  # a forked child does not inherit the thread: it starts its own


async def run_on_guest_thread(function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` on the guest worker thread, awaited from the event loop."""
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    _worker.get().submit((future, function, args))
    return await future
