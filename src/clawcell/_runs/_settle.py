"""A leg's outcome settled into the envelope of spec §2.3.

The output ledger and the value go through the envelope package's one settle step (model
budget, retention, results store); what the run knows (its id, replay safety, pending
approvals, whether the bridge dispatched anything) fills in the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._cell import LegOutcome
from ..envelope import (
    Envelope,
    Projection,
    completed_envelope,
    failed_envelope,
    settle_envelope,
    waiting_envelope,
)

if TYPE_CHECKING:
    from ._host import CellHost
    from ._parked import Run
    from ._replay import ReplayPolicy

__all__ = ["leg_envelope"]


def leg_envelope(run: Run, outcome: LegOutcome, host: CellHost, policy: ReplayPolicy) -> Envelope:
    """The envelope of a leg that ended with `outcome` (output ledger, budgets, retention)."""
    telemetry = host.telemetry()
    if outcome.status == "completed" and not run.restart_safe and host.model_budget is None:
        # Most legs: the value and the output fit whole (see `OutputLedger.deliver_whole`).
        whole = run.ledger.deliver_whole(outcome.value_json or "null")
        if whole is not None:
            return completed_envelope(whole, replay_safe=False, telemetry=telemetry)
    gate = run.cell.approvals
    waiting = outcome.status == "waiting"  # only a waiting envelope lists pending approvals
    approvals = [a.to_json() for a in gate.pending] if waiting and gate is not None else []
    # A cell on an executor without snapshots (V8) cannot survive a restart at all; only a
    # restart-safe cell's pending requests are asked whether they may replay.
    replay_safe = (
        run.restart_safe
        and run.cell.guest.snapshots
        and policy.reports_replay_safe(True, run.cell.pending_requests())
    )

    def build(p: Projection) -> Envelope:
        if outcome.status == "completed":
            return completed_envelope(p, replay_safe=replay_safe, telemetry=telemetry)
        if outcome.status == "waiting":
            return waiting_envelope(
                p,
                run_id=run.run_id,
                reason=outcome.reason,
                pending=outcome.pending,
                replay_safe=replay_safe,
                telemetry=telemetry,
                approvals=approvals,
            )
        return failed_envelope(
            code=outcome.code,
            phase=outcome.phase,
            error=p.error or "",
            telemetry=telemetry,
            output=p.output,
            bridge_dispatch_started=run.cell.bridge_dispatch_started,
            replay_safe=replay_safe,
        )

    return settle_envelope(
        build,
        ledger=run.ledger,
        value_json=(outcome.value_json or "null") if outcome.status == "completed" else None,
        error=outcome.error if outcome.status == "failed" else None,
        model_budget=host.model_budget,
        results=host.results,
        retention="restart_safe" if run.restart_safe else "interactive",
        network_content=run.cell.network_derived,
    )
