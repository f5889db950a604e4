"""Leases on durable parked runs: claim, keep, fence, write back, finish, sweep.

With a durable store several workers (processes, hosts) may share one database, and any of
them may get the `wait` of any run. The rules (see `docs/scale-out.md`):

* a park is committed before `waiting` is returned: a new run with an unfenced `save_run`
  (parked unowned, version *v*), a run continued under a lease with
  `save_run(expected_version=)` followed by `release_run`;
* a `wait` **claims** the run (`claim_run`, version +1) and keeps the lease with a
  `LeaseKeeper` while its leg runs. While another worker's leg holds it, the `wait` waits for
  the run to change (`wait_for_change`) or the lease to lapse, within half its budget. A worker
  that still holds the run in memory continues its own copy only when the claim's version is
  the next one after its own park; otherwise another worker continued the run meanwhile and
  the copy is dropped;
* host calls that settle while the run is parked are written back at once
  (`update_run_meta`, fenced by the park's version, as `meta.settled[requestId]`), so a
  worker that revives the run delivers them instead of replaying them;
* a leg whose lease was lost (its holder stalled past it and another worker claimed the run)
  is refused at its next fenced write, before anything is committed;
* a finished run is deleted; `sweep` removes expired runs, at most once a minute per
  `CodeMode`;
* saved results (`results.save`) are shared through the store (`SharedResults`): before each
  leg this worker pushes what its cells saved or deleted and pulls what other workers did,
  and after each leg (park or end) it pushes again, so a later `exec` of the same reply on
  another worker can `results.load` them.

Every record this writes is sealed with the session's state keys (`_sealed.py`): a run
whose seal fails, or whose row is damaged, makes its `wait` raise `SnapshotError` once; the
run is deleted and the event logged on the `clawcell.audit` logger. A shared saved result
whose seal fails is ignored, deleted and logged.

Threat model: a writer of the database who does not hold the state key can delete runs and
roll one back to an earlier genuine state, nothing more. Clocks: leases use each worker's
wall clock.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

from .._cell import Reply
from .._jsjson import utf8_len
from .._random import random_uuid4_text
from ..envelope import ResultsStore, SavedResult
from ..errors import SnapshotError, StaleRunError, StoreUnavailableError
from ..store import ClaimedRun, LeaseKeeper, SessionStore, StateKeys
from ._parked import ParkedRecord, Run
from ._sealed import (
    KeySource,
    open_record,
    open_result,
    resolve_keys,
    seal_record,
    seal_reply,
    seal_result,
)

__all__ = ["LEASE_SECONDS", "SWEEP_EVERY_S", "DurableRuns", "SharedResults", "stale_message"]

LEASE_SECONDS: float = 30.0  # not Final: multi-process tests may shorten it
"""How long a `wait` leg's lease lasts unless renewed (renewed every third of it)."""
SWEEP_EVERY_S: Final = 60.0
_LAPSE_GRACE_S: Final = 0.01
_CLAIM_SHARE: Final = 0.5
"""The share of a `wait`'s budget it may spend waiting for another worker's leg."""

