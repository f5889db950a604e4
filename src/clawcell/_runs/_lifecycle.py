"""The run lifecycle: start, park, take, revive, resume, expire, abandon and end a cell.

Each `exec` and each `wait` is one *leg* of a run. A leg ends in one of three ways:

* **completed** or **failed**: the session-store writes are committed (or dropped), the
  envelope is settled, and the guest goes back to the pool;
* **waiting**: the run is parked. Its guest stays live while fewer than `MAX_LIVE_PARKED`
  runs of the process hold one (a `wait` then continues it without any snapshot work);
  otherwise, or when the store is durable, the guest is snapshotted. With a durable store the
  snapshot and the run's record are committed before the envelope is returned, and `wait`
  claims the run with a lease (`_durable.py`), so exactly one worker continues it at a time.

The snapshot limit (`maxSnapshotBytes`) holds for live parks too: a cheap upper bound of the
snapshot's size is checked, and the snapshot is only taken when the bound exceeds the limit.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final

from .._cell import Cell, LegOutcome, failed_outcome
from .._progress import OnUpdate, Progress
from .._random import random_uuid4_text
from .._source import ExecArgs, check_source
from ..approvals import Approvals
from ..envelope import Envelope, FailurePhase, OutputLedger, bound_error, failed_envelope
from ..errors import (
    ClawcellError,
    ClosedError,
    InputError,
    RuntimeUnavailableError,
    SnapshotError,
    StaleRunError,
)
from ..store import SessionView
from ._host import CellHost
from ._parked import (
    MAX_LIVE_PARKED,
    UNAVAILABLE_MESSAGE,
    ParkedRuns,
    Run,
    RunHome,
    live_parked_in_process,
)
from ._replay import ReplayPolicy
from ._settle import leg_envelope

if TYPE_CHECKING:
    from ._durable import DurableRuns

__all__ = ["Lifecycle"]

_RESUMING: Final = "code mode run is already being resumed."
_TOO_MANY: Final = "too many suspended code mode runs."
_SNAPSHOT_LIMIT: Final = "code mode snapshot limit exceeded"


class Lifecycle:
    """Every run of one `CodeMode`, from its first `exec` to its end."""

    def __init__(self, host: CellHost, home: RunHome, approvals: Approvals):
        self._host = host
        self._store = store = home.store
        self._session_id = session_id = home.session_id
        self._parked = ParkedRuns(store=store, session_id=session_id, durable=home.durable)
        self._durable: DurableRuns | None = None
        if home.durable:  # (only then: a process on the in-memory store never loads `_durable`)
            from ._durable import DurableRuns

            ttl = host.limits.snapshot_ttl_seconds
            self._durable = DurableRuns(
                store, session_id, host.results, ttl, keys=lambda: home.keys
            )
        self._policy = ReplayPolicy(host.catalog)
        self._home = home
        self.closed = False
        self.approvals = approvals

    # -- legs -----------------------------------------------------------------------------

    async def exec(self, args: ExecArgs, on_update: OnUpdate | None) -> Envelope:
        """An `exec` call: its arguments and source checked, then the first leg of a new cell.

        Raises:
            InputError: `code` is missing or blank (the call itself is rejected).
            ClosedError: the `CodeMode` is closed.
        """
        self.check_open()
        if (refused := args.problem()) is not None:
            return self.failure("invalid_input", "input", refused)
        if (problem := check_source(args.code)) is not None:
            return self.failure("invalid_input", "input", problem.message)
        return await self.start(args.code, restart_safe=args.restart_safe, on_update=on_update)

    async def start(self, code: str, *, restart_safe: bool, on_update: OnUpdate | None) -> Envelope:
        """The first leg of a new cell."""
        self.expire()
        if self._durable is not None:
            await self._durable.before_leg()
        host = self._host
        if host.mcp is not None:
            await host.prepare()
        try:
            guest = host.acquire()
        except RuntimeUnavailableError as exc:
            return self.failure("runtime_unavailable", "host", exc.message)
        session = SessionView(self._store, self._session_id)
        guard = self._policy.restart_guard if restart_safe else None
        run_id = "cm_" + random_uuid4_text()
        gate = self.approvals.run(run_id, restart_safe=restart_safe)
        bridge = host.bridge(session, gate)
        cell = Cell(guest=guest, bridge=bridge, guard=guard, runner=host.runner)
        run = Run(
            run_id=run_id,
            cell=cell,
            ledger=OutputLedger(host.limits.max_output_bytes),
            session=session,
            restart_safe=restart_safe,
            in_leg=True,
        )
        _observe(run, on_update)
        gate.active = True
        try:
            outcome = await cell.start(code, host.limits.timeout_ms / 1000)
        except RuntimeUnavailableError as exc:  # the guest could not be reset: it is retired
            self._drop(run)
            return self.failure("runtime_unavailable", "host", exc.message)
        except BaseException:  # cancelled, or a signal's exception a host function took
            self._drop(run)
            raise
        if not outcome.ran:  # the code did not parse
            host.release(guest)
            self.approvals.forget(run_id)
            return self.failure(outcome.code, outcome.phase, outcome.error)
        try:
            return await self._settle(run, outcome)
        finally:
            self._leg_over(run)

    async def wait(self, run_id: str, on_update: OnUpdate | None) -> Envelope:
        """A `wait` leg: claim the parked run (from the store when durable) and continue it.

        Raises:
            InputError: the run is unknown, expired, or held by another worker's leg.
            SnapshotError: the durable copy of the run is damaged.
        """
        self.check_open()
        self.expire()
        if self._host.mcp is not None:  # a cell parked by another process may call them
            await self._host.prepare()
        run = self._parked.get(run_id)
        if run is not None and run.in_leg:  # resumed, or settling its last leg
            return self.failure("invalid_input", "input", _RESUMING)
        durable = self._durable
        if durable is None:
            if run is None or run.expires_at <= time.time():
                raise InputError(UNAVAILABLE_MESSAGE)
            run.in_leg = True
            try:
                return await self._resume(run, on_update)
            finally:
                self._leg_over(run)
        budget_s = self._host.limits.timeout_ms / 1000
        started = time.monotonic()
        legs = [run] if run is not None else []
        try:
            run = await self._claim(durable, run_id, run, budget_s)
            legs.append(run)
            assert run.keeper is not None
            async with run.keeper:
                left = max(budget_s - (time.monotonic() - started), 0.0)
                return await self._resume(run, on_update, budget_s=left)
        finally:
            for owned in legs:
                self._leg_over(owned)

    async def _claim(
        self, durable: DurableRuns, run_id: str, run: Run | None, budget_s: float
    ) -> Run:
        """Claim a durable run: this worker's copy when still current, else the stored one."""
        await durable.maybe_sweep()
        if run is not None:
            # Claimed before the store is asked: a racing wait sees it, close leaves it alone.
            run.resuming = run.in_leg = True
        try:
            claimed = await durable.claim(run_id, budget_s=budget_s)
        finally:
            if run is not None:
                run.resuming = False
        if run is not None and (claimed is None or not durable.continues(run, claimed)):
            self._drop(run)  # another worker continued it
            run = None
        if claimed is None:
            raise InputError(UNAVAILABLE_MESSAGE)
        if run is None:
            from ._revive import Reviver  # deferred: only a run from the store needs it

            reviver = Reviver(self._host, self._home, self.approvals, self._policy)
            run = await reviver.claimed(durable, run_id, claimed)
        run.version, run.keeper = claimed.lease.version, durable.keeper(claimed)
        return run

    async def _resume(
        self, run: Run, on_update: OnUpdate | None, *, budget_s: float | None = None
    ) -> Envelope:
        run.resuming = True
        _observe(run, on_update)
        gate = self.approvals.run(run.run_id, restart_safe=run.restart_safe)
        gate.active = True
        try:
            if run.snapshot is not None:
                guest = self._host.acquire()
                snapshot, run.snapshot = run.snapshot, None
                run.cell.move_to(guest)  # first: a restore that fails hands it back with the cell
                run.holds_guest = True
                guest.restore(snapshot)
            if not gate.idle:
                await gate.deliver()
            budget = self._host.limits.timeout_ms / 1000 if budget_s is None else budget_s
            outcome = await run.cell.resume(budget)
        except (SnapshotError, RuntimeUnavailableError) as exc:  # no guest continues it
            from ._revive import ended  # deferred: off every leg's path

            self._drop(run)
            raise ended(run.run_id, exc) from exc
        except BaseException:  # cancelled, a signal's
            self._drop(run)
            raise
        finally:
            run.resuming = False
        return await self._settle(run, outcome)

    # -- the end of a leg -----------------------------------------------------------------

    async def _settle(self, run: Run, outcome: LegOutcome) -> Envelope:
        """Commit or park the leg's cell and build its envelope. An exception or a cancel
        here (a store write, a durable commit, an envelope that does not fit) ends the cell
        and hands its guest back, once, whatever this step had done already."""
        try:
            return await self._settle_leg(run, outcome)
        except BaseException:
            self._drop(run)
            raise

    async def _settle_leg(self, run: Run, outcome: LegOutcome) -> Envelope:
        run.cell.report_to(None)
        gate = self.approvals.live(run.run_id)
        if gate is not None:
            gate.active = False
        durable = self._durable
        if durable is not None and not await durable.still_held(run):
            return self._stale(run)
        snapshot: bytes | None = None
        if outcome.status == "waiting":
            outcome, snapshot = self._suspend(run, outcome)
        warning = None
        if outcome.status == "completed" and run.session.has_writes:
            warning = await run.session.commit()
        elif outcome.status != "waiting":  # failed, or completed without writes: close it
            run.session.discard()
        for item in run.cell.take_output():
            run.ledger.append(item)
        try:
            envelope = leg_envelope(run, outcome, self._host, self._policy)
        except ClawcellError:
            # Not even the status fits the model's context: the call fails, the cell ends.
            if durable is not None:
                await durable.finish(run)
            self._finish(run, outcome)
            raise
        if warning is not None:
            envelope["warnings"] = [warning]
        if run.cell.network_derived:
            from ..envelope import mark_untrusted  # (a lazy export: only such a run loads it)

            envelope = mark_untrusted(envelope)
        if outcome.status != "waiting":
            if durable is not None:
                await durable.finish(run)
            self._finish(run, outcome)
            return envelope
        if durable is not None and snapshot is not None:
            try:
                await durable.park(run, snapshot)
            except StaleRunError:
                return self._stale(run)
        self._parked.keep(run)
        return envelope

    def _stale(self, run: Run) -> Envelope:
        """Another worker claimed the run while this leg ran: drop this copy, commit nothing."""
        run.keeper = None
        self._drop(run)
        from ._durable import stale_message  # (only a durable run is ever stale)

        return self.failure("stale_run", "host", stale_message(run.run_id))

    def _suspend(self, run: Run, outcome: LegOutcome) -> tuple[LegOutcome, bytes | None]:
        """Park a cell: keep its guest live or snapshot it; fail it when it cannot park."""
        if not self._parked.has_room_for(run.run_id):
            run.cell.cancel()
            return failed_outcome("invalid_input", "input", _TOO_MANY), None
        limit = self._host.limits.max_snapshot_bytes
        guest = run.cell.guest
        live = live_parked_in_process() < MAX_LIVE_PARKED
        snapshot = None
        if self._parked.durable or not live or guest.snapshot_bound() > limit:
            snapshot = guest.snapshot()
            if len(snapshot) > limit:
                run.cell.cancel()
                phase: FailurePhase = "bridge" if run.cell.bridge_dispatch_started else "guest"
                failed = failed_outcome("snapshot_limit_exceeded", phase, _SNAPSHOT_LIMIT)
                return failed, None
        if not live and guest.snapshots:  # a V8 cell lives only in its worker: kept live
            self._release_live(run)
            run.snapshot = snapshot
        run.expires_at = time.time() + self._host.limits.snapshot_ttl_seconds
        gate = self.approvals.live(run.run_id)
        if gate is not None:
            gate.expires_at = run.expires_at
        return outcome, snapshot

    def _finish(self, run: Run, outcome: LegOutcome) -> None:
        """The cell is over: forget it, and end its host work and guest (or hand it back)."""
        self._parked.forget(run.run_id)
        self.approvals.forget(run.run_id)
        if outcome.status == "waiting":
            run.cell.cancel()
            run.session.discard()
        self._release_live(run)

    # -- runs that end without a leg --------------------------------------------------------

    def failure(self, code: str, phase: FailurePhase, message: str) -> Envelope:
        """A failed envelope for a call that never reached a cell (bounded error)."""
        error = bound_error(message, self._host.limits.max_output_bytes)
        return failed_envelope(
            code=code, phase=phase, error=error, telemetry=self._host.telemetry()
        )

    def expire(self) -> None:
        """Drop parked runs idle beyond their TTL."""
        for run in self._parked.expired():
            self._drop(run)

    def check_open(self) -> None:
        """Raise `ClosedError` once `close` was called."""
        if self.closed:
            raise ClosedError("this CodeMode is closed; create a new one")

    def close(self) -> None:
        """End the parked cells: cancel their host work and hand their live guests back.
        A run whose leg is in flight is its leg's to end (`_leg_over`). Runs committed to a
        durable store stay there."""
        self.closed = True
        if self._durable is not None:
            self._durable.close()
        for run in self._parked.all():
            if not run.in_leg:
                self._drop(run)

    def _drop(self, run: Run) -> None:
        """End the cell (expired, another worker's, or its leg ended by an exception: the
        caller cancelled it, a signal, a guest that could not be restored): cancel its host
        work and hand its guest back. A guest stopped while its segment ran on a guest thread
        (`ExecutorGuest.stop`) may still be finishing there: its executor drops it untouched.
        """
        self._parked.forget(run.run_id)
        self.approvals.forget(run.run_id)
        run.cell.cancel()
        run.session.discard()
        self._release_live(run)

    def _leg_over(self, run: Run) -> None:
        """A leg of `run` ended (by an envelope or an exception). After `close`, a run it
        parked is ended here: `close` left it to this leg."""
        run.in_leg = False
        if self.closed and self._parked.get(run.run_id) is run:
            self._drop(run)

    def _release_live(self, run: Run) -> None:
        """Hand the run's guest back, once per acquisition (a parked snapshot holds none)."""
        if run.holds_guest:
            run.holds_guest = False
            self._host.release(run.cell.guest)


def _observe(run: Run, on_update: OnUpdate | None) -> None:
    run.cell.report_to(None if on_update is None else Progress(run.run_id, on_update))
