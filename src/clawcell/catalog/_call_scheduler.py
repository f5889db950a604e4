"""Execution-mode scheduling for one catalog (spec §11.3).

Parallel tools share the catalog; a sequential tool waits for every earlier call to finish and
holds back every later call until it is done. This is a fair (FIFO) shared/exclusive lock: one
per catalog, so it also serializes calls coming from different cells using the same catalog.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import field

from .._lazy import record_class
from ._tool import ExecutionMode

__all__ = ["CallScheduler"]


@record_class
class _Waiter:
    """A call waiting for admission."""

    exclusive: bool
    ready: asyncio.Future[None]


@record_class
class CallScheduler:
    """FIFO shared/exclusive admission of tool calls."""

    _active_shared: int = 0
    _active_exclusive: bool = False
    _queue: deque[_Waiter] = field(default_factory=deque[_Waiter])

    @asynccontextmanager
    async def slot(self, mode: ExecutionMode) -> AsyncGenerator[None]:
        """Hold a slot for one call; `"sequential"` calls run alone."""
        exclusive = mode == "sequential"
        await self._acquire(exclusive)
        try:
            yield
        finally:
            self.release(exclusive)

    async def acquire(self, exclusive: bool) -> None:
        """Wait for a slot (`exclusive` for a sequential call); pair with `release`.

        The uncontended case returns without suspending; `slot` is the context-manager form.
        """
        await self._acquire(exclusive)

    def admit_now(self, exclusive: bool) -> bool:
        """Take a slot if one is free without waiting (then pair with `release`), else
        return False and take nothing: `acquire` waits its turn. Spares the uncontended
        call two coroutines."""
        if self._queue or self._active_exclusive or (exclusive and self._active_shared):
            return False
        if exclusive:
            self._active_exclusive = True
        else:
            self._active_shared += 1
        return True

    def release(self, exclusive: bool) -> None:
        """Give back a slot taken with `acquire` or `admit_now`."""
        if exclusive:
            self._active_exclusive = False
        else:
            self._active_shared -= 1
        if self._queue:
            self._wake()

    def _can_start(self, exclusive: bool) -> bool:
        if self._active_exclusive:
            return False
        return self._active_shared == 0 if exclusive else True

    async def _acquire(self, exclusive: bool) -> None:
        if not self._queue and self._can_start(exclusive):
            self._admit(exclusive)
            return
        waiter = _Waiter(exclusive, asyncio.get_running_loop().create_future())
        self._queue.append(waiter)
        try:
            await waiter.ready
        except asyncio.CancelledError:
            if waiter.ready.done() and not waiter.ready.cancelled():
                self.release(exclusive)
            else:
                self._queue.remove(waiter)
                self._wake()
            raise

    def _admit(self, exclusive: bool) -> None:
        if exclusive:
            self._active_exclusive = True
        else:
            self._active_shared += 1

    def _wake(self) -> None:
        while self._queue and self._can_start(self._queue[0].exclusive):
            waiter = self._queue.popleft()
            self._admit(waiter.exclusive)
            waiter.ready.set_result(None)
