"""`SessionTurns`: one turn per session at a time across workers, and control messages to it.

Several workers on one database may each receive a message for the same session. The turn
that answers it holds the session's **turn lease**: a parked-run row of the derived session
`<session>\\x1fturn` (run id `turn`), claimed, renewed and released with the run lease rules
of `docs/scale-out.md` (one compare-and-set statement each, fenced by the row's version). So
the turn lease needs no table of its own and gets `wait_for_change`'s wake-ups (PostgreSQL:
the `runs` trigger's `NOTIFY`, heard on the store's one `LISTEN` connection).

* **Holding** (`hold`): claim the row; while another worker's live lease holds it, wait for
  a change (its release) or for the lease to lapse, up to `wait` seconds. A hold taken from
  a lease that lapsed unreleased names its dead holder (`took_over_from`), so the new turn
  can record that the old one was interrupted. The row is created
  the first time a session has a turn: an entry of the derived session, written with
  `put_new`, elects the one creator, so two first turns never both write the row (an
  unfenced write would fence out a holder).
* **Fencing** (`TurnHold.append`, `TurnHold.check`): each transcript append of the turn is
  fenced by a renewal of its lease. A worker that stalled past its lease and lost the session
  to another gets `StaleRunError` there, nothing of it is appended, and it stops, so two
  turns' history never interleaves. A store that can (`FencedAppend`: every backend of
  clawcell) renews and appends in one transaction, one commit per append instead of two; a
  store without it gets the renewal and then the append.
* **Control messages** (`stop`): a JSON Merge Patch on the row's `meta`, fenced by the
  holder's version, so a Stop reaches the turn that was running when it was sent and never
  a later one. The holder watches its row (`wait_for_change`) and sets `stop_requested`.

Derived session ids carry a control character, which session ids may not contain, so no
session id is another one's turn row. Lease times are wall-clock, as for runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol, runtime_checkable

from .._random import random_uuid4_text
from .._session_ids import check_session_id
from ..errors import StaleRunError, StoreUnavailableError
from ._cancellation import cancel_requested
from ._first import FirstWriter
from ._keeper import LeaseKeeper
from ._leases import check_lease_seconds
from ._protocol import SessionStore
from ._records import Lease, StoredValue

__all__ = ["FencedAppend", "SessionTurns", "TurnHold"]

_SUFFIX: Final = "\x1fturn"
_RUN: Final = "turn"
_CREATOR: Final = "creator"
_RETRY: Final = 0.05
"""Seconds between two looks at a row another worker is creating (a few milliseconds' work)."""
_log = logging.getLogger("clawcell.store")


@runtime_checkable
class FencedAppend(Protocol):
    """A store that appends to a transcript in the transaction that renews a lease.

    A capability, not a `SessionStore` method, so stores written before it keep working
    (`TurnHold.append` then renews and appends one after the other)."""

    async def append_transcript_fenced(
        self,
        session_id: str,
        entries: Sequence[Mapping[str, Any]],
        *,
        lease: Lease,
        lease_seconds: float,
    ) -> Lease:
        """`renew_lease(lease)` and `append_transcript(session_id, entries)` as one atomic
        write: the entries are stored only while `lease` still holds.

        Raises:
            StaleRunError: the lease was taken (or released); nothing was appended.
        """
        ...


def _row(session_id: str) -> str:
    return check_session_id(session_id) + _SUFFIX


_STRAYS: set[asyncio.Task[None]] = set()
"""Cancelled watch tasks until they end (the loop holds tasks only weakly)."""


def _forget(task: asyncio.Task[None]) -> None:
    """Drop an ended watch task, logging what it raised (nobody awaits it)."""
    _STRAYS.discard(task)
    if not task.cancelled() and (error := task.exception()) is not None:
        _log.warning("a released turn's watch failed", exc_info=error)


def worker_id() -> str:
    """An owner id unique to this process: `host:pid:uuid4`."""
    return f"{socket.gethostname()}:{os.getpid()}:{random_uuid4_text()}"


class TurnHold:
    """A held turn lease: renewed in the background, fenced writes checked with `check()`.

    Attributes:
        session_id: The session whose turn this is.
        stop_requested: Set when a Stop for this turn was recorded in the store (by any
            worker, `SessionTurns.stop`).
        lost: Set when the lease was lost (another worker claimed the session after this
            one stalled past its lease); the turn must stop writing.
    """

    def __init__(self, store: SessionStore, session_id: str, lease: Lease, seconds: float) -> None:
        self.session_id = session_id
        self.stop_requested = asyncio.Event()
        self._store = store
        self._keeper = LeaseKeeper(store, lease, lease_seconds=seconds)
        self.lost = self._keeper.lost
        self._seconds = seconds
        self._watch: asyncio.Task[None] | None = None
        self._stopping = False
        self.took_over_from: str | None = None
        """The worker whose turn lease lapsed without a release (it died or stalled), when
        this hold took the session over from it: its turn was interrupted."""

    @property
    def version(self) -> int:
        """The fencing version of this hold (raised by every claim of the session)."""
        return self._keeper.lease.version

    async def start(self, revision: int) -> None:
        await self._keeper.__aenter__()
        self._watch = asyncio.create_task(self._watching(revision), name="turn control")

    async def check(self) -> None:
        """Renew the lease now, fenced: succeeds only while this worker still holds it.

        Raises:
            StaleRunError: another worker holds the session's turn now; stop writing.
        """
        lease = self._keeper.lease
        await self._store.renew_lease(lease, lease_seconds=self._seconds)

    async def append(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Append `entries` to this session's transcript while this worker holds its turn:
        the fenced renewal and the append commit together where the store can
        (`FencedAppend`).

        Raises:
            StaleRunError: another worker holds the session's turn now; nothing was appended.
        """
        store, lease = self._store, self._keeper.lease
        if isinstance(store, FencedAppend):
            await store.append_transcript_fenced(
                self.session_id, entries, lease=lease, lease_seconds=self._seconds
            )
            return
        await self.check()
        await store.append_transcript(self.session_id, entries)

    async def _watching(self, revision: int) -> None:
        row, version = self._keeper.lease.session_id, self.version
        while not self.lost.is_set():
            try:
                await self._store.wait_for_change(
                    row, _RUN, timeout=self._seconds / 3, since=revision
                )
                run = await self._store.load_run(row, _RUN)
            except StoreUnavailableError:
                _log.warning("watching the turn of %r failed", self.session_id, exc_info=True)
                if cancel_requested():
                    return
                continue
            if self._stopping or cancel_requested():
                return
            if run is None or run.version != version:
                self.lost.set()
                return
            revision = run.revision
            if run.meta.get("stop") == version:
                self.stop_requested.set()

    async def release(self) -> None:
        """Stop watching and renewing and release the session for the next turn. Idempotent;
        a lease already lost is left to its new holder."""
        watch, self._watch = self._watch, None
        self._stopping = True
        if watch is not None:
            # Cancelled, not awaited: a cancellation swallowed below it (Python 3.11's
            # `asyncio.wait_for` returns a result that lands with the cancel) would keep the
            # turn's end waiting on it; it ends at its next wake-up, seeing `_stopping`.
            watch.cancel()
            _STRAYS.add(watch)
            watch.add_done_callback(_forget)
        await self._keeper.close()
        with contextlib.suppress(StaleRunError):
            await self._store.release_run(self._keeper.lease)


class SessionTurns:
    """The turn leases of one store's sessions, as one worker sees them.

    Args:
        store: The store every worker shares.
        owner: This worker's id, unique per process (`host:pid:uuid4` by default).
        lease_seconds: How long a turn lease lasts unless renewed (renewed every third of
            it); a dead worker's session is free again this long after its last renewal.
    """

    def __init__(
        self, store: SessionStore, *, owner: str | None = None, lease_seconds: float = 30.0
    ) -> None:
        self._store = store
        self.owner = owner or worker_id()
        self._seconds = check_lease_seconds(lease_seconds)

    @property
    def lease_seconds(self) -> float:
        """How long a turn lease lasts unless renewed."""
        return self._seconds

    async def hold(self, session_id: str, *, wait: float) -> TurnHold | None:
        """Take the session's turn lease, waiting up to `wait` seconds for another worker's
        turn to end (or its lease to lapse); `None` when it is still held then.

        The hold is started (renewed, watched); `release()` it when the turn ends.
        """
        row = _row(session_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(wait, 0.0)
        while True:
            if cancel_requested():  # a store call swallowed the caller's cancellation
                raise asyncio.CancelledError
            run = await self._store.load_run(row, _RUN)
            if run is None:
                await self._create(row)
                continue
            if run.claimable(time.time()):
                claimed = await self._store.claim_run(
                    row, _RUN, owner=self.owner, lease_seconds=self._seconds
                )
                if claimed is not None:
                    hold = TurnHold(self._store, session_id, claimed.lease, self._seconds)
                    if claimed.lease.version == run.version + 1:  # nobody claimed in between
                        hold.took_over_from = run.owner  # a holder that never released: dead
                    await hold.start(claimed.run.revision)
                    return hold
                continue
            left = deadline - loop.time()
            if left <= 0:
                return None
            lapse = (run.lease_expires_at or 0.0) - time.time()
            await self._store.wait_for_change(
                row, _RUN, timeout=max(min(left, lapse), _RETRY), since=run.revision
            )

    async def _create(self, row: str) -> None:
        """Create the session's turn row once, whichever worker gets there first."""
        store = self._store
        if not isinstance(store, FirstWriter):  # a single-process store: no race to settle
            await store.save_run(row, _RUN, b"", {})
            return
        if await store.put_new(row, _CREATOR, StoredValue(json=repr(time.time()))):
            await store.save_run(row, _RUN, b"", {})
            return
        created = await store.get(row, _CREATOR)
        if created is not None and float(created.json) + self._seconds < time.time():
            # Its creator died between electing itself and writing the row: elect again.
            await store.delete(row, _CREATOR)
            return
        await asyncio.sleep(_RETRY)

    async def stop(self, session_id: str) -> bool:
        """Ask the session's running turn to stop, wherever it runs; whether one was running.

        The request is recorded on the turn's row, fenced by its holder's version, so it
        never stops a later turn; the holder hears it through `wait_for_change`.
        """
        row = _row(session_id)
        for _ in range(3):  # a claim or release racing the patch: look again
            run = await self._store.load_run(row, _RUN)
            if run is None or not _live(run.owner, run.lease_expires_at):
                return False
            try:
                await self._store.update_run_meta(
                    row, _RUN, version=run.version, patch={"stop": run.version}
                )
            except StaleRunError:
                continue
            return True
        return False

    async def holder(self, session_id: str) -> str | None:
        """The worker holding the session's turn now, or `None` when no turn runs."""
        run = await self._store.load_run(_row(session_id), _RUN)
        if run is None or not _live(run.owner, run.lease_expires_at):
            return None
        return run.owner


def _live(owner: str | None, expires_at: float | None) -> bool:
    return owner is not None and (expires_at or 0.0) > time.time()
