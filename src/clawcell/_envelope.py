"""The result envelope of `exec` and `wait` (spec §2.3), fitted to the output budget.

Key order is part of the protocol: a model reads `JSON.stringify(details)`, so envelopes are
built as dicts in exactly the order the original produces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._cell import LegOutcome
from ._jsjson import dumps
from ._output import JsonSource, ModelBudget, OutputLedger, Projection, ReferenceValue
from ._results import (
    ResultReference,
    ResultsStore,
    minimal_reference_marker_bytes,
    reference_marker,
    reference_marker_bytes,
    retain_oversized_value,
)
from ._untrusted import UntrustedEnvelope, wrap_untrusted

__all__ = ["failed_envelope", "render", "settle_envelope"]


def render(envelope: dict[str, Any]) -> str:
    """The model-facing text of an envelope: its compact JavaScript JSON.

    Envelopes of network-derived runs (MCP) come back wrapped as untrusted content.
    """
    text = dumps(envelope)
    return wrap_untrusted(text) if isinstance(envelope, UntrustedEnvelope) else text


def _completed(p: Projection, replay_safe: bool, telemetry: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": "completed",
        "replaySafe": replay_safe,
        "telemetry": telemetry,
        "output": p.output,
        "value": p.value,
    }


def _waiting(
    outcome: LegOutcome,
    run_id: str,
    p: Projection,
    replay_safe: bool,
    telemetry: dict[str, Any],
) -> dict[str, Any]:
    return {
        "status": "waiting",
        "runId": run_id,
        "reason": outcome.reason,
        "pendingToolCalls": [{"id": i, "method": m} for i, m in outcome.pending],
        "replaySafe": replay_safe,
        "telemetry": telemetry,
        "output": p.output,
    }


def failed_envelope(
    *,
    code: str,
    phase: str,
    error: str,
    telemetry: dict[str, Any],
    output: list[Any] | None = None,
    bridge_dispatch_started: bool = False,
    replay_safe: bool = False,
) -> dict[str, Any]:
    """A `failed` envelope (error assumed already bounded)."""
    return {
        "status": "failed",
        "code": code,
        "failurePhase": phase,
        "bridgeDispatchStarted": bridge_dispatch_started,
        "replaySafe": replay_safe,
        "telemetry": telemetry,
        "output": [] if output is None else output,
        "error": error,
    }


def settle_envelope(
    outcome: LegOutcome,
    *,
    ledger: OutputLedger,
    run_id: str,
    telemetry: dict[str, Any],
    bridge_dispatch_started: bool,
    model_budget: ModelBudget | None,
    results: ResultsStore | None = None,
    replay_safe: bool = False,
) -> dict[str, Any]:
    """Project the cell's channels into the envelope for `outcome` and commit delivery.

    An oversized final object or array is saved in `results` and shown as its reference
    (§6.5); when it cannot be retained, the ordinary marker carries the reason instead.
    """
    completed = outcome.status == "completed"
    value = JsonSource.capture(outcome.value_json or "null") if completed else None
    error = outcome.error if outcome.status == "failed" else None

    def build(p: Projection) -> dict[str, Any]:
        if completed:
            return _completed(p, replay_safe, telemetry)
        if outcome.status == "waiting":
            return _waiting(outcome, run_id, p, replay_safe, telemetry)
        return failed_envelope(
            code=outcome.code,
            phase=outcome.phase,
            error=p.error or "",
            telemetry=telemetry,
            output=p.output,
            bridge_dispatch_started=bridge_dispatch_started,
            replay_safe=replay_safe,
        )

    accept: Callable[[Projection], bool] | None = None
    if model_budget is not None:
        budget = model_budget
        accept = lambda p: budget.accepts(render(build(p)))  # noqa: E731 -- a one-line predicate
    projection = ledger.fit(value_json=value, error=error, accept=accept)
    if value is not None and projection.value_truncated:
        projection = _retain(ledger, value, results, accept) or projection
    ledger.commit(projection)
    return build(projection)


def _retain(
    ledger: OutputLedger,
    value: JsonSource,
    results: ResultsStore | None,
    accept: Callable[[Projection], bool] | None,
) -> Projection | None:
    """Auto-save an oversized final value: its reference projection, or the ordinary
    marker with the non-retention reason, or `None` to keep the projection as it was."""
    shown: list[Projection] = []

    def deliver(reference: ResultReference) -> bool:
        offered = ReferenceValue(
            original_bytes=reference_marker_bytes(reference),
            minimal_bytes=minimal_reference_marker_bytes(reference),
            render=lambda allowance: reference_marker(reference, allowance),
        )
        candidate = ledger.fit(value_json=offered, accept=accept)
        if candidate.value_truncated:
            return False
        shown.append(candidate)
        return True

    decision = retain_oversized_value(results, value, deliver)
    if decision is None:
        return None
    if not isinstance(decision, str):
        return shown[0]
    return ledger.fit(value_json=value, accept=accept, value_guidance=decision)
