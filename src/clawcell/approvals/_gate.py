"""The approval gate: a nested call that needs a person's decision waits here, undispatched.

`Approvals` belongs to one `CodeMode` (one session) and `RunApprovals` to one run. The bridge
runs each tool call with the run's gate in a context variable (`gate_context`); the catalog
asks the gate right before the tool would run (`check`). A call that needs approval is not
dispatched: its request stays pending, the gate counts it as *blocked* and wakes the cell, which
parks with `reason: "approval"` as soon as it can make no progress without a decision. The
decision is recorded in the session's `DecisionLedger` (durable with a durable store) and
delivered at the run's next leg (`deliver`): an approved call runs then, a denied or expired
one rejects into the cell with a catchable `approval_denied` error carrying the note.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import field
from types import MethodType
from typing import Any, Final, cast

from .._lazy import record_class
from .._random import random_uuid4_text
from ..errors import ApprovalDeniedError, ClawcellError
from ._ledger import DecisionLedger
from ._policy import ApprovalRule, ToolPolicy, rule_reason
from ._types import ApprovalDecision, Decision, PendingApproval

__all__ = [
    "INTERRUPTED_AFTER_APPROVAL",
    "RESTART_SAFE_APPROVAL",
    "Approvals",
    "RunApprovals",
    "gate_context",
]

INTERRUPTED_AFTER_APPROVAL = (
    "Code Mode tool call was approved and handed to its tool, then interrupted by a host "
    "restart; it was not run again and its effect is unknown. Check current state before "
    "retrying."
)
RESTART_SAFE_APPROVAL = (
    "restart-safe code mode cannot wait for approvals; call tools that need no approval, or "
    "run the cell without restartSafe."
)
gate_context: ContextVar[tuple[RunApprovals, str] | None] = ContextVar(
    "clawcell_approval_gate", default=None
)
"""The gate of the run, and the bridge request id, of the tool call being run."""


_NO_POLICY: Final = ToolPolicy()
"""The empty policy (frozen): one value for every session without a policy."""


class Approvals:
    """The approvals of one session: policy, remembered decisions, the ledger, live runs."""

    def __init__(
        self,
        *,
        policy: ToolPolicy | None,
        ledger: DecisionLedger,
        ttl_seconds: float,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.policy = policy or _NO_POLICY
        self.ledger = ledger
        self.ttl_seconds = ttl_seconds
        self.clock = clock or _wall_clock
        self.remembered: dict[str, Decision] = {}
        self._runs: dict[str, RunApprovals] = {}

    def run(self, run_id: str, *, restart_safe: bool = False) -> RunApprovals:
        """The gate of one run (created on first use)."""
        gate = self._runs.get(run_id)
        if gate is None:
            gate = self._runs[run_id] = RunApprovals(self, run_id, restart_safe=restart_safe)
        return gate

    def live(self, run_id: str) -> RunApprovals | None:
        return self._runs.get(run_id)

    def live_run_ids(self) -> list[str]:
        """The runs of this session with a gate in this process."""
        return list(self._runs)

    def forget(self, run_id: str) -> None:
        """The run ended: its undecided approvals go with it."""
        gate = self._runs.pop(run_id, None)
        if gate is not None:
            gate.cancel()

    async def remembered_for(self, tool: str) -> Decision | None:
        """The decision remembered for `tool` in this session: the ledger's (the store is the
        truth when several workers serve the session), else this process's."""
        decision = await self.ledger.remembered(tool)
        if decision is not None:
            self.remembered[tool] = decision
        return decision or self.remembered.get(tool)

    async def record(self, decision: ApprovalDecision) -> bool:
        """Record a decision (and remember it for the session when asked)."""
        recorded = await self.ledger.record(decision)
        if recorded and decision.remember == "session":
            self.remembered[decision.tool] = decision.decision
        gate = self._runs.get(decision.run_id)
        if recorded and gate is not None:
            gate.decided[decision.approval_id] = decision
            if gate.active:
                gate.resolve_decided()
        return recorded


@record_class
class _Waiting:
    """An approval a run waits for, and the future its decision resolves."""

    approval: PendingApproval
    future: asyncio.Future[ApprovalDecision]


