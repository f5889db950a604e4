"""The result envelope of `exec` and `wait` (spec §2.3): its wire shape and how a leg fills it.

Key order is part of the protocol: a model reads `JSON.stringify(details)`, so envelopes are
built as dicts in exactly the order the original produces. The `TypedDict`s below are that
shape; nothing else in clawcell spells the envelope's keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypeAlias, TypedDict, cast

from .._jsjson import dumps
from ._budget import ModelBudget
from ._fitting import JsonSource
from ._ledger import OutputLedger, Projection
from ._results import ResultsStore

if TYPE_CHECKING:
    from ._retention import RetentionMode

__all__ = [
    "CompletedEnvelope",
    "Envelope",
    "FailedEnvelope",
    "FailurePhase",
    "PendingToolCall",
    "WaitingEnvelope",
    "completed_envelope",
    "failed_envelope",
    "render",
    "settle_envelope",
    "waiting_envelope",
]

FailurePhase = Literal["input", "guest", "bridge", "host"]


class PendingToolCall(TypedDict):
    """One undelivered request of a waiting cell, as recorded: `bridge:<method>:<n>`."""

    id: str
    method: str


class CompletedEnvelope(TypedDict):
    status: Literal["completed"]
    replaySafe: bool
    telemetry: dict[str, Any]
    output: list[Any]
    value: Any
    warnings: NotRequired[list[str]]


class WaitingEnvelope(TypedDict):
    status: Literal["waiting"]
    runId: str
    reason: str
    pendingToolCalls: list[PendingToolCall]
    pendingApprovals: NotRequired[list[Any]]
    replaySafe: bool
    telemetry: dict[str, Any]
    output: list[Any]
    warnings: NotRequired[list[str]]


class FailedEnvelope(TypedDict):
    status: Literal["failed"]
    code: str
    failurePhase: FailurePhase
    bridgeDispatchStarted: bool
    replaySafe: bool
    telemetry: dict[str, Any]
    output: list[Any]
    error: str
    warnings: NotRequired[list[str]]


Envelope: TypeAlias = CompletedEnvelope | WaitingEnvelope | FailedEnvelope


def render(envelope: Any, *, telemetry: bool = True) -> str:
    """The model-facing text of an envelope: its compact JavaScript JSON.

    Envelopes of network-derived runs come back wrapped as untrusted content.
    `telemetry=False` leaves the `telemetry` object out of the text (it is most of what a
    model reads for a short cell); the envelope itself keeps it, and the budget that fits an
    envelope to the model's context still counts it.
    """
    plain = type(envelope) is dict  # the usual envelope: an `UntrustedEnvelope` is a subclass
    shown = envelope
    if not telemetry and isinstance(envelope, Mapping) and "telemetry" in envelope:
        items = cast(Mapping[str, Any], envelope).items()
        shown = {key: value for key, value in items if key != "telemetry"}
    text = dumps(shown)
    if plain:
        return text
    from ._untrusted import UntrustedEnvelope, wrap_untrusted  # (loaded by a marked one)

    return wrap_untrusted(text) if isinstance(envelope, UntrustedEnvelope) else text


def completed_envelope(
    p: Projection, *, replay_safe: bool, telemetry: dict[str, Any]
) -> CompletedEnvelope:
    return {
        "status": "completed",
        "replaySafe": replay_safe,
        "telemetry": telemetry,
        "output": p.output,
        "value": p.value,
    }


def waiting_envelope(
    p: Projection,
    *,
    run_id: str,
    reason: str,
    pending: tuple[tuple[str, str], ...],
    replay_safe: bool,
    telemetry: dict[str, Any],
    approvals: list[Any] | None = None,
) -> WaitingEnvelope:
    """A `waiting` envelope; `pendingApprovals` follows `pendingToolCalls` when calls wait
    for a person's decision (`clawcell.approvals`)."""
    envelope: WaitingEnvelope = {
        "status": "waiting",
        "runId": run_id,
        "reason": reason,
        "pendingToolCalls": [{"id": i, "method": m} for i, m in pending],
        "replaySafe": replay_safe,
        "telemetry": telemetry,
        "output": p.output,
    }
    if not approvals:
        return envelope
    ordered: dict[str, Any] = {}
    for key, value in envelope.items():
        ordered[key] = value
        if key == "pendingToolCalls":
            ordered["pendingApprovals"] = approvals
    return cast(WaitingEnvelope, ordered)


def failed_envelope(
    *,
    code: str,
    phase: FailurePhase,
    error: str,
    telemetry: dict[str, Any],
    output: list[Any] | None = None,
    bridge_dispatch_started: bool = False,
    replay_safe: bool = False,
) -> FailedEnvelope:
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
    build: Callable[[Projection], Envelope],
    *,
    ledger: OutputLedger,
    value_json: str | None,
    error: str | None,
    model_budget: ModelBudget | None,
    results: ResultsStore | None,
    retention: RetentionMode,
    network_content: bool = False,
) -> Envelope:
    """Project the cell's channels into the envelope `build` makes, and commit delivery.

    An oversized final object or array is saved in `results` and shown as its reference
    (§6.5); when it cannot be retained, the ordinary marker carries the reason instead.
    """
    if model_budget is None and error is None:
        whole = ledger.deliver_whole(value_json)  # most legs: nothing to cut, nothing to fit
        if whole is not None:
            return build(whole)
    value = None if value_json is None else JsonSource.capture(value_json)
    accept: Callable[[Projection], bool] | None = None
    if model_budget is not None:
        budget = model_budget
        accept = lambda p: budget.accepts(render(build(p)))  # noqa: E731 -- a one-line predicate
    projection = ledger.fit(value_json=value, error=error, accept=accept)
    if value is not None and projection.value_truncated:
        from ._retention import retain_final_value  # (only a cut value: most processes never)

        retained = retain_final_value(
            ledger, value, results, accept, mode=retention, network_content=network_content
        )
        projection = retained or projection
    ledger.commit(projection)
    return build(projection)
