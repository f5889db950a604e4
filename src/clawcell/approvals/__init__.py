"""Approvals and tool policy for nested calls: a cell that waits for a person, durably.

See `docs/approvals.md`. `ToolPolicy` and `Tool(..., approval=…)` decide which calls need a
decision; the gate keeps them undispatched until a person's `ApprovalAnswer` is recorded
(`CodeMode.decide`, `Agent.decide`); the decision ledger keeps decisions and the audit trail in
the session store.
"""

from __future__ import annotations

import typing

from .. import _lazy
from ._gate import Approvals, RunApprovals, gate_context
from ._ledger import DecisionLedger
from ._policy import ApprovalRule, ToolPolicy, Verdict, rule_reason
from ._types import ApprovalDecision, Decision, PendingApproval, PendingApprovalJson, Remember

if typing.TYPE_CHECKING:
    from ._answer import ApprovalAnswer

# A person's answer loads when one is first made: a process whose calls need none never does.
__getattr__ = _lazy.lazy_exports(__name__, {"_answer": ["ApprovalAnswer"]})

__all__ = [
    "ApprovalAnswer",
    "ApprovalDecision",
    "ApprovalRule",
    "Approvals",
    "Decision",
    "DecisionLedger",
    "PendingApproval",
    "PendingApprovalJson",
    "Remember",
    "RunApprovals",
    "ToolPolicy",
    "Verdict",
    "gate_context",
    "rule_reason",
]