_log = logging.getLogger("clawcell.runs")
_audit = logging.getLogger("clawcell.audit")


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
        results: ResultsStore | None = None,
        results_ttl_seconds: float = 900.0,
        *,
        keys: KeySource = None,
        lease_seconds: float | None = None,
        sweep_every: float = SWEEP_EVERY_S,
    ) -> None:
        self._store = store
        self._session_id = session_id
        self._key_source: KeySource = keys
        self._results = (
            None
            if results is None
            else SharedResults(
                store, session_id, results, ttl_seconds=results_ttl_seconds, keys=keys
            )
        )
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{random_uuid4_text()}"
        self._lease_seconds = LEASE_SECONDS if lease_seconds is None else lease_seconds
        self._sweep_every = sweep_every
        self._last_sweep: float | None = None
        self._writes: set[asyncio.Task[None]] = set()

    @functools.cached_property
    def _keys(self) -> StateKeys:
        return resolve_keys(self._key_source, self._store)

    # -- parking ----------------------------------------------------------------------------

    async def park(self, run: Run, snapshot: bytes) -> None:
        """Commit a parked run, then write back the calls that settled meanwhile.

        Raises:
            StaleRunError: the run is continued under a lease that another worker took over.
        """
        await self._push_results()
        keeper, sid = run.keeper, self._session_id
        state = seal_record(self._keys, sid, run.run_id, run.record().to_state(), snapshot)
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
        run.cell.on_settled_outside_leg(lambda rid, reply: self._settled(run, rid, reply))

    def _settled(self, run: Run, request_id: str, reply: Reply) -> None:
        self._write_back(run, request_id, {"ok": reply.ok, "payload": reply.payload})

    def _write_back(self, run: Run, request_id: str, reply: dict[str, Any]) -> None:
        version = run.version
        if version is None or run.resuming or run.keeper is not None:
            return  # a leg is running: it parks or ends with the reply itself
        sealed = seal_reply(self._keys, self._session_id, run.run_id, request_id, reply)
        patch = {"settled": {request_id: sealed}}
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
        except (StoreUnavailableError, SnapshotError):
            _log.warning("writing back a result of %r failed", run.run_id, exc_info=True)

    # -- claiming ---------------------------------------------------------------------------

    async def claim(self, run_id: str, *, budget_s: float) -> ClaimedRun | None:
        """Claim a parked run for a `wait` leg of `budget_s`, waiting up to half of it while
        another worker's leg holds the run (`None`: unknown, expired, or still held then).

        The other half is the leg's: a claim won as the budget runs out would leave the guest
        no time to run, and the leg would fail with `timeout` instead of answering.
        """
        deadline = time.monotonic() + budget_s * _CLAIM_SHARE
        sid = self._session_id
        if self._results is not None:
            await self._results.sync()  # the leg may load what other workers saved
        while True:
            try:
                claimed = await self._store.claim_run(
                    sid, run_id, owner=self.owner, lease_seconds=self._lease_seconds
                )
                parked = None if claimed is not None else await self._store.load_run(sid, run_id)
            except SnapshotError as exc:
                await self.discard(run_id, reason=exc.message)
                raise
            if claimed is not None:
                return claimed
            now = time.time()
            if parked is None or parked.claimable(now):
                return None  # gone, or expired (an unheld run only refuses a claim then)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            lapse = (parked.lease_expires_at or now) - now
            timeout = min(remaining, max(lapse, 0.0) + _LAPSE_GRACE_S)
            await self._store.wait_for_change(sid, run_id, timeout=timeout, since=parked.revision)

    def keeper(self, claimed: ClaimedRun) -> LeaseKeeper:
        """A keeper of `claimed`'s lease for the length of a leg."""
        return LeaseKeeper(self._store, claimed.lease, lease_seconds=self._lease_seconds)

    @staticmethod
    def continues(run: Run, claimed: ClaimedRun) -> bool:
        """Whether `run`, this worker's copy, is still the latest: nobody claimed it since."""
        return run.version is not None and claimed.run.version == run.version + 1

    def record(self, claimed: ClaimedRun) -> ParkedRecord:
        """The claimed run's record (with the replies written back after its park), once
        its seals hold; nothing of the snapshot has been read yet.

        Raises:
            SnapshotError: a failing seal or a damaged record.
        """
        return ParkedRecord.from_state(open_record(self._keys, self._session_id, claimed.run))

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
        """The run ended: share its saved results, stop its lease, delete it from the store."""
        await self._push_results()
        keeper, run.keeper = run.keeper, None
        if keeper is not None:
            await keeper.close()
        if run.version is not None or keeper is not None:
            await self._store.delete_run(self._session_id, run.run_id)
        run.version = None

    async def discard(self, run_id: str, *, reason: str | None = None) -> None:
        """Delete a claimed run that cannot be revived (damaged, forged or expired); a
        `reason` is logged on the `clawcell.audit` logger."""
        if reason is not None:
            _audit.warning(
                "discarded parked run %r of session %r: %s", run_id, self._session_id, reason
            )
        await self._store.delete_run(self._session_id, run_id)

    # -- housekeeping -----------------------------------------------------------------------

    async def before_leg(self) -> None:
        """Before a leg: take in the results other workers saved; sweep now and then."""
        if self._results is not None:
            await self._results.sync()
        await self.maybe_sweep()

    async def _push_results(self) -> None:
        if self._results is not None:
            await self._results.push()

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


