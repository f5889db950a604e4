"""`LoopGuard`: a PostgreSQL store closes with the event loop it belongs to.

A psycopg pool runs worker tasks on the event loop that opened it, and a worker that is
opening a connection catches `CancelledError` (the pool schedules another attempt instead)
and waits for its next job. An event loop that ends with the pool still open (`asyncio.run`'s
end, a test client's portal, a server's exit) cancels each of its tasks once and waits for all
of them, so it waits for that worker forever. A store that opens a pool therefore starts a
guard task on the same loop: cancelled with the others as the loop ends, it closes the store,
which tells the pool's workers to stop; `release()` (from the store's own `close()`) ends it
quietly. A store belongs to that loop anyway: its pool's tasks run there and end with it, so
from a later loop the pool could no longer grow or replace a connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

__all__ = ["LoopGuard"]

_log = logging.getLogger("clawcell.store")

_GUARDS: set[asyncio.Task[None]] = set()
"""The pending guards: a loop holds its tasks weakly, and a store dropped unclosed must still
be closed when its loop ends (a loop closed without cancelling its tasks keeps its guard
here, as it keeps the pool's own tasks pending)."""


class LoopGuard:
    """Awaits `close()` when the running event loop cancels this guard's task as it ends,
    unless `release()` came first."""

    def __init__(self, close: Callable[[], Awaitable[object]], *, name: str) -> None:
        self._released = asyncio.Event()
        task = asyncio.get_running_loop().create_task(self._guard(close), name=name)
        _GUARDS.add(task)
        task.add_done_callback(_GUARDS.discard)

    def release(self) -> None:
        """End the guard without closing anything (the store closed itself). Idempotent."""
        self._released.set()

    async def _guard(self, close: Callable[[], Awaitable[object]]) -> None:
        try:
            await self._released.wait()
        except asyncio.CancelledError:
            try:
                await close()
            except Exception:  # the loop is ending: a failed close is only worth a warning
                _log.warning("closing a store as its event loop ended failed", exc_info=True)
            raise
