"""Leases on durable parked runs: claim, keep, fence, write back, finish, sweep.

With a durable store several workers (processes, hosts) may share one database, and any of
them may get the `wait` of any run. The rules (see `docs/scale-out.md`):

* a park is committed before `waiting` is returned: a new run with an unfenced `save_run`
  (parked unowned, version *v*), a run continued under a lease with
  `save_run(expected_version=)` followed by `release_run`;
* a `wait` **claims** the run (`claim_run`, version +1) and keeps the lease with a
  `LeaseKeeper` while its leg runs. A worker that still holds the run in memory continues
  its own copy only when the claim's version is the next one after its own park; otherwise
  another worker continued the run meanwhile and the copy is dropped;
* host calls that settle while the run is parked are written back at once
  (`update_run_meta`, fenced by the park's version, as `meta.settled[requestId]`), so a
  worker that revives the run delivers them instead of replaying them;
* a leg whose lease was lost (its holder stalled past it and another worker claimed the run)
  is refused at its next fenced write, before anything is committed;
* a finished run is deleted; `sweep` removes expired runs, at most once a minute per
  `CodeMode`.

Threat model: none beyond the store's. Clocks: leases use each worker's wall clock.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from typing import Any, Final

from ._bridge import Reply
from ._runs import ParkedRecord, Run
from .errors import StaleRunError, StoreUnavailableError
from .store import ClaimedRun, LeaseKeeper, SessionStore

__all__ = ["LEASE_SECONDS", "SWEEP_EVERY_S", "DurableRuns", "stale_message"]

LEASE_SECONDS: Final = 30.0
"""How long a `wait` leg's lease lasts unless renewed (renewed every third of it)."""
SWEEP_EVERY_S: Final = 60.0

_log = logging.getLogger("clawcell.runs")


def stale_message(run_id: str) -> str:
    """The error of a leg whose run another worker claimed while it ran."""
    return (
        f"code mode run {run_id!r} was claimed by another worker while this leg ran (its "
        "lease lapsed); this leg's result was discarded and nothing was committed. Call "
        "`wait` again for the run's current state."
    )


class DurableRuns:
    """The durable side of one `CodeMode`'s parked runs on a (possibly shared) store."""

    def __init__(
        self,
        store: SessionStore,
        session_id: str,
        *,
        lease_seconds: float = LEASE_SECONDS,
        sweep_every: float = SWEEP_EVERY_S,
    ) -> None:
        self._store = store
        self._session_id = session_id
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4()}"
        self._lease_seconds = lease_seconds
        self._sweep_every = sweep_every
        self._last_sweep: float | None = None
        self._writes: set[asyncio.Task[None]] = set()

    # -- parking ----------------------------------------------------------------------------

    async def park(self, run: Run, snapshot: bytes) -> None:
        """Commit a parked run, then write back the calls that settled meanwhile.

        Raises:
            StaleRunError: the run is continued under a lease that another worker took over.
        """
        state = run.record().to_state()
        keeper, sid = run.keeper, self._session_id
        if keeper is None:
            run.version = await self._store.save_run(sid, run.run_id, snapshot, state)
        else:
            version = keeper.lease.version
            await self._store.save_run(sid, run.run_id, snapshot, state, expected_version=version)
            run.keeper = None
            run.version = version
            await keeper.release()
        saved = {entry["id"] for entry in state["cell"]["pending"] if "reply" in entry}
        for entry in run.cell.host_state()["pending"]:
            if "reply" in entry and entry["id"] not in saved:
                self._write_back(run, entry["id"], entry["reply"])
        run.cell.on_settled = lambda request_id, reply: self._settled(run, request_id, reply)

    def _settled(self, run: Run, request_id: str, reply: Reply) -> None:
        self._write_back(run, request_id, {"ok": reply.ok, "payload": reply.payload})

    def _write_back(self, run: Run, request_id: str, reply: dict[str, Any]) -> None:
        version = run.version
        if version is None or run.resuming or run.keeper is not None:
            return  # a leg is running: it parks or ends with the reply itself
        patch = {"settled": {request_id: reply}}
        task = asyncio.ensure_future(self._patch(run, version, patch))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _patch(self, run: Run, version: int, patch: dict[str, Any]) -> None:
        try:
            await self._store.update_run_meta(
                self._session_id, run.run_id, version=version, patch=patch
            )
        except StaleRunError:
            if run.version == version and not run.resuming:
                run.cell.cancel()  # another worker continued the run: these calls are its now
        except StoreUnavailableError:
            _log.warning("writing back a result of %r failed", run.run_id, exc_info=True)

    # -- claiming ---------------------------------------------------------------------------

    async def claim(self, run_id: str) -> ClaimedRun | None:
        """Claim a parked run for a `wait` leg (`None`: unknown, expired or held elsewhere)."""
        return await self._store.claim_run(
            self._session_id, run_id, owner=self.owner, lease_seconds=self._lease_seconds
        )

    def keeper(self, claimed: ClaimedRun) -> LeaseKeeper:
        """A keeper of `claimed`'s lease for the length of a leg."""
        return LeaseKeeper(self._store, claimed.lease, lease_seconds=self._lease_seconds)

    @staticmethod
    def continues(run: Run, claimed: ClaimedRun) -> bool:
        """Whether `run`, this worker's copy, is still the latest: nobody claimed it since."""
        return run.version is not None and claimed.run.version == run.version + 1

    @staticmethod
    def record(claimed: ClaimedRun) -> ParkedRecord:
        """The claimed run's record (with the replies written back after its park)."""
        return ParkedRecord.from_state(claimed.run.meta)

    async def still_held(self, run: Run) -> bool:
        """Before a leg commits: renew its lease, fenced; `False` when another worker has it."""
        keeper = run.keeper
        if keeper is None:
            return True
        if keeper.lost.is_set():
            return False
        try:
            await self._store.renew_lease(keeper.lease, lease_seconds=self._lease_seconds)
        except StaleRunError:
            return False
        return True

    async def finish(self, run: Run) -> None:
        """The run ended: stop its lease and delete it from the store."""
        keeper, run.keeper = run.keeper, None
        if keeper is not None:
            await keeper.close()
        if run.version is not None or keeper is not None:
            await self._store.delete_run(self._session_id, run.run_id)
        run.version = None

    async def discard(self, run_id: str) -> None:
        """Delete a claimed run that cannot be revived (damaged or expired)."""
        await self._store.delete_run(self._session_id, run_id)

    # -- housekeeping -----------------------------------------------------------------------

    async def maybe_sweep(self) -> None:
        """Sweep expired runs and results at most once per `sweep_every` seconds."""
        now = time.monotonic()
        if self._last_sweep is not None and now - self._last_sweep < self._sweep_every:
            return
        self._last_sweep = now
        try:
            await self._store.sweep()
        except StoreUnavailableError:
            _log.warning("sweeping expired runs failed", exc_info=True)

    def close(self) -> None:
        """Cancel write-backs still in flight (their runs stay as last committed)."""
        for task in self._writes:
            task.cancel()
