"""`wait_for_change`, shared by the backends: an event when one exists, polling otherwise.

A waiter registers for one run, then reads the run's `revision` and compares it with the
one it saw (`since`); only then does it sleep, so a change landing between the caller's
last read and the wait is never missed. It wakes on the backend's event (a write by this
process, or PostgreSQL's `NOTIFY`) or at each poll, whose interval doubles up to a cap; the
poll covers writes the event cannot see (another process on the same SQLite file, a lost
`LISTEN` connection).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager

from .._lazy import value_class

__all__ = ["Poll", "Waiters", "wait_for_revision"]

RunKey = tuple[str, str]


@value_class
class Poll:
    """How often a waiter re-reads the revision: `first` seconds, doubling up to `cap`."""

    first: float
    cap: float


class Waiters:
    """In-process waiters by run, woken by `notify`; one instance per store object."""

    def __init__(self) -> None:
        self._events: dict[RunKey, set[asyncio.Event]] = {}

    @contextmanager
    def registered(self, key: RunKey) -> Generator[asyncio.Event]:
        """An event set by the next `notify(key)` while the block runs."""
        event = asyncio.Event()
        self._events.setdefault(key, set()).add(event)
        try:
            yield event
        finally:
            waiting = self._events.get(key)
            if waiting is not None:
                waiting.discard(event)
                if not waiting:
                    del self._events[key]

    def notify(self, key: RunKey) -> None:
        """Wake every waiter on `key` (called on the waiters' event loop)."""
        for event in self._events.get(key, ()):
            event.set()


async def wait_for_revision(
    *,
    event: asyncio.Event,
    revision: Callable[[], Awaitable[int | None]],
    since: int | None,
    timeout: float,
    poll: Poll,
) -> bool:
    """Whether the run's revision moved past `since` (or it vanished) within `timeout`."""
    deadline = time.monotonic() + max(timeout, 0.0)
    start = await revision()
    if start is None or (since is not None and start != since):
        return True
    interval = poll.first
    while (remaining := deadline - time.monotonic()) > 0:
        # `asyncio.timeout`, not `asyncio.wait_for`: on Python 3.11 `wait_for` swallows a
        # cancellation that arrives as the event fires (it returns the inner result), and a
        # cancelled watcher then waited on, forever for a lease's watch loop.
        try:
            async with asyncio.timeout(min(interval, remaining)):
                await event.wait()
        except TimeoutError:
            interval = min(interval * 2, poll.cap)
        event.clear()
        if await revision() != start:
            return True
    return False
