"""`LeaseKeeper`: renews a run's lease in the background while its holder works on it.

The holder of a claimed run must renew before the lease runs out, or another worker may
claim the run. The keeper renews every third of the lease length, so two renewals in a row
can fail (a slow database, a brief outage) before the lease lapses. When a renewal is refused
with `StaleRunError` the run has moved on: the keeper stops and sets `lost`; the holder must
stop working on the run and drop its copy (its next fenced write would be refused anyway).
Other failures (`StoreUnavailableError`) are logged and retried at the next tick.

Stopping does not rely on the cancellation reaching the renewal: Python 3.11's
`asyncio.wait_for` (used by the PostgreSQL pool while it hands out a connection) swallows a
cancellation that arrives as its inner wait completes, and a keeper relying on it then kept
renewing forever while `close()` waited for it (seen in the scale-out proof load). The loop
also checks a flag that `close()` sets first, and `cancel_requested()` for a cancellation that
came without `close()` (an event loop closing around a keeper never closed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from ..errors import StaleRunError, StoreUnavailableError
from ._cancellation import cancel_requested
from ._leases import check_lease_seconds
from ._protocol import RunStore
from ._records import Lease

__all__ = ["LeaseKeeper"]

_log = logging.getLogger("clawcell.store")


class LeaseKeeper:
    """Keeps `lease` alive until `release()` or `close()`; use it as an async context manager.

    Args:
        store: The store the lease was claimed from.
        lease: The lease `claim_run` returned.
        lease_seconds: The length each renewal sets.
        every: Seconds between renewals; a third of `lease_seconds` by default.

    Attributes:
        lost: Set once a renewal was refused: another worker owns the run now.
    """

    def __init__(
        self,
        store: RunStore,
        lease: Lease,
        *,
        lease_seconds: float,
        every: float | None = None,
    ) -> None:
        self._store = store
        self._lease = lease
        self._seconds = check_lease_seconds(lease_seconds)
        self._every = max(self._seconds / 3 if every is None else check_lease_seconds(every), 0.001)
        self.lost = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def lease(self) -> Lease:
        """The lease as last renewed (its `version` never changes)."""
        return self._lease

    async def __aenter__(self) -> LeaseKeeper:
        self._task = asyncio.create_task(self._renew(), name=f"lease {self._lease.run_id}")
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def _renew(self) -> None:
        while not self._stopping and not cancel_requested():
            await asyncio.sleep(self._every)
            if self._stopping or cancel_requested():
                return
            try:
                self._lease = await self._store.renew_lease(
                    self._lease, lease_seconds=self._seconds
                )
            except StaleRunError:
                self.lost.set()
                return
            except StoreUnavailableError:
                _log.warning("renewing the lease of %r failed", self._lease.run_id, exc_info=True)

    async def close(self) -> None:
        """Stop renewing (the lease then lapses on its own). Idempotent."""
        task, self._task = self._task, None
        if task is not None:
            self._stopping = True
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def release(self) -> None:
        """Stop renewing and release the run for other workers.

        Raises:
            StaleRunError: when the run was claimed by another worker meanwhile.
        """
        await self.close()
        await self._store.release_run(self._lease)
