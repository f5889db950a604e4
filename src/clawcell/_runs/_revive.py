"""Runs made live again from a durable store, and what a `wait` says when none can be.

A run another process (or this one, before a restart) committed to the store is revived in
a guest acquired for it: its snapshot restored, its host side (`ParkedRecord`) rebuilt into a
cell, a session view with its buffered writes and its approvals gate. A run whose snapshot
cannot be restored, or for which no guest can be had, is discarded from the store, and its
`wait` raises (docs/continuations.md) with `ended`'s message. Imported when first needed:
a first cell, and every leg that ends well, never loads it.
"""

from __future__ import annotations

import dataclasses
import time

from .._cell import Cell
from ..approvals import Approvals
from ..errors import ClawcellError, InputError, RuntimeUnavailableError, SnapshotError
from ..store import ClaimedRun, SessionView
from ._durable import DurableRuns
from ._host import CellHost
from ._parked import UNAVAILABLE_MESSAGE, ParkedRecord, Run, RunHome
from ._replay import ReplayPolicy

__all__ = ["Reviver", "ended"]


class Reviver:
    """Revives the committed runs of one `CodeMode`'s session."""

    def __init__(
        self, host: CellHost, home: RunHome, approvals: Approvals, policy: ReplayPolicy
    ) -> None:
        self._host = host
        self._home = home
        self._approvals = approvals
        self._policy = policy

    async def claimed(self, durable: DurableRuns, run_id: str, claimed: ClaimedRun) -> Run:
        """The run `claimed` from the store, live in a guest; a run none can continue is
        discarded from the store first.

        Raises:
            InputError: the run expired in the store.
            SnapshotError: its record or snapshot is forged or damaged (`ended`'s message).
            RuntimeUnavailableError: no guest could be had for it (`ended`'s message).
        """
        try:
            return self.revive(run_id, claimed.run.blob, durable.record(claimed))
        except SnapshotError as exc:
            await durable.discard(run_id, reason=exc.message)  # forged or damaged
            raise ended(run_id, exc) from exc
        except RuntimeUnavailableError as exc:
            await durable.discard(run_id)  # its snapshot needs a guest none could be had for
            raise ended(run_id, exc) from exc
        except BaseException:
            await durable.discard(run_id)  # expired: nobody can continue it
            raise

    def revive(self, run_id: str, blob: bytes, record: ParkedRecord) -> Run:
        """A run another process (or this one, before a restart) committed to the store, its
        leg begun (`Run.in_leg`)."""
        if record.expires_at <= time.time():
            raise InputError(UNAVAILABLE_MESSAGE)  # expired in the store: revive nothing
        host = self._host
        guest = host.acquire()
        try:
            guest.restore(blob)
        except BaseException:
            host.release(guest)
            raise
        home = self._home
        session = SessionView(home.store, home.session_id, writes=record.writes)
        gate = self._approvals.run(run_id, restart_safe=record.restart_safe)
        gate.restored = {
            a.request_id: dataclasses.replace(a, run_id=run_id) for a in record.approvals
        }
        cell = Cell.revive(
            record.cell,
            guest=guest,
            bridge=host.bridge(session, gate),
            replay_safe=self._policy.replay_safe,
            runner=host.runner,
            gated=frozenset(gate.restored),
            guard=self._policy.restart_guard if record.restart_safe else None,
        )
        return Run(
            run_id=run_id,
            cell=cell,
            ledger=record.ledger,
            session=session,
            restart_safe=record.restart_safe,
            expires_at=record.expires_at,
            in_leg=True,
        )


def ended(run_id: str, exc: ClawcellError) -> ClawcellError:
    """The error a `wait` raises when no guest can continue its run (docs/continuations.md:
    it raises, where `exec` answers with an envelope), of `exc`'s type: what failed, then
    that the run is over and what to do, so a caller that shows only the message can act."""
    over = (
        f"code mode run {run_id} cannot be continued and was ended: run its cell again with exec."
    )
    return type(exc)(f"{exc.message.rstrip('.')}; {over}")
