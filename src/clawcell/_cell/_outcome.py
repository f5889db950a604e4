"""How a leg ended (`LegOutcome`) and the envelope it settles into.

A leg's outcome is the cell's answer in host terms: completed with a value, waiting with its
pending requests, or failed with a failure code, phase and message. `leg_envelope` turns it
into the envelope of spec §2.3: the output ledger and the value go through the envelope
package's one settle step (model budget, retention, results store).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..envelope import (
    Envelope,
    FailurePhase,
    Projection,
    completed_envelope,
    failed_envelope,
    settle_envelope,
    waiting_envelope,
)
from ._failures import FailureCode

if TYPE_CHECKING:
    from .._runs._host import CellHost
    from .._runs._parked import Run
    from .._runs._replay import ReplayPolicy

__all__ = ["LegOutcome", "failed_outcome", "leg_envelope"]


@dataclass(frozen=True, kw_only=True)
class LegOutcome:
    """How one `exec` or `wait` leg ended."""

    status: Literal["completed", "waiting", "failed"]
    value_json: str | None = None
    reason: str = ""
    pending: tuple[tuple[str, str], ...] = ()
    code: FailureCode = "internal_error"
    phase: Literal["input", "guest", "bridge", "host"] = "guest"
    error: str = ""


def leg_envelope(run: Run, outcome: LegOutcome, host: CellHost, policy: ReplayPolicy) -> Envelope:
    """The envelope of a leg that ended with `outcome` (output ledger, budgets, retention)."""
    telemetry = host.telemetry()
    gate = run.cell.approvals
    approvals = [a.to_json() for a in gate.pending] if gate is not None else []
    replay_safe = policy.reports_replay_safe(run.restart_safe, run.cell.pending_requests())

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
        network_content=run.cell.bridge.network_derived,
    )


def failed_outcome(code: FailureCode, phase: FailurePhase, error: str) -> LegOutcome:
    """A failed outcome decided by the host (not by the guest)."""
    return LegOutcome(status="failed", code=code, phase=phase, error=error)