@record_class
class RunApprovals:
    """The approvals of one run."""

    session: Approvals
    run_id: str
    restart_safe: bool = False
    active: bool = False
    """Whether a leg is running (decisions are then delivered at once)."""
    expires_at: float | None = None
    """When the parked run expires (wall clock), once it parked; decisions after it fail."""
    wake: Callable[[], None] | None = None
    decided: dict[str, ApprovalDecision] = field(default_factory=dict[str, ApprovalDecision])
    restored: dict[str, PendingApproval] = field(default_factory=dict[str, PendingApproval])
    """Approvals of a run revived from a record, by request id: asked again with the same id."""
    _waiting: dict[str, _Waiting] = field(default_factory=dict[str, _Waiting])

    def wake_weakly(self, method: Callable[[], None]) -> None:
        """Call the bound `method` (`wake`) when a call starts to wait for a decision, without
        keeping its object alive: the cell that owns this gate through its bridge would
        otherwise make every run a reference cycle, freed only by the cyclic collector.
        (A reference to the object and the plain function: what `weakref.WeakMethod` keeps,
        without building that class in Python for every cell.)"""
        bound = cast(MethodType, method)
        owner, function = weakref.ref(bound.__self__), bound.__func__

        def wake() -> None:
            live = owner()
            if live is not None:
                function(live)

        self.wake = wake

    @property
    def pending(self) -> list[PendingApproval]:
        """Approvals still waiting for a decision, oldest first."""
        return [w.approval for w in self._waiting.values()]

    @property
    def blocked(self) -> int:
        """Calls of this run waiting for a decision."""
        return sum(1 for w in self._waiting.values() if not w.future.done())

    def waives(self, rule: ApprovalRule, hook_reason: str | None) -> bool:
        """Whether a call certainly needs no decision, so `check` can be skipped (the common
        case: a tool that never asks, no hook asking, an empty policy, nothing remembered)."""
        session = self.session
        return (
            rule == "never"
            and hook_reason is None
            and not session.remembered
            and not (session.policy.allow or session.policy.deny or session.policy.ask)
        )

    async def check(
        self,
        request_id: str,
        tool: str,
        tool_input: Any,
        rule: ApprovalRule,
        hook_reason: str | None,
    ) -> None:
        """Return when the call may run; raise when it may not.

        Raises:
            ApprovalDeniedError: the policy, a person or expiry denied the call.
            ClawcellError: `invalid_input` for a restart-safe cell that would have to wait.
        """
        session = self.session
        verdict = session.policy.verdict(tool)
        if verdict == "deny":
            raise _denied(tool, "the session policy denies this tool")
        remembered = await session.remembered_for(tool) if verdict != "ask" else None
        if remembered == "deny":
            raise _denied(tool, "denied for the rest of this session")
        if remembered == "approve" or verdict == "allow":
            return
        reason = hook_reason or ("the session policy asks" if verdict == "ask" else None)
        reason = reason or rule_reason(rule, cast(dict[str, Any], tool_input))
        if reason is None:
            return
        if self.restart_safe:
            raise ClawcellError(RESTART_SAFE_APPROVAL, code="invalid_input")
        decision = await self._wait(request_id, tool, tool_input, reason)
        if decision.decision == "deny":
            raise _denied(tool, decision.note or "denied")
        await session.ledger.mark_dispatched(decision.approval_id)

    async def _wait(
        self, request_id: str, tool: str, tool_input: Any, reason: str
    ) -> ApprovalDecision:
        approval = self.restored.pop(request_id, None) or PendingApproval(
            id=f"ap_{random_uuid4_text()}",
            run_id=self.run_id,
            request_id=request_id,
            tool=tool,
            input=tool_input,
            reason=reason,
            requested_at=self.session.clock(),
        )
        known = await self.session.ledger.decision(approval.id)
        if known is not None and await self.session.ledger.dispatched(approval.id):
            raise ClawcellError(INTERRUPTED_AFTER_APPROVAL, code="tool_error")
        if known is not None:
            return known
        future = asyncio.get_running_loop().create_future()
        self._waiting[approval.id] = _Waiting(approval, future)
        if self.wake is not None:
            self.wake()
        try:
            return await future
        finally:
            self._waiting.pop(approval.id, None)

    @property
    def idle(self) -> bool:
        """No call of this run waits for a decision and none is held: `deliver` has nothing
        to do (most legs, which need no approval)."""
        return not self._waiting and not self.decided

    async def deliver(self) -> None:
        """At the start of a leg: deliver decisions (made here or in another process) and
        deny the approvals that expired."""
        now = self.session.clock()
        for waiting in list(self._waiting.values()):
            approval = waiting.approval
            if approval.id in self.decided:
                continue
            known = await self.session.ledger.decision(approval.id)
            if known is None and now - approval.requested_at >= self.session.ttl_seconds:
                expiry = _expiry(approval, now)
                # A person's decision recorded at the same moment wins over the expiry.
                recorded = await self.session.record(expiry)
                known = expiry if recorded else await self.session.ledger.decision(approval.id)
            if known is not None:
                self.decided[approval.id] = known
        self.resolve_decided()

    def resolve_decided(self) -> None:
        for approval_id, decision in list(self.decided.items()):
            waiting = self._waiting.get(approval_id)
            if waiting is not None and not waiting.future.done():
                waiting.future.set_result(decision)
            self.decided.pop(approval_id, None)

    def cancel(self) -> None:
        for waiting in self._waiting.values():
            waiting.future.cancel()
        self._waiting.clear()


def _wall_clock() -> float:
    return time.time()


def _denied(tool: str, why: str) -> ApprovalDeniedError:
    return ApprovalDeniedError(f'Tool "{tool}" was not approved: {why}.')


def _expiry(approval: PendingApproval, now: float) -> ApprovalDecision:
    return ApprovalDecision(
        approval_id=approval.id,
        run_id=approval.run_id,
        tool=approval.tool,
        decision="deny",
        note="the approval expired before anyone decided",
        by="expiry",
        decided_at=now,
        reason="ttl",
    )