class SharedResults:
    """A `CodeMode`'s saved results, shared with the other workers of its session.

    The `ResultsStore` stays the one the bridge uses (its 64-entry limit and byte allowance
    still hold per worker); this keeps it in step with the store's saved results of the
    session (scope: the session id) at leg boundaries. `push` writes the entries saved here
    since the last push and deletes those deleted here; `sync` pushes, then takes in the
    entries other workers saved (when they fit) and drops those deleted or expired in the
    store. A stored entry is `{"json": text, "networkContent": flag}` and expires
    `ttl_seconds` after it was saved. Store outages are logged; the next leg retries.
    """

    def __init__(
        self,
        store: SessionStore,
        scope: str,
        results: ResultsStore,
        *,
        ttl_seconds: float,
        keys: KeySource = None,
    ) -> None:
        self._store = store
        self._key_source: KeySource = keys
        self._scope = scope
        self._results = results
        self._ttl = ttl_seconds
        self._shared: set[str] = set()
        self._lock = asyncio.Lock()

    @functools.cached_property
    def _keys(self) -> StateKeys:
        return resolve_keys(self._key_source, self._store)

    async def push(self) -> None:
        """Write this worker's saves and deletions to the store."""
        async with self._lock:
            await self._guarded(self._push)

    async def sync(self) -> None:
        """Push, then take in what other workers saved or deleted."""
        async with self._lock:
            await self._guarded(self._push)
            await self._guarded(self._pull)

    async def _guarded(self, action: Callable[[], Awaitable[None]]) -> None:
        if self._results.closed:
            return  # a closed store reads as empty: that is not a deletion
        try:
            await action()
        except StoreUnavailableError:
            _log.warning("sharing saved results of %r failed", self._scope, exc_info=True)

    async def _push(self) -> None:
        local = self._results.entries()
        for result_id in sorted(self._shared - local.keys()):
            await self._store.delete_result(self._scope, result_id)
            self._shared.discard(result_id)
        for result_id, entry in local.items():
            if result_id not in self._shared:
                network = entry.network_content
                text = seal_result(self._keys, self._scope, result_id, entry.json, network)
                expires_at = time.time() + self._ttl
                await self._store.put_result(self._scope, result_id, text, expires_at=expires_at)
                self._shared.add(result_id)

    async def _pull(self) -> None:
        stored = set(await self._store.list_results(self._scope))
        for result_id in self._shared - stored:  # deleted by another worker, or expired
            self._results.discard(result_id)
            self._shared.discard(result_id)
        local = self._results.entries()
        for result_id in sorted(stored - local.keys()):
            entry = await self._entry(result_id)
            if entry is not None and self._results.restore(result_id, entry):
                self._shared.add(result_id)

    async def _entry(self, result_id: str) -> SavedResult | None:
        """A stored result whose seal holds; one that fails is deleted and logged."""
        text = await self._store.get_result(self._scope, result_id)
        if text is None:
            return None
        opened = open_result(self._keys, self._scope, result_id, text)
        if opened is None:
            _audit.warning(
                "discarded saved result %r of %r: it fails its state-key check",
                result_id,
                self._scope,
            )
            await self._store.delete_result(self._scope, result_id)
            return None
        saved, network = opened
        return SavedResult(json=saved, bytes=utf8_len(saved), network_content=network)
