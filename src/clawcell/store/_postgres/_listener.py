"""`PostgresStore`'s wake-ups: one `LISTEN` connection per store, feeding in-process waiters.

The connection is opened on the first `wait_for_change` and kept until `close()`. Each
notification names one run (`[session_id, run_id]`) and wakes the waiters registered for it;
waiters re-read the run's revision themselves, so a notification is only a hint and a lost
one costs at most one poll interval. If the connection drops, the next wait opens a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING, Any

from .._waiting import Waiters
from ._schema import trusted

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["Listener"]


class Listener:
    """Relays `NOTIFY`s on `channel` to `waiters`."""

    def __init__(self, dsn: str, channel: str, waiters: Waiters) -> None:
        self._dsn = dsn
        self._channel = channel
        self._waiters = waiters
        self._conn: AsyncConnection[tuple[Any, ...]] | None = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._closed = False  # once closed, no connection opens again (the store is done)

    async def ensure_listening(self) -> None:
        """Open the `LISTEN` connection unless it is up; failures leave waiters polling."""
        import psycopg

        async with self._lock:
            if self._closed or (self._task is not None and not self._task.done()):
                return
            await self._shut()
            conn = await psycopg.AsyncConnection.connect(self._dsn, autocommit=True)
            try:
                await conn.execute(trusted(f'LISTEN "{self._channel}"'))
            except BaseException:
                await conn.close()
                raise
            if self._closed:  # the store closed meanwhile: nobody else would close it
                await conn.close()
                return
            self._conn = conn
            self._task = asyncio.create_task(self._pump(conn), name="clawcell-postgres-listen")

    async def _pump(self, conn: AsyncConnection[tuple[Any, ...]]) -> None:
        import psycopg

        with contextlib.suppress(psycopg.Error):
            async for notify in conn.notifies():
                session_id, run_id = json.loads(notify.payload)
                self._waiters.notify((str(session_id), str(run_id)))

    async def close(self) -> None:
        """Stop relaying and close the connection (and one still opening); a wait that comes
        later (one that began before the store closed) opens none. Idempotent."""
        self._closed = True
        await self._shut()

    async def _shut(self) -> None:
        task, conn, self._task, self._conn = self._task, self._conn, None, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if conn is not None:
            await conn.close()
